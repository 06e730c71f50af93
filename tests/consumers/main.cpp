// The C++17 consumer of attn.h (tests/consumers/run.sh): the implementation compiled in a
// C++17 translation unit, called the way C++ code would. Usage as main.c's.
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

static_assert(std::is_same_v<decltype(attn_softmax(nullptr, 0, nullptr, 0, 0, 0, 0.0f)),
                             attn_status>);

int main(int argc, char **argv)
{
    constexpr std::size_t n = 11;
    std::array<float, n> x{};
    std::vector<float> y(n);
    for (std::size_t i = 0; i < n; i++) x[i] = 0.75f * static_cast<float>(i) - 3.0f;
    if (auto st = attn_softmax(x.data(), n, y.data(), n, 1, n, 1.0f); st != ATTN_OK) {
        std::printf("attn_softmax: %s\n", attn_status_string(st));
        return 1;
    }
    auto w = [&](std::size_t i) { return std::exp(double(x[i]) - double(x[n - 1])); };
    double sum = 0.0, err = 0.0;
    bool bad = false;
    for (std::size_t i = 0; i < n; i++) sum += w(i);
    for (std::size_t i = 0; i < n; i++) {
        double e = std::fabs(double(y[i]) - w(i) / sum) / (w(i) / sum);
        if (!(e <= 1e-6)) bad = true; // NaN too
        err = std::max(err, e);
    }
    if (!(std::fabs(std::accumulate(y.begin(), y.end(), 0.0) - 1.0) <= 1e-6)) bad = true;
    const char *want_isa = argc > 1 ? argv[1] : "-", *want_exp = argc > 2 ? argv[2] : "-";
    if (std::strcmp(want_isa, "-") != 0 && std::strcmp(want_isa, attn_isa()) != 0) bad = true;
    if (std::strcmp(want_exp, "-") != 0 && std::strcmp(want_exp, attn_exp_impl()) != 0) bad = true;
    std::printf("attn %d.%d.%d isa=%s exp=%s softmax err %.1e (want isa=%s exp=%s): %s\n",
                ATTN_VERSION_MAJOR, ATTN_VERSION_MINOR, ATTN_VERSION_PATCH, attn_isa(),
                attn_exp_impl(), err, want_isa, want_exp, bad ? "WRONG" : "ok");
    return bad ? 1 : 0;
}
