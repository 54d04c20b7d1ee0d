"""scipy: the scipy.integrate.solve_ivp peer driver of gradsolve's
work-precision benchmarks (bench/README.md). It integrates the
benchmark's Lorenz ensemble one trajectory after another with the
method given (RK45, DOP853 or LSODA), timing solve_ivp alone.

usage: python3 scipy_ivp.py lorenz METHOD RTOL ATOL N OUT
  writes the N×3 final states to OUT (float64, little-endian, row-major)
  and prints "seconds_per_trajectory steps_per_trajectory" on stdout.
"""
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp


def main(argv):
    if len(argv) != 7 or argv[1] != "lorenz":
        sys.exit("usage: scipy_ivp.py lorenz METHOD RTOL ATOL N OUT")
    method, rtol, atol, n, out = argv[2], float(argv[3]), float(argv[4]), int(argv[5]), argv[6]
    ys = np.empty((n, 3))
    seconds = 0.0
    evals = 0
    for i in range(n):
        # The benchmark's ensemble: rho evenly from 10 to 24 (bench/README.md).
        rho = 10.0 if n == 1 else 10 + 14.0 * i / (n - 1)
        sigma, beta = 10.0, 8.0 / 3

        def f(t, y):
            return [sigma * (y[1] - y[0]), y[0] * (rho - y[2]) - y[1], y[0] * y[1] - beta * y[2]]

        t0 = time.perf_counter()
        sol = solve_ivp(f, (0.0, 10.0), [1.0, 0.0, 0.0], method=method, rtol=rtol, atol=atol)
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
