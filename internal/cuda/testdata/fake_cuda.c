/* A fake libcuda.so.1 for the tests of package cuda: the driver API
 * symbols the package binds, with behaviour set by environment
 * variables read at each call:
 *   FAKE_CUDA_INIT      cuInit's status (default 0; 100 = no device)
 *   FAKE_CUDA_DEVICES   the device count (default 1)
 *   FAKE_CUDA_LAUNCH    cuLaunchKernel's status (default 0)
 *   FAKE_CUDA_SYNC      cuCtxSynchronize's status (default 0)
 * Device memory is host memory. Modules are the PTX text; a function
 * exists where its name appears in it after ".entry ". The one kernel
 * the fake "runs" is fake_scale(double *x, int n, double a): x[i] *= a.
 * Build without cuLaunchKernel with -DFAKE_NO_LAUNCH. */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

typedef int CUresult;

static int envint(const char *name, int def) {
	const char *v = getenv(name);
	return v && *v ? atoi(v) : def;
}

CUresult cuInit(unsigned flags) { (void)flags; return envint("FAKE_CUDA_INIT", 0); }
CUresult cuDeviceGetCount(int *n) { *n = envint("FAKE_CUDA_DEVICES", 1); return 0; }
CUresult cuDeviceGet(int *d, int ord) {
	if (ord < 0 || ord >= envint("FAKE_CUDA_DEVICES", 1)) return 101; /* CUDA_ERROR_INVALID_DEVICE */
	*d = ord; return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
	(void)dev;
	if (attr == 75) { *v = 9; return 0; }
	if (attr == 76) { *v = 0; return 0; }
	return 1;
}
static int ctxval;
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = &ctxval; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { return ctx == &ctxval ? 0 : 201; /* CUDA_ERROR_INVALID_CONTEXT */ }
CUresult cuCtxSynchronize(void) { return envint("FAKE_CUDA_SYNC", 0); }

struct fn { char name[128]; };
CUresult cuModuleLoadData(void **mod, const void *image) {
	const char *s = image;
	if (strncmp(s, "//fake-ptx", 10) != 0) return 200; /* CUDA_ERROR_INVALID_IMAGE */
	*mod = strdup(s);
	return 0;
}
CUresult cuModuleUnload(void *mod) { free(mod); return 0; }
CUresult cuModuleGetFunction(void **f, void *mod, const char *name) {
	char pat[160];
	struct fn *fn;
	if (strlen(name) > 100) return 1;
	strcpy(pat, ".entry "); strcat(pat, name); strcat(pat, "\n");
	if (!strstr((const char *)mod, pat)) return 500; /* CUDA_ERROR_NOT_FOUND */
	fn = malloc(sizeof *fn);
	strcpy(fn->name, name);
	*f = fn;
	return 0;
}
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) { void *m = malloc(n); if (!m) return 2; *p = (uint64_t)(uintptr_t)m; return 0; }
CUresult cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n) { memcpy((void *)(uintptr_t)dst, src, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n) { memcpy(dst, (void *)(uintptr_t)src, n); return 0; }

#ifndef FAKE_NO_LAUNCH
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shared, void *stream, void **params, void **extra) {
	struct fn *fn = f;
	int r = envint("FAKE_CUDA_LAUNCH", 0);
	(void)gy; (void)gz; (void)by; (void)bz; (void)shared; (void)stream; (void)extra;
	if (r) return r;
	if (strcmp(fn->name, "fake_scale") == 0) {
		double *x = (double *)(uintptr_t)*(uint64_t *)params[0];
		int n = *(int *)params[1];
		double a = *(double *)params[2];
		unsigned i, total = gx * bx;
		for (i = 0; i < total; i++) /* one "thread" per i, grid-stride */
			for (int j = (int)i; j < n; j += (int)total) x[j] *= a;
	}
	return 0;
}
#endif

static const char *names(int r, int text) {
	switch (r) {
	case 0: return text ? "no error" : "CUDA_SUCCESS";
	case 100: return text ? "no CUDA-capable device is detected" : "CUDA_ERROR_NO_DEVICE";
	case 700: return text ? "an illegal memory access was encountered" : "CUDA_ERROR_ILLEGAL_ADDRESS";
	case 719: return text ? "unspecified launch failure" : "CUDA_ERROR_LAUNCH_FAILED";
	case 701: return text ? "too many resources requested for launch" : "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
	}
	return 0;
}
CUresult cuGetErrorName(int r, const char **s) { *s = names(r, 0); return *s ? 0 : 1; }
CUresult cuGetErrorString(int r, const char **s) { *s = names(r, 1); return *s ? 0 : 1; }
