"""scipy: the scipy.integrate.solve_ivp peer driver of gradsolve's
work-precision benchmarks (bench/README.md). It integrates the
benchmark's Lorenz, Robertson or halo-orbit ensemble one trajectory after another
with the method given (RK45, DOP853, LSODA, Radau, BDF; the implicit
ones get the analytic Jacobian), timing solve_ivp alone.

usage: python3 scipy_ivp.py lorenz|robertson|orbit METHOD RTOL ATOL N OUT
  writes the N×dim final states to OUT (float64, little-endian, row-major)
  and prints "seconds_per_trajectory steps_per_trajectory" on stdout.
"""
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp


def lorenz(i, n):
    """Lorenz with rho evenly from 10 to 24 (bench/README.md)."""
    rho = 10.0 if n == 1 else 10 + 14.0 * i / (n - 1)
    sigma, beta = 10.0, 8.0 / 3

    def f(t, y):
        return [sigma * (y[1] - y[0]), y[0] * (rho - y[2]) - y[1], y[0] * y[1] - beta * y[2]]

    def jac(t, y):
        return [[-sigma, sigma, 0.0], [rho - y[2], -1.0, -y[0]], [y[1], y[0], -beta]]

    return f, jac, 10.0


def robertson(i, n):
    """Robertson with k1 evenly from 0.02 to 0.06 (bench/README.md)."""
    k1 = 0.02 if n == 1 else 0.02 + 0.04 * i / (n - 1)
    k2, k3 = 3e7, 1e4

    def f(t, y):
        return [-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k3 * y[1] * y[2] - k2 * y[1] ** 2, k2 * y[1] ** 2]

    def jac(t, y):
        return [[-k1, k3 * y[2], k3 * y[1]], [k1, -k3 * y[2] - 2 * k2 * y[1], -k3 * y[1]], [0.0, 2 * k2 * y[1], 0.0]]

    return f, jac, 1e5


def orbit(i, n):
    """The halo orbit ensemble (bench/README.md): x0 from 0.5 to 1.5,
    vy0 from 0.5 to 0.7, vc = 1, q = 0.7, rc = 0.2."""
    u = 0.0 if n == 1 else i / (n - 1)
    vc, q, rc = 1.0, 0.7, 0.2
    q2 = q * q

    def f(t, y):
        gz = y[2] / q2
        c = vc * vc / (rc * rc + y[0] * y[0] + y[1] * y[1] + y[2] * gz)
        return [y[3], y[4], y[5], -c * y[0], -c * y[1], -c * gz]

    return f, None, 20.0, [0.5 + u, 0.0, 0.2, 0.1, 0.5 + 0.2 * u, 0.15]


def main(argv):
    problems = {"lorenz": lorenz, "robertson": robertson, "orbit": orbit}
    if len(argv) != 7 or argv[1] not in problems:
        sys.exit("usage: scipy_ivp.py lorenz|robertson|orbit METHOD RTOL ATOL N OUT")
    method, rtol, atol, n, out = argv[2], float(argv[3]), float(argv[4]), int(argv[5]), argv[6]
    ys = None
    seconds = 0.0
    evals = 0
    for i in range(n):
        f, jac, t1, *y0 = problems[argv[1]](i, n)
        y0 = y0[0] if y0 else [1.0, 0.0, 0.0]
        if ys is None:
            ys = np.empty((n, len(y0)))
        kw = {"jac": jac} if jac is not None and method in ("Radau", "BDF", "LSODA") else {}
        t0 = time.perf_counter()
        sol = solve_ivp(f, (0.0, t1), y0, method=method, rtol=rtol, atol=atol, **kw)
        seconds += time.perf_counter() - t0
        if sol.status != 0:
            sys.exit(f"scipy: trajectory {i}: {sol.message}")
        ys[i] = sol.y[:, -1]
        evals += sol.nfev
    ys.astype("<f8").tofile(out)
    # solve_ivp reports right-hand-side evaluations, not steps: the
    # second figure is evaluations per trajectory.
    print(f"{seconds / n:.9g} {evals / n:.6g}")


if __name__ == "__main__":
    main(sys.argv)
