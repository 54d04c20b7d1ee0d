// odeint: the Boost.odeint peer driver of gradsolve's work-precision
// benchmarks (bench/README.md). It integrates one of the benchmark's
// ensembles one trajectory after another on one core, timing the
// integration alone, with the method named on the command line:
//
//   dopri5             runge_kutta_dopri5 under dense-output control (the
//                      configuration odeint's documentation recommends for
//                      adaptive integration; the default)
//   dopri5-controlled  runge_kutta_dopri5 under the controlled stepper
//   rkf78              runge_kutta_fehlberg78 under the controlled stepper
//                      (it has no dense output)
//   rosenbrock4        rosenbrock4 under dense-output control, with the
//                      analytic Jacobian (Robertson only; its default)
//   rosenbrock4-controlled  rosenbrock4 under the controlled stepper
//
// The explicit methods serve lorenz, orbit (the halo orbit) and halo (the
// orbit with sensitivities to (vc, q), integrated as the augmented
// system, state and sensitivities all under error control); the
// Rosenbrock ones serve robertson.
//
// usage: odeint lorenz|robertson|halo|orbit [METHOD] RTOL ATOL N OUT
//   writes the N final states to OUT (float64, little-endian, row-major;
//   for halo per trajectory the 6 final states, then the 6×2
//   sensitivities ∂y_d/∂p_c row-major) and prints
//   "seconds_per_trajectory steps_per_trajectory" on stdout.
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

// The halo orbit with its sensitivities to (vc, q) (bench/README.md):
// y = (x, y, z, vx, vy, vz), S[d][c] at y[6 + 2d + c]. With
// D = rc² + x² + y² + z²/q², g = (x, y, z/q²), c = vc²/D, the
// acceleration is a = −c·g, ∂a_i/∂x_j = −c·ω_i·δ_ij + 2(c/D)·g_i·g_j
// (ω = (1, 1, 1/q²)), ∂a_i/∂vc = −(2vc/D)·g_i and
// ∂a_i/∂q = −(2c·z²/(q³D))·g_i + δ_iz·2c·z/q³.
typedef std::array<double, 18> state18;

// halo_orbit writes the orbit's right-hand side (the first six
// components) from y into dy and returns g, D and c.
static void halo_orbit(double vc, double q, double rc, const double *y, double *dy, double g[3], double &D, double &c) {
    double q2 = q * q, z = y[2];
    g[0] = y[0], g[1] = y[1], g[2] = z / q2;
    D = rc * rc + y[0] * y[0] + y[1] * y[1] + z * g[2];
    c = vc * vc / D;
    for (int i = 0; i < 3; i++) {
        dy[i] = y[3 + i];
        dy[3 + i] = -c * g[i];
    }
}

struct halo {
    double vc, q, rc;
    void operator()(const state18 &y, state18 &dy, double) const {
        double q2 = q * q, z = y[2];
        double g[3], D, c;
        halo_orbit(vc, q, rc, y.data(), dy.data(), g, D, c);
        double w[3] = {1, 1, 1 / q2};
        double dq = 2 * c * z * z / (q2 * q * D);
        for (int col = 0; col < 2; col++) {
            // Position rows: d(S_x)/dt = S_v.
            for (int i = 0; i < 3; i++) dy[6 + 2 * i + col] = y[6 + 2 * (3 + i) + col];
            double gs = 0; // g·S_x
            for (int j = 0; j < 3; j++) gs += g[j] * y[6 + 2 * j + col];
            for (int i = 0; i < 3; i++) {
                double jv = -c * w[i] * y[6 + 2 * i + col] + 2 * (c / D) * g[i] * gs;
                double jp = col == 0 ? -(2 * vc / D) * g[i] : -dq * g[i] + (i == 2 ? 2 * c * z / (q2 * q) : 0);
                dy[6 + 2 * (3 + i) + col] = jv + jp;
            }
        }
    }
};

// The halo orbit alone (the "orbit" ensemble).
typedef std::array<double, 6> state6;

struct halo6 {
    double vc, q, rc;
    void operator()(const state6 &y, state6 &dy, double) const {
        double g[3], D, c;
        halo_orbit(vc, q, rc, y.data(), dy.data(), g, D, c);
    }
};

