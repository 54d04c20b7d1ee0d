// odeint: the Boost.odeint peer driver of gradsolve's work-precision
// benchmarks (bench/README.md). It integrates the benchmark's Lorenz
// ensemble one trajectory after another on one core with
// runge_kutta_dopri5 under dense-output control (the configuration
// odeint's documentation recommends for adaptive integration), and the
// Robertson ensemble with rosenbrock4 under dense-output control and an
// analytic Jacobian, timing the integration alone.
//
// usage: odeint lorenz|robertson RTOL ATOL N OUT
//   writes the N×3 final states to OUT (float64, little-endian, row-major)
//   and prints "seconds_per_trajectory steps_per_trajectory" on stdout.
#include <boost/numeric/odeint.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace odeint = boost::numeric::odeint;
namespace ublas = boost::numeric::ublas;
typedef std::array<double, 3> state3;

struct lorenz {
    double sigma, rho, beta;
    void operator()(const state3 &y, state3 &dy, double) const {
        dy[0] = sigma * (y[1] - y[0]);
        dy[1] = y[0] * (rho - y[2]) - y[1];
        dy[2] = y[0] * y[1] - beta * y[2];
    }
};

// Robertson's reaction: y1' = -k1 y1 + k3 y2 y3, y2' = k1 y1 - k3 y2 y3 -
// k2 y2², y3' = k2 y2², in the vector and matrix types rosenbrock4 uses.
struct robertson {
    double k1, k2, k3;
    void operator()(const ublas::vector<double> &y, ublas::vector<double> &dy, double) const {
        dy[0] = -k1 * y[0] + k3 * y[1] * y[2];
        dy[1] = k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] * y[1];
        dy[2] = k2 * y[1] * y[1];
    }
};

struct robertson_jac {
    double k1, k2, k3;
    void operator()(const ublas::vector<double> &y, ublas::matrix<double> &J, double, ublas::vector<double> &dfdt) const {
        J(0, 0) = -k1, J(0, 1) = k3 * y[2], J(0, 2) = k3 * y[1];
        J(1, 0) = k1, J(1, 1) = -k3 * y[2] - 2 * k2 * y[1], J(1, 2) = -k3 * y[1];
        J(2, 0) = 0, J(2, 1) = 2 * k2 * y[1], J(2, 2) = 0;
        dfdt[0] = dfdt[1] = dfdt[2] = 0;
    }
};

int main(int argc, char **argv) {
    std::string prob = argc == 6 ? argv[1] : "";
    if (prob != "lorenz" && prob != "robertson") {
        std::fprintf(stderr, "usage: odeint lorenz|robertson RTOL ATOL N OUT\n");
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
    for (int i = 0; i < n && prob == "robertson"; i++) {
        // The benchmark's ensemble: k1 evenly from 0.02 to 0.06 (bench/README.md).
        double k1 = n == 1 ? 0.02 : 0.02 + 0.04 * i / (n - 1);
        robertson f{k1, 3e7, 1e4};
        robertson_jac jac{k1, 3e7, 1e4};
        ublas::vector<double> y(3);
        y[0] = 1, y[1] = 0, y[2] = 0;
        auto stepper = odeint::make_dense_output(atol, rtol, odeint::rosenbrock4<double>());
        auto t0 = std::chrono::steady_clock::now();
        steps += (long)odeint::integrate_adaptive(stepper, std::make_pair(f, jac), y, 0.0, 1e5, 1e-6);
        auto t1 = std::chrono::steady_clock::now();
        seconds += std::chrono::duration<double>(t1 - t0).count();
        for (int d = 0; d < 3; d++) out[3 * (size_t)i + d] = y[d];
    }
    for (int i = 0; i < n && prob == "lorenz"; i++) {
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
