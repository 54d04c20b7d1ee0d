// odeint: the Boost.odeint peer driver of gradsolve's work-precision
// benchmarks (bench/README.md). It integrates the benchmark's Lorenz
// ensemble one trajectory after another on one core with
// runge_kutta_dopri5 under dense-output control (the configuration
// odeint's documentation recommends for adaptive integration), timing
// the integration alone.
//
// usage: odeint lorenz RTOL ATOL N OUT
//   writes the N×3 final states to OUT (float64, little-endian, row-major)
//   and prints "seconds_per_trajectory steps_per_trajectory" on stdout.
#include <boost/numeric/odeint.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace odeint = boost::numeric::odeint;
typedef std::array<double, 3> state3;

struct lorenz {
    double sigma, rho, beta;
    void operator()(const state3 &y, state3 &dy, double) const {
        dy[0] = sigma * (y[1] - y[0]);
        dy[1] = y[0] * (rho - y[2]) - y[1];
        dy[2] = y[0] * y[1] - beta * y[2];
    }
};

int main(int argc, char **argv) {
    if (argc != 6 || std::strcmp(argv[1], "lorenz") != 0) {
        std::fprintf(stderr, "usage: odeint lorenz RTOL ATOL N OUT\n");
        return 2;
    }
    double rtol = std::atof(argv[2]), atol = std::atof(argv[3]);
    int n = std::atoi(argv[4]);
    if (n < 1 || !(rtol > 0) || !(atol > 0)) {
        std::fprintf(stderr, "odeint: need N >= 1 and positive tolerances\n");
        return 2;
    }
    std::vector<double> out(3 * (size_t)n);
    long steps = 0;
    double seconds = 0;
    for (int i = 0; i < n; i++) {
        // The benchmark's ensemble: rho evenly from 10 to 24 (bench/README.md).
        double rho = n == 1 ? 10 : 10 + 14.0 * i / (n - 1);
        lorenz f{10, rho, 8.0 / 3};
        state3 y{1, 0, 0};
        auto stepper = odeint::make_dense_output(atol, rtol, odeint::runge_kutta_dopri5<state3>());
        auto t0 = std::chrono::steady_clock::now();
        // integrate_adaptive returns the number of steps taken.
        steps += (long)odeint::integrate_adaptive(stepper, f, y, 0.0, 10.0, 1e-3);
        auto t1 = std::chrono::steady_clock::now();
        seconds += std::chrono::duration<double>(t1 - t0).count();
        std::memcpy(&out[3 * (size_t)i], y.data(), 3 * sizeof(double));
    }
    FILE *fp = std::fopen(argv[5], "wb");
    if (!fp || std::fwrite(out.data(), sizeof(double), out.size(), fp) != out.size() || std::fclose(fp) != 0) {
        std::fprintf(stderr, "odeint: cannot write %s\n", argv[5]);
        return 1;
    }
    std::printf("%.9g %.6g\n", seconds / n, (double)steps / n);
    return 0;
}
