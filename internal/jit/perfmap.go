package jit

// Profiling the machine code with perf(1): pprof sees it only as
// runtime._ExternalCode. With GRADSOLVE_PERFMAP=1 in the environment,
// every code that names itself (Code.Name) is listed in
// /tmp/perf-PID.map, the file perf reads the symbols of run-time code
// from, one line per section (its start, size and name), and is never
// unmapped, so that no later code reuses its addresses while a profile
// is taken. Then
//
//	GRADSOLVE_PERFMAP=1 perf record -e cpu-clock -- CMD
//	perf report --sort sym
//
// attributes the samples in the code to its sections.

// Section is a named part of a code, from byte Off to the next
// section's Off (or the code's end).
type Section struct {
	Off  int
	Name string
}
