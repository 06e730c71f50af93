# attn-isa.cmake: the usage requirements of attn.h on an INTERFACE target, shared by
# CMakeLists.txt (add_subdirectory) and attnConfig.cmake (find_package).
#   simd: auto (or empty)  no flag: on x86-64 (gcc, clang) the header compiles every x86
#                          path and picks one per call at run time; NEON on AArch64
#         dispatch         the same, said explicitly (ATTN_DISPATCH)
#         avx512           -mavx512f -mavx2 -mfma -mf16c on every file of the target
#         avx2             -mavx2 -mfma -mf16c on every file of the target
#         neon             nothing (AArch64 compilers enable NEON)
#         scalar           ATTN_NO_SIMD
# the same choices as meson's simd option. The header picks its path from the compiler's
# macros (__AVX512F__, __AVX2__ and __FMA__, __aarch64__; __F16C__ for the vector f16
# conversions); these flags only turn them on.
function(attn_isa_options target simd)
  if(simd STREQUAL "" OR simd STREQUAL "auto")
    set(simd auto)
  endif()
  if(simd STREQUAL "avx2" OR simd STREQUAL "avx512")
    if(MSVC)
      message(WARNING "attn: ATTN_SIMD=${simd} needs the gcc/clang flags; with MSVC this "
                      "build gets the scalar path")
    elseif(simd STREQUAL "avx512")
      target_compile_options(${target} INTERFACE -mavx512f -mavx2 -mfma -mf16c)
    else()
      target_compile_options(${target} INTERFACE -mavx2 -mfma -mf16c)
    endif()
  elseif(simd STREQUAL "dispatch")
    target_compile_definitions(${target} INTERFACE ATTN_DISPATCH)
  elseif(simd STREQUAL "scalar")
    target_compile_definitions(${target} INTERFACE ATTN_NO_SIMD)
  elseif(NOT simd STREQUAL "neon" AND NOT simd STREQUAL "auto")
    message(FATAL_ERROR
            "attn: ATTN_SIMD must be auto, dispatch, avx512, avx2, neon or scalar (got '${simd}')")
  endif()
  if(NOT MSVC)
    target_link_libraries(${target} INTERFACE m)
  endif()
endfunction()
