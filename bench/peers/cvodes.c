/* cvodes: the SUNDIALS CVODES peer driver of gradsolve's work-precision
 * benchmarks (bench/README.md). It integrates the benchmark's Lorenz
 * ensemble one trajectory after another on one core with CVODES's Adams
 * method and its fixed-point nonlinear solver (SUNDIALS' choice for
 * nonstiff problems), and the Robertson ensemble with BDF, Newton
 * iteration and the dense direct solver with an analytic Jacobian
 * (SUNDIALS' choice for small stiff problems), re-initialising one
 * solver for each trajectory and timing CVodeReInit and CVode alone. The
 * halo ensemble runs Adams with staggered forward sensitivities to
 * (vc, q) (analytic sensitivity right-hand side, sensitivities under
 * error control, fixed-point iteration for both).
 *
 * usage: cvodes lorenz|robertson|halo|orbit RTOL ATOL N OUT
 *   (for halo, OUT holds per trajectory the 6 final states, then the
 *   6×2 sensitivities ∂y_d/∂p_c row-major)
 *   writes the N×3 final states to OUT (float64, little-endian, row-major)
 *   and prints "seconds_per_trajectory steps_per_trajectory" on stdout. */
#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
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

typedef struct { double k1, k2, k3; } robertson;

static int robertson_f(sunrealtype t, N_Vector yv, N_Vector dyv, void *user) {
    const robertson *p = user;
    const double *y = N_VGetArrayPointer(yv);
    double *dy = N_VGetArrayPointer(dyv);
    (void)t;
    dy[0] = -p->k1 * y[0] + p->k3 * y[1] * y[2];
    dy[1] = p->k1 * y[0] - p->k3 * y[1] * y[2] - p->k2 * y[1] * y[1];
    dy[2] = p->k2 * y[1] * y[1];
    return 0;
}

static int robertson_jac(sunrealtype t, N_Vector yv, N_Vector fy, SUNMatrix J, void *user, N_Vector t1, N_Vector t2,
                         N_Vector t3) {
    const robertson *p = user;
    const double *y = N_VGetArrayPointer(yv);
    (void)t, (void)fy, (void)t1, (void)t2, (void)t3;
    SM_ELEMENT_D(J, 0, 0) = -p->k1;
    SM_ELEMENT_D(J, 0, 1) = p->k3 * y[2];
    SM_ELEMENT_D(J, 0, 2) = p->k3 * y[1];
    SM_ELEMENT_D(J, 1, 0) = p->k1;
    SM_ELEMENT_D(J, 1, 1) = -p->k3 * y[2] - 2 * p->k2 * y[1];
    SM_ELEMENT_D(J, 1, 2) = -p->k3 * y[1];
    SM_ELEMENT_D(J, 2, 0) = 0;
    SM_ELEMENT_D(J, 2, 1) = 2 * p->k2 * y[1];
    SM_ELEMENT_D(J, 2, 2) = 0;
    return 0;
}

/* The halo orbit and its sensitivity right-hand side; the formulas are
 * those of odeint.cpp's halo. */
typedef struct { double vc, q, rc; } halo;

static void halo_terms(const halo *p, const double *y, double g[3], double *D, double *c) {
    double q2 = p->q * p->q;
    g[0] = y[0], g[1] = y[1], g[2] = y[2] / q2;
    *D = p->rc * p->rc + y[0] * y[0] + y[1] * y[1] + y[2] * g[2];
    *c = p->vc * p->vc / *D;
}

static int halo_f(sunrealtype t, N_Vector yv, N_Vector dyv, void *user) {
    const double *y = N_VGetArrayPointer(yv);
    double *dy = N_VGetArrayPointer(dyv), g[3], D, c;
    (void)t;
    halo_terms(user, y, g, &D, &c);
    for (int i = 0; i < 3; i++) {
        dy[i] = y[3 + i];
        dy[3 + i] = -c * g[i];
    }
    return 0;
}

