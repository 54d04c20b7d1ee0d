package memory

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// tree writes files (path → content) under a new temporary root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const meminfo = "MemTotal:       24683584 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\nCached:          3000000 kB\n"

func TestLinuxInfo(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		name   string
		files  map[string]string
		bytes  uint64
		source string
	}{
		{"meminfo only", map[string]string{"proc/meminfo": meminfo}, 20000000 * 1024, "MemAvailable"},
		{"old kernel", map[string]string{"proc/meminfo": "MemFree: 1000 kB\nCached: 24 kB\n"}, 1024 * 1024, "MemFree + Cached"},
		{"v2 limit below MemAvailable", map[string]string{
			"proc/meminfo":                       meminfo,
			"proc/self/cgroup":                   "0::/job/a\n",
			"proc/self/mountinfo":                "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n",
			"sys/fs/cgroup/job/a/memory.max":     "4294967296\n",
			"sys/fs/cgroup/job/a/memory.current": "1073741824\n",
			"sys/fs/cgroup/job/a/memory.stat":    "anon 1\ninactive_file 536870912\n",
			"sys/fs/cgroup/job/memory.max":       "max\n",
			"sys/fs/cgroup/job/memory.current":   "10\n",
		}, 4*gib - (gib - gib/2), "cgroup memory.max"},
		{"v2 parent's limit is lower", map[string]string{
			"proc/meminfo":                     meminfo,
			"proc/self/cgroup":                 "0::/job/a\n",
			"proc/self/mountinfo":              "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"sys/fs/cgroup/job/a/memory.max":   "max\n",
			"sys/fs/cgroup/job/memory.max":     "2147483648\n",
			"sys/fs/cgroup/job/memory.current": "1073741824\n",
		}, gib, "cgroup memory.max"},
		{"v2 namespace (path outside the mount's root)", map[string]string{
			"proc/meminfo":                 meminfo,
			"proc/self/cgroup":             "0::/\n",
			"proc/self/mountinfo":          "30 23 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"sys/fs/cgroup/memory.max":     "3221225472\n",
			"sys/fs/cgroup/memory.current": "0\n",
		}, 3 * gib, "cgroup memory.max"},
		{"v1 limit", map[string]string{
			"proc/meminfo":        meminfo,
			"proc/self/cgroup":    "4:memory:/process_api/x\n3:cpuset:/\n0::/\n",
			"proc/self/mountinfo": "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
			"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "2147483648\n",
			"sys/fs/cgroup/memory/process_api/x/memory.usage_in_bytes": "1073741824\n",
			"sys/fs/cgroup/memory/process_api/x/memory.stat":           "cache 5\ntotal_inactive_file 0\n",
		}, gib, "cgroup memory.limit_in_bytes"},
		{"v1 unlimited, hierarchical limit", map[string]string{
			"proc/meminfo":        meminfo,
			"proc/self/cgroup":    "4:memory:/x\n",
			"proc/self/mountinfo": "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			"sys/fs/cgroup/memory/x/memory.limit_in_bytes": "9223372036854771712\n",
			"sys/fs/cgroup/memory/x/memory.usage_in_bytes": "0\n",
			"sys/fs/cgroup/memory/x/memory.stat":           "hierarchical_memory_limit 1073741824\n",
		}, gib, "cgroup memory.limit_in_bytes"},
		{"v1 unlimited", map[string]string{
			"proc/meminfo":        meminfo,
			"proc/self/cgroup":    "4:memory:/x\n",
			"proc/self/mountinfo": "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			"sys/fs/cgroup/memory/x/memory.limit_in_bytes": "9223372036854771712\n",
		}, 20000000 * 1024, "MemAvailable"},
		{"usage above the limit", map[string]string{
			"proc/meminfo":                 meminfo,
			"proc/self/cgroup":             "0::/\n",
			"proc/self/mountinfo":          "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"sys/fs/cgroup/memory.max":     "100\n",
			"sys/fs/cgroup/memory.current": "200\n",
		}, 0, "cgroup memory.max"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := linuxInfo(tree(t, c.files))
			if !got.Known || got.Bytes != c.bytes || !strings.HasPrefix(got.Source, c.source) {
				t.Errorf("got %+v, want %d bytes from %s", got, c.bytes, c.source)
			}
		})
	}
	if got := linuxInfo(t.TempDir()); got.Known {
		t.Errorf("empty tree: got %+v, want unknown", got)
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/end\`: `/end\`, `\134x`: `\x`} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAvailableLive(t *testing.T) {
	a := Available()
	if a.Known && (a.Bytes == 0 || a.Source == "") {
		t.Errorf("Available() = %+v", a)
	}
	// The Go memory limit caps it.
	old := debug.SetMemoryLimit(64 << 20)
	defer debug.SetMemoryLimit(old)
	a = Available()
	if !a.Known || a.Bytes > 64<<20 {
		t.Errorf("with a 64 MiB Go memory limit: %+v", a)
	}
}

func TestMul(t *testing.T) {
	cases := []struct {
		xs   []int
		want int
		ok   bool
	}{
		{nil, 1, true},
		{[]int{3, 4}, 12, true},
		{[]int{0, math.MaxInt}, 0, true},
		{[]int{6148914691236517206, 3}, 0, false},
		{[]int{1 << 32, 1 << 31}, 0, false},
		{[]int{1 << 31, 1 << 31}, 1 << 62, true},
		{[]int{-1, 2}, 0, false},
	}
	for _, c := range cases {
		got, ok := Mul(c.xs...)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("Mul(%v) = %d, %v; want %d, %v", c.xs, got, ok, c.want, c.ok)
		}
	}
}

func TestBudgetAndCheck(t *testing.T) {
	var b Budget
	b.Add("Y", "N·Dim", 8, 1000, 3)
	b.Add("Status", "N", 1, 1000)
	b.Add("empty", "N·K", 8, 1000, 0)
	if b.Total() != 25000 || len(b.Parts) != 2 || b.Overflow() != "" {
		t.Fatalf("budget %+v, total %d", b.Parts, b.Total())
	}
	if err := Check(&b, "n", "the arrays", "lower n"); err != nil {
		t.Errorf("a small budget: %v", err)
	}

	var o Budget
	o.Add("Y", "N·Dim", 8, 6148914691236517206, 3)
	o.Add("T", "N", 8, 1<<62) // overflows too; the first is reported
	err := Check(&o, "Ensemble.N = 6148914691236517206", "the result arrays", "lower Ensemble.N")
	var me *Error
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "Y (N·Dim = 6148914691236517206·3, 8 bytes each) overflows an int") {
		t.Errorf("overflow: %v", err)
	}

	var big Budget
	big.Add("Y", "N·Dim", 8, 1<<40, 3) // 26 TB
	big.Add("Stats", "N", 40, 1<<40)
	old := debug.SetMemoryLimit(1 << 30)
	defer debug.SetMemoryLimit(old)
	err = Check(&big, "--n 1099511627776", "the outputs", "lower --n")
	if !errors.As(err, &me) || me.Need != big.Total() || me.Avail.Bytes > 1<<30 {
		t.Fatalf("too big: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"--n 1099511627776: the outputs need 70.4 TB (Stats 44.0 TB, Y 26.4 TB); only ", " is available (GOMEMLIMIT): lower --n"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line: %q", msg)
	}

	var sum Budget
	sum.AddBytes("a", math.MaxInt)
	sum.AddBytes("b", 2)
	if sum.Overflow() == "" {
		t.Errorf("a sum past MaxInt does not overflow")
	}
}

func TestFormat(t *testing.T) {
	for b, want := range map[uint64]string{0: "0 B", 999: "999 B", 1000: "1.00 kB", 1536: "1.54 kB", 48e9: "48.0 GB",
		999_600: "1.00 MB", 123_456_789: "123 MB", 21_300_000_000: "21.3 GB", math.MaxUint64: "18.4 EB"} {
		if got := Format(b); got != want {
			t.Errorf("Format(%d) = %q, want %q", b, got, want)
		}
	}
}

func TestPartList(t *testing.T) {
	parts := []Part{{"a", 1e3}, {"b", 5e3}, {"a", 5e3}, {"c", 2e3}, {"d", 1e3}, {"e", 9}}
	if got, want := partList(parts), "a 6.00 kB, b 5.00 kB, c 2.00 kB, d 1.00 kB, …"; got != want {
		t.Errorf("partList = %q, want %q", got, want)
	}
}

// The process's own limits (ulimit -v, ulimit -d) leave the limit less
// what the process already holds; the lower of the two counts, and an
// unlimited one is none.
func TestRlimitInfo(t *testing.T) {
	const gib = 1 << 30
	status := "Name:\tgradsolve\nVmPeak:\t 2000000 kB\nVmSize:\t 1048576 kB\nVmRSS:\t 10000 kB\nVmData:\t  262144 kB\n"
	root := tree(t, map[string]string{"proc/self/status": status})
	cases := []struct {
		name      string
		as, data  uint64
		known     bool
		bytes     uint64
		sourceHas string
	}{
		{"no limits", unlimited, unlimited, false, 0, ""},
		{"RLIM_INFINITY", math.MaxUint64, math.MaxUint64, false, 0, ""},
		{"ulimit -v", 3 * gib, math.MaxUint64, true, 2 * gib, "ulimit -v"},
		{"ulimit -d", math.MaxUint64, gib, true, gib - gib/4, "ulimit -d"},
		{"both: the lower", 3 * gib, gib, true, gib - gib/4, "ulimit -d"},
		{"already beyond", gib / 2, math.MaxUint64, true, 0, "ulimit -v"},
	}
	for _, c := range cases {
		got := rlimitInfo(root, c.as, c.data)
		if got.Known != c.known || got.Bytes != c.bytes || !strings.Contains(got.Source, c.sourceHas) {
			t.Errorf("%s: got %+v, want known %v, %d bytes from %q", c.name, got, c.known, c.bytes, c.sourceHas)
		}
	}
	if got := rlimitInfo(t.TempDir(), gib, gib); got.Known {
		t.Errorf("no status file: got %+v, want unknown", got)
	}
}

// The per-step note has one wording, before a recording and as it grew.
func TestRecordingPerStep(t *testing.T) {
	if got, want := RecordingPerStep(40, false), "before the recording's 40 B per accepted step of each trajectory"; got != want {
		t.Errorf("before: %q, want %q", got, want)
	}
	if got, want := RecordingPerStep(1500, true), "and grow by 1.50 kB per accepted step of each trajectory"; got != want {
		t.Errorf("grown: %q, want %q", got, want)
	}
}

// TestPeakRSS: where the platform tells the peak resident set, it is at
// least the heap the test has just touched (64 MiB, written so that its
// pages are resident) and below the machine's memory.
func TestPeakRSS(t *testing.T) {
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	peak, ok := PeakRSS()
	if !ok {
		t.Skip("no peak resident set size on this platform")
	}
	if peak < uint64(len(buf)) || peak > 1<<50 {
		t.Errorf("PeakRSS = %d bytes after touching %d", peak, len(buf))
	}
	runtime.KeepAlive(buf)
}

// BenchmarkAvailable measures one reading of the memory available (every
// Record and every chunked solve takes one).
func BenchmarkAvailable(b *testing.B) {
	for range b.N {
		Available()
	}
}
