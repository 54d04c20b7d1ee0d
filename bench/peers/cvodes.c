/* cvodes: the SUNDIALS CVODES peer driver of gradsolve's work-precision
 * benchmarks (bench/README.md). It integrates the benchmark's Lorenz
 * ensemble one trajectory after another on one core with CVODES's Adams
 * method and its fixed-point nonlinear solver (SUNDIALS' choice for
 * nonstiff problems), re-initialising one solver for each trajectory
 * and timing CVodeReInit and CVode alone.
 *
 * usage: cvodes lorenz RTOL ATOL N OUT
 *   writes the N×3 final states to OUT (float64, little-endian, row-major)
 *   and prints "seconds_per_trajectory steps_per_trajectory" on stdout. */
#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { double sigma, rho, beta; } lorenz;

static int lorenz_f(sunrealtype t, N_Vector yv, N_Vector dyv, void *user) {
    const lorenz *p = user;
    const double *y = N_VGetArrayPointer(yv);
    double *dy = N_VGetArrayPointer(dyv);
    (void)t;
    dy[0] = p->sigma * (y[1] - y[0]);
    dy[1] = y[0] * (p->rho - y[2]) - y[1];
    dy[2] = y[0] * y[1] - p->beta * y[2];
    return 0;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int check(int flag, const char *what) {
    if (flag < 0) {
        fprintf(stderr, "cvodes: %s failed with flag %d\n", what, flag);
        exit(1);
    }
    return flag;
}

int main(int argc, char **argv) {
    if (argc != 6 || strcmp(argv[1], "lorenz") != 0) {
        fprintf(stderr, "usage: cvodes lorenz RTOL ATOL N OUT\n");
        return 2;
    }
    double rtol = atof(argv[2]), atol = atof(argv[3]);
    int n = atoi(argv[4]);
    if (n < 1 || !(rtol > 0) || !(atol > 0)) {
        fprintf(stderr, "cvodes: need N >= 1 and positive tolerances\n");
        return 2;
    }
    SUNContext ctx;
    check(SUNContext_Create(NULL, &ctx), "SUNContext_Create");
    N_Vector y = N_VNew_Serial(3, ctx);
    double *yd = N_VGetArrayPointer(y);
    yd[0] = 1, yd[1] = 0, yd[2] = 0;
    lorenz p = {10, 10, 8.0 / 3};
    void *mem = CVodeCreate(CV_ADAMS, ctx);
    check(CVodeInit(mem, lorenz_f, 0, y), "CVodeInit");
    check(CVodeSStolerances(mem, rtol, atol), "CVodeSStolerances");
    SUNNonlinearSolver nls = SUNNonlinSol_FixedPoint(y, 0, ctx);
    check(CVodeSetNonlinearSolver(mem, nls), "CVodeSetNonlinearSolver");
    check(CVodeSetUserData(mem, &p), "CVodeSetUserData");
    check(CVodeSetMaxNumSteps(mem, 1000000), "CVodeSetMaxNumSteps");
    double *out = malloc(sizeof(double) * 3 * (size_t)n);
    double seconds = 0, steps = 0;
    for (int i = 0; i < n; i++) {
        /* The benchmark's ensemble: rho evenly from 10 to 24 (bench/README.md). */
        p.rho = n == 1 ? 10 : 10 + 14.0 * i / (n - 1);
        yd[0] = 1, yd[1] = 0, yd[2] = 0;
        double t = 0, t0 = now();
        check(CVodeReInit(mem, 0, y), "CVodeReInit");
        check(CVodeSetStopTime(mem, 10), "CVodeSetStopTime");
        check(CVode(mem, 10, y, &t, CV_NORMAL), "CVode");
        seconds += now() - t0;
        long ns;
        check(CVodeGetNumSteps(mem, &ns), "CVodeGetNumSteps");
        steps += ns;
        memcpy(out + 3 * (size_t)i, yd, 3 * sizeof(double));
    }
    FILE *fp = fopen(argv[5], "wb");
    if (!fp || fwrite(out, sizeof(double), 3 * (size_t)n, fp) != 3 * (size_t)n || fclose(fp) != 0) {
        fprintf(stderr, "cvodes: cannot write %s\n", argv[5]);
        return 1;
    }
    printf("%.9g %.6g\n", seconds / n, steps / n);
    free(out);
    SUNNonlinSolFree(nls);
    CVodeFree(&mem);
    N_VDestroy(y);
    SUNContext_Free(&ctx);
    return 0;
}