static int halo_fs(int ns, sunrealtype t, N_Vector yv, N_Vector ydot, N_Vector *ys, N_Vector *ysdot, void *user,
                   N_Vector tmp1, N_Vector tmp2) {
    const halo *p = user;
    const double *y = N_VGetArrayPointer(yv);
    double g[3], D, c, q2 = p->q * p->q, z = y[2];
    double w[3] = {1, 1, 1 / q2};
    (void)t, (void)ydot, (void)tmp1, (void)tmp2;
    halo_terms(p, y, g, &D, &c);
    double dq = 2 * c * z * z / (q2 * p->q * D);
    for (int col = 0; col < ns; col++) {
        const double *s = N_VGetArrayPointer(ys[col]);
        double *ds = N_VGetArrayPointer(ysdot[col]);
        double gs = g[0] * s[0] + g[1] * s[1] + g[2] * s[2];
        for (int i = 0; i < 3; i++) {
            ds[i] = s[3 + i];
            double jv = -c * w[i] * s[i] + 2 * (c / D) * g[i] * gs;
            double jp = col == 0 ? -(2 * p->vc / D) * g[i] : -dq * g[i] + (i == 2 ? 2 * c * z / (q2 * p->q) : 0);
            ds[3 + i] = jv + jp;
        }
    }
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
    int rob = argc == 6 && strcmp(argv[1], "robertson") == 0;
    int hal = argc == 6 && strcmp(argv[1], "halo") == 0;
    int orb = argc == 6 && strcmp(argv[1], "orbit") == 0; /* halo without sensitivities */
    if (argc != 6 || (!rob && !hal && !orb && strcmp(argv[1], "lorenz") != 0)) {
        fprintf(stderr, "usage: cvodes lorenz|robertson|halo|orbit RTOL ATOL N OUT\n");
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
    int six = hal || orb;
    int dim = six ? 6 : 3, width = hal ? 18 : dim;
    N_Vector y = N_VNew_Serial(dim, ctx);
    double *yd = N_VGetArrayPointer(y);
    yd[0] = 1, yd[1] = 0, yd[2] = 0;
    lorenz lp = {10, 10, 8.0 / 3};
    robertson rp = {0.04, 3e7, 1e4};
    halo hp = {1, 0.7, 0.2};
    double t1 = rob ? 1e5 : six ? 20 : 10;
    void *mem = CVodeCreate(rob ? CV_BDF : CV_ADAMS, ctx);
    check(CVodeInit(mem, rob ? robertson_f : six ? halo_f : lorenz_f, 0, y), "CVodeInit");
    check(CVodeSStolerances(mem, rtol, atol), "CVodeSStolerances");
    SUNNonlinearSolver nls = NULL;
    SUNMatrix A = NULL;
    SUNLinearSolver ls = NULL;
    if (rob) {
        A = SUNDenseMatrix(3, 3, ctx);
        ls = SUNLinSol_Dense(y, A, ctx);
        check(CVodeSetLinearSolver(mem, ls, A), "CVodeSetLinearSolver");
        check(CVodeSetJacFn(mem, robertson_jac), "CVodeSetJacFn");
        check(CVodeSetUserData(mem, &rp), "CVodeSetUserData");
    } else {
        nls = SUNNonlinSol_FixedPoint(y, 0, ctx);
        check(CVodeSetNonlinearSolver(mem, nls), "CVodeSetNonlinearSolver");
        check(CVodeSetUserData(mem, six ? (void *)&hp : (void *)&lp), "CVodeSetUserData");
    }
    N_Vector *ys = NULL;
    SUNNonlinearSolver nlss = NULL;
    if (hal) {
        ys = N_VCloneVectorArray(2, y);
        for (int c = 0; c < 2; c++) N_VConst(0, ys[c]);
        check(CVodeSensInit(mem, 2, CV_STAGGERED, halo_fs, ys), "CVodeSensInit");
        check(CVodeSensEEtolerances(mem), "CVodeSensEEtolerances");
        check(CVodeSetSensErrCon(mem, SUNTRUE), "CVodeSetSensErrCon");
        nlss = SUNNonlinSol_FixedPointSens(2, ys[0], 0, ctx);
        check(CVodeSetNonlinearSolverSensStg(mem, nlss), "CVodeSetNonlinearSolverSensStg");
    }
    check(CVodeSetMaxNumSteps(mem, 1000000), "CVodeSetMaxNumSteps");
    double *out = malloc(sizeof(double) * width * (size_t)n);
    double seconds = 0, steps = 0;
    for (int i = 0; i < n; i++) {
        /* The benchmark's ensembles (bench/README.md): Lorenz with rho evenly
         * from 10 to 24, Robertson with k1 evenly from 0.02 to 0.06. */
        double u = n == 1 ? 0 : (double)i / (n - 1);
        lp.rho = 10 + 14 * u;
        rp.k1 = 0.02 + 0.04 * u;
        yd[0] = 1, yd[1] = 0, yd[2] = 0;
        if (six) { /* x0 from 0.5 to 1.5, vy0 from 0.5 to 0.7 */
            yd[0] = 0.5 + u, yd[1] = 0, yd[2] = 0.2, yd[3] = 0.1, yd[4] = 0.5 + 0.2 * u, yd[5] = 0.15;
        }
        if (hal)
            for (int c = 0; c < 2; c++) N_VConst(0, ys[c]);
        double t = 0, t0 = now();
        check(CVodeReInit(mem, 0, y), "CVodeReInit");
        if (hal) check(CVodeSensReInit(mem, CV_STAGGERED, ys), "CVodeSensReInit");
        check(CVodeSetStopTime(mem, t1), "CVodeSetStopTime");
        check(CVode(mem, t1, y, &t, CV_NORMAL), "CVode");
        seconds += now() - t0;
        long ns;
        check(CVodeGetNumSteps(mem, &ns), "CVodeGetNumSteps");
        steps += ns;
        double *o = out + width * (size_t)i;
        memcpy(o, yd, dim * sizeof(double));
        if (hal) {
            check(CVodeGetSens(mem, &t, ys), "CVodeGetSens");
            for (int d = 0; d < 6; d++)
                for (int c = 0; c < 2; c++) o[6 + 2 * d + c] = N_VGetArrayPointer(ys[c])[d];
        }
    }
    FILE *fp = fopen(argv[5], "wb");
    if (!fp || fwrite(out, sizeof(double), width * (size_t)n, fp) != width * (size_t)n || fclose(fp) != 0) {
        fprintf(stderr, "cvodes: cannot write %s\n", argv[5]);
        return 1;
    }
    printf("%.9g %.6g\n", seconds / n, steps / n);
    free(out);
    if (nls) SUNNonlinSolFree(nls);
    if (nlss) SUNNonlinSolFree(nlss);
    if (ys) N_VDestroyVectorArray(ys, 2);
    if (ls) SUNLinSolFree(ls);
    if (A) SUNMatDestroy(A);
    CVodeFree(&mem);
    N_VDestroy(y);
    SUNContext_Free(&ctx);
    return 0;
}
