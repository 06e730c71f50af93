# attn-isa.cmake: the usage requirements of attn.h on an INTERFACE target, shared by
# CMakeLists.txt (add_subdirectory) and attnConfig.cmake (find_package).
#   simd: auto (or empty)  -mavx2 -mfma on x86-64 (NEON is on by default on AArch64)
#         avx2             -mavx2 -mfma
#         neon             nothing (AArch64 compilers enable NEON)
#         scalar           ATTN_NO_SIMD
# the same choices as meson's simd option. The header picks its path from the compiler's
# macros (__AVX2__ and __FMA__, __aarch64__); these flags only turn them on.
function(attn_isa_options target simd)
  if(simd STREQUAL "" OR simd STREQUAL "auto")
    if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|x64)$" AND NOT MSVC)
      set(simd avx2)
    else()
      set(simd neon)
    endif()
  endif()
  if(simd STREQUAL "avx2")
    if(MSVC)
      message(WARNING "attn: ATTN_SIMD=avx2 needs __AVX2__ and __FMA__, which MSVC does not "
                      "define; this build gets the scalar path")
    else()
      target_compile_options(${target} INTERFACE -mavx2 -mfma)
    endif()
  elseif(simd STREQUAL "scalar")
    target_compile_definitions(${target} INTERFACE ATTN_NO_SIMD)
  elseif(NOT simd STREQUAL "neon")
    message(FATAL_ERROR "attn: ATTN_SIMD must be auto, avx2, neon or scalar (got '${simd}')")
  endif()
  if(NOT MSVC)
    target_link_libraries(${target} INTERFACE m)
  endif()
endfunction()