// explicit_run integrates y from 0 to t1 with the explicit method named
// by method, adding the steps taken and the time to steps and seconds; it
// returns false for a method it does not know.
template <class State, class F>
bool explicit_run(const std::string &method, double rtol, double atol, F f, State &y, double t1, double h0,
                  long &steps, double &seconds) {
    auto t0 = std::chrono::steady_clock::now();
    // integrate_adaptive returns the number of steps taken.
    if (method == "dopri5") {
        auto st = odeint::make_dense_output(atol, rtol, odeint::runge_kutta_dopri5<State>());
        steps += (long)odeint::integrate_adaptive(st, f, y, 0.0, t1, h0);
    } else if (method == "dopri5-controlled") {
        auto st = odeint::make_controlled(atol, rtol, odeint::runge_kutta_dopri5<State>());
        steps += (long)odeint::integrate_adaptive(st, f, y, 0.0, t1, h0);
    } else if (method == "rkf78") {
        auto st = odeint::make_controlled(atol, rtol, odeint::runge_kutta_fehlberg78<State>());
        steps += (long)odeint::integrate_adaptive(st, f, y, 0.0, t1, h0);
    } else {
        return false;
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return true;
}

int main(int argc, char **argv) {
    std::string prob = argc == 6 || argc == 7 ? argv[1] : "";
    if (prob != "lorenz" && prob != "robertson" && prob != "halo" && prob != "orbit") {
        std::fprintf(stderr, "usage: odeint lorenz|robertson|halo|orbit [METHOD] RTOL ATOL N OUT\n");
        return 2;
    }
    std::string method = argc == 7 ? argv[2] : prob == "robertson" ? "rosenbrock4" : "dopri5";
    char **arg = argv + (argc == 7 ? 3 : 2);
    double rtol = std::atof(arg[0]), atol = std::atof(arg[1]);
    int n = std::atoi(arg[2]);
    const char *outPath = arg[3];
    if (n < 1 || !(rtol > 0) || !(atol > 0)) {
        std::fprintf(stderr, "odeint: need N >= 1 and positive tolerances\n");
        return 2;
    }
    bool stiff = method == "rosenbrock4" || method == "rosenbrock4-controlled";
    bool known = stiff || method == "dopri5" || method == "dopri5-controlled" || method == "rkf78";
    if (!known || stiff != (prob == "robertson")) {
        std::fprintf(stderr, "odeint: method %s does not serve %s (explicit: dopri5, dopri5-controlled, rkf78; "
                             "robertson: rosenbrock4, rosenbrock4-controlled)\n", method.c_str(), prob.c_str());
        return 2;
    }
    size_t width = prob == "halo" ? 18 : prob == "orbit" ? 6 : 3;
    std::vector<double> out(width * (size_t)n);
    long steps = 0;
    double seconds = 0;
    for (int i = 0; i < n && prob == "robertson"; i++) {
        // The benchmark's ensemble: k1 evenly from 0.02 to 0.06 (bench/README.md).
        double k1 = n == 1 ? 0.02 : 0.02 + 0.04 * i / (n - 1);
        robertson f{k1, 3e7, 1e4};
        robertson_jac jac{k1, 3e7, 1e4};
        ublas::vector<double> y(3);
        y[0] = 1, y[1] = 0, y[2] = 0;
        auto t0 = std::chrono::steady_clock::now();
        if (method == "rosenbrock4") {
            auto stepper = odeint::make_dense_output(atol, rtol, odeint::rosenbrock4<double>());
            steps += (long)odeint::integrate_adaptive(stepper, std::make_pair(f, jac), y, 0.0, 1e5, 1e-6);
        } else {
            auto stepper = odeint::make_controlled(atol, rtol, odeint::rosenbrock4<double>());
            steps += (long)odeint::integrate_adaptive(stepper, std::make_pair(f, jac), y, 0.0, 1e5, 1e-6);
        }
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        for (int d = 0; d < 3; d++) out[3 * (size_t)i + d] = y[d];
    }
    for (int i = 0; i < n && prob == "halo"; i++) {
        // The benchmark's ensemble: x0 from 0.5 to 1.5, vy0 from 0.5 to 0.7.
        double u = n == 1 ? 0 : (double)i / (n - 1);
        halo f{1, 0.7, 0.2};
        state18 y{};
        y[0] = 0.5 + u, y[2] = 0.2, y[3] = 0.1, y[4] = 0.5 + 0.2 * u, y[5] = 0.15;
        explicit_run(method, rtol, atol, f, y, 20.0, 1e-3, steps, seconds);
        std::memcpy(&out[18 * (size_t)i], y.data(), 18 * sizeof(double));
    }
    for (int i = 0; i < n && prob == "orbit"; i++) {
        // The same ensemble as halo, without sensitivities.
        double u = n == 1 ? 0 : (double)i / (n - 1);
        halo6 f{1, 0.7, 0.2};
        state6 y{0.5 + u, 0, 0.2, 0.1, 0.5 + 0.2 * u, 0.15};
        explicit_run(method, rtol, atol, f, y, 20.0, 1e-3, steps, seconds);
        std::memcpy(&out[6 * (size_t)i], y.data(), 6 * sizeof(double));
    }
    for (int i = 0; i < n && prob == "lorenz"; i++) {
        // The benchmark's ensemble: rho evenly from 10 to 24 (bench/README.md).
        double rho = n == 1 ? 10 : 10 + 14.0 * i / (n - 1);
        lorenz f{10, rho, 8.0 / 3};
        state3 y{1, 0, 0};
        explicit_run(method, rtol, atol, f, y, 10.0, 1e-3, steps, seconds);
        std::memcpy(&out[3 * (size_t)i], y.data(), 3 * sizeof(double));
    }
    FILE *fp = std::fopen(outPath, "wb");
    if (!fp || std::fwrite(out.data(), sizeof(double), out.size(), fp) != out.size() || std::fclose(fp) != 0) {
        std::fprintf(stderr, "odeint: cannot write %s\n", outPath);
        return 1;
    }
    std::printf("%.9g %.6g\n", seconds / n, (double)steps / n);
    return 0;
}
