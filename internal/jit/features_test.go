package jit

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// The features CPUID and XCR0 report agree with the flags Linux lists in
// /proc/cpuinfo (which it clears for what the kernel does not support),
// and each implies the ones below it.
func TestFeaturesMatchCPUInfo(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("CPUID features are read on linux/amd64 only")
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	flags := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if name, list, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
			for _, f := range strings.Fields(list) {
				flags[f] = true
			}
			break // the first processor's; they agree
		}
	}
	if len(flags) == 0 {
		t.Skip("no flags line in /proc/cpuinfo")
	}
	for _, c := range []struct {
		name string
		got  bool
	}{{"avx", avx}, {"avx2", avx2}, {"avx512f", avx512}, {"sse4_1", sse41}} {
		if c.got != flags[c.name] {
			t.Errorf("%s: CPUID and XCR0 say %v, /proc/cpuinfo says %v", c.name, c.got, flags[c.name])
		}
	}
	if avx512 && !avx2 || avx2 && !avx {
		t.Errorf("features out of order: avx %v, avx2 %v, avx512 %v", avx, avx2, avx512)
	}
	if !Enabled() && (HasAVX() || HasAVX2() || HasAVX512()) {
		t.Error("machine code is off, yet a Has function says yes")
	}
}
