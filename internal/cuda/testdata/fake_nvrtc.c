/* A fake libnvrtc.so for the tests of package cuda. Compiling succeeds
 * unless the source contains "#error", and then fails with
 * NVRTC_ERROR_COMPILATION and a log quoting the line. The "PTX" is
 * "//fake-ptx", the options one a line, then ".entry <name>" for each
 * extern "C" __global__ function of the source. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

struct prog { char *src, *name, *log, *ptx; };

int nvrtcCreateProgram(struct prog **p, const char *src, const char *name, int nh, const char **h, const char **inc) {
	(void)nh; (void)h; (void)inc;
	*p = calloc(1, sizeof **p);
	(*p)->src = strdup(src);
	(*p)->name = strdup(name ? name : "default_program");
	return 0;
}

int nvrtcCompileProgram(struct prog *p, int nopt, const char **opts) {
	const char *e = strstr(p->src, "#error");
	size_t cap = strlen(p->src) + 1024, len;
	const char *s;
	int i;
	if (e) {
		const char *end = strchr(e, '\n');
		int n = end ? (int)(end - e) : (int)strlen(e);
		p->log = malloc(n + 256);
		sprintf(p->log, "%s(1): error: %.*s\n\n1 error detected in the compilation of \"%s\".\n", p->name, n, e, p->name);
		return 6; /* NVRTC_ERROR_COMPILATION */
	}
	for (i = 0; i < nopt; i++) cap += strlen(opts[i]) + 1;
	p->ptx = malloc(cap);
	strcpy(p->ptx, "//fake-ptx\n");
	for (i = 0; i < nopt; i++) { strcat(p->ptx, opts[i]); strcat(p->ptx, "\n"); }
	for (s = p->src; (s = strstr(s, "__global__ void ")) != 0; ) {
		const char *q;
		s += strlen("__global__ void ");
		q = strchr(s, '(');
		if (!q) break;
		len = strlen(p->ptx);
		sprintf(p->ptx + len, ".entry %.*s\n", (int)(q - s), s);
	}
	p->log = strdup("");
	return 0;
}
int nvrtcGetProgramLogSize(struct prog *p, size_t *n) { *n = p->log ? strlen(p->log) + 1 : 1; return 0; }
int nvrtcGetProgramLog(struct prog *p, char *b) { strcpy(b, p->log ? p->log : ""); return 0; }
int nvrtcGetPTXSize(struct prog *p, size_t *n) { if (!p->ptx) return 5; *n = strlen(p->ptx) + 1; return 0; }
int nvrtcGetPTX(struct prog *p, char *b) { if (!p->ptx) return 5; strcpy(b, p->ptx); return 0; }
int nvrtcDestroyProgram(struct prog **p) {
	if (*p) { free((*p)->src); free((*p)->name); free((*p)->log); free((*p)->ptx); free(*p); *p = 0; }
	return 0;
}
const char *nvrtcGetErrorString(int r) {
	switch (r) {
	case 0: return "NVRTC_SUCCESS";
	case 5: return "NVRTC_ERROR_INVALID_PROGRAM";
	case 6: return "NVRTC_ERROR_COMPILATION";
	}
	return "NVRTC_ERROR_UNKNOWN";
}
