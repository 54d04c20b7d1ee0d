// Package memory says how much memory a job may take, adds up the sizes
// of the arrays a job will allocate with overflow checks, and words the
// refusal of a job that does not fit.
//
// The memory available is, on Linux, MemAvailable of /proc/meminfo,
// capped by the memory limit of the process's cgroup (v2 memory.max, v1
// memory.limit_in_bytes, less what the cgroup already uses beyond its
// reclaimable page cache) when there is one, and by what the process's
// own limits leave (ulimit -v less its virtual size, ulimit -d less its
// data size); on macOS and FreeBSD the
// physical memory (sysctl hw.memsize, hw.physmem); on Windows the
// available physical memory (GlobalMemoryStatusEx). Everywhere it is
// capped by the Go memory limit (GOMEMLIMIT or debug.SetMemoryLimit)
// less what the Go runtime already holds, when that limit is set.
// Elsewhere it is unknown, and only sizes beyond any address space are
// refused.
package memory

import (
	"fmt"
	"math"
	"math/bits"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strings"
)

// Info is the memory available to this process.
type Info struct {
	// Bytes is the memory available, in bytes (meaningful when Known).
	Bytes uint64
	// Source says where Bytes comes from, in words a user can look up:
	// "MemAvailable in /proc/meminfo", "cgroup memory.max", "GOMEMLIMIT"…
	Source string
	// Known is false where the platform offers no measure.
	Known bool
}

// lower returns the smaller of two measures (a known one beats an
// unknown one).
func lower(a, b Info) Info {
	switch {
	case !b.Known:
		return a
	case !a.Known || b.Bytes < a.Bytes:
		return b
	}
	return a
}

// Available returns the memory this process may still allocate.
func Available() Info {
	return lower(system(), goLimit())
}

// goLimit is what the Go memory limit leaves, when one is set.
func goLimit() Info {
	lim := debug.SetMemoryLimit(-1)
	if lim == math.MaxInt64 || lim < 0 {
		return Info{}
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	var used uint64
	if s[0].Value.Kind() == metrics.KindUint64 && s[1].Value.Kind() == metrics.KindUint64 {
		used = s[0].Value.Uint64() - min(s[0].Value.Uint64(), s[1].Value.Uint64())
	}
	return Info{Bytes: uint64(lim) - min(uint64(lim), used), Source: "GOMEMLIMIT", Known: true}
}

// AddressSpace is the most any job may ask for where the memory
// available is unknown: 2⁴⁸ bytes, the virtual address space of
// today's 64-bit processors.
const AddressSpace = 1 << 48

// Small is a total below which Check does not look up the memory
// available: every machine that runs at all has this much.
const Small = 16 << 20

// Mul returns the product of xs and whether it fits an int; every x
// must be ≥ 0 (a negative one reports false).
func Mul(xs ...int) (int, bool) {
	p := uint64(1)
	for _, x := range xs {
		if x < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(p, uint64(x))
		if hi != 0 || lo > math.MaxInt {
			return 0, false
		}
		p = lo
	}
	return int(p), true
}

// Part is one array of a job and its size in bytes.
type Part struct {
	Name  string
	Bytes uint64
}

// Budget adds up the arrays a job allocates. Its zero value is empty.
type Budget struct {
	// Parts are the arrays added, in order.
	Parts    []Part
	total    uint64
	overflow string
}

// Add adds the array name: elements of elemSize bytes, as many as the
// product of dims, each factor named in factors ("N·Dim"). An array
// whose length or size overflows an int marks the budget as
// overflowing (see Overflow); the first such array is the one reported.
// A zero-length array adds nothing.
func (b *Budget) Add(name, factors string, elemSize int, dims ...int) {
	n, ok := Mul(dims...)
	var size int
	if ok {
		size, ok = Mul(n, elemSize)
	}
	if !ok {
		if b.overflow == "" {
			vals := make([]string, len(dims))
			for i, d := range dims {
				vals[i] = fmt.Sprint(d)
			}
			b.overflow = fmt.Sprintf("%s (%s = %s, %d bytes each)", name, factors, strings.Join(vals, "·"), elemSize)
		}
		return
	}
	b.addBytes(name, uint64(size))
}

// AddBytes adds a part of the given size in bytes.
func (b *Budget) AddBytes(name string, size uint64) { b.addBytes(name, size) }

func (b *Budget) addBytes(name string, size uint64) {
	if size == 0 {
		return
	}
	b.Parts = append(b.Parts, Part{name, size})
	t, carry := bits.Add64(b.total, size, 0)
	if carry != 0 || t > math.MaxInt {
		if b.overflow == "" {
			b.overflow = "the sum of " + name + " and the arrays before it"
		}
		return
	}
	b.total = t
}

// Merge adds every part of o to b.
func (b *Budget) Merge(o *Budget) {
	if o.overflow != "" && b.overflow == "" {
		b.overflow = o.overflow
	}
	for _, p := range o.Parts {
		b.addBytes(p.Name, p.Bytes)
	}
}

// Total returns the sum of the parts in bytes (meaningless when
// Overflow is not empty).
func (b *Budget) Total() uint64 { return b.total }

// Overflow describes the first array whose size overflows an int, or
// is empty when every size fits.
func (b *Budget) Overflow() string { return b.overflow }

// Error is the refusal of a job whose arrays overflow an int or do not
// fit in the memory available. Its text is one line.
type Error struct {
	// Subject is the request, in its interface's terms: "Ensemble.N =
	// 1000000000", "--n 1000000000".
	Subject string
	// What names the arrays: "the result arrays", "the outputs".
	What string
	// Overflow, when not empty, describes the array whose size
	// overflows an int; Need and Parts are then unset.
	Overflow string
	// Need is the memory the arrays take, in bytes; Parts lists them.
	Need  uint64
	Parts []Part
	// PerStep, when not empty, says what the job adds as it runs
	// ("plus 40 B per accepted step of each trajectory").
	PerStep string
	// Avail is the memory available.
	Avail Info
	// Advice says what to do.
	Advice string
}

func (e *Error) Error() string {
	var s strings.Builder
	if e.Subject != "" {
		s.WriteString(e.Subject + ": ")
	}
	if e.Overflow != "" {
		fmt.Fprintf(&s, "the size of %s overflows an int", e.Overflow)
	} else {
		fmt.Fprintf(&s, "%s need %s", e.What, Format(e.Need))
		if len(e.Parts) > 0 {
			s.WriteString(" (" + partList(e.Parts) + ")")
		}
		if e.PerStep != "" {
			s.WriteString(" " + e.PerStep)
		}
		if e.Avail.Known {
			fmt.Fprintf(&s, "; only %s is available (%s)", Format(e.Avail.Bytes), e.Avail.Source)
		} else {
			fmt.Fprintf(&s, "; that is more than any address space (%s)", Format(AddressSpace))
		}
	}
	if e.Advice != "" {
		s.WriteString(": " + e.Advice)
	}
	return s.String()
}

// partList names the largest parts, merging repeated names.
func partList(parts []Part) string {
	sum := map[string]uint64{}
	var names []string
	for _, p := range parts {
		if _, ok := sum[p.Name]; !ok {
			names = append(names, p.Name)
		}
		sum[p.Name] += p.Bytes
	}
	sort.SliceStable(names, func(i, j int) bool { return sum[names[i]] > sum[names[j]] })
	const shown = 4
	var out []string
	for i, n := range names {
		if i == shown {
			out = append(out, "…")
			break
		}
		out = append(out, n+" "+Format(sum[n]))
	}
	return strings.Join(out, ", ")
}

// Check returns nil when the budget fits: its sizes fit an int and its
// total is at most the memory available (looked up only for totals of
// Small or more; where the memory available is unknown, at most
// AddressSpace). Otherwise it returns an *Error with the given subject,
// what and advice.
func Check(b *Budget, subject, what, advice string) error {
	if b.overflow != "" {
		return &Error{Subject: subject, What: what, Overflow: b.overflow, Advice: advice}
	}
	if b.total < Small {
		return nil
	}
	avail := Available()
	if avail.Known && b.total <= avail.Bytes || !avail.Known && b.total <= AddressSpace {
		return nil
	}
	return &Error{Subject: subject, What: what, Need: b.total, Parts: b.Parts, Avail: avail, Advice: advice}
}

// RecordedMeshes is the Error.What of a recording stopped because its
// meshes outgrew the memory available as it ran.
const RecordedMeshes = "the recorded meshes"

// RecordingPerStep is the Error.PerStep of a job that records every
// accepted step, perStep bytes per accepted step of each trajectory: a
// check made before the solve counts the arrays before the recording
// (the number of steps is not known yet); a recording stopped as it
// grew (grown) says what its meshes grow by.
func RecordingPerStep(perStep uint64, grown bool) string {
	if grown {
		return fmt.Sprintf("and grow by %s per accepted step of each trajectory", Format(perStep))
	}
	return fmt.Sprintf("before the recording's %s per accepted step of each trajectory", Format(perStep))
}

// Format writes a size in bytes with decimal units and three
// significant digits: "512 B", "1.50 kB", "48.0 GB".
func Format(b uint64) string {
	if b < 1000 {
		return fmt.Sprintf("%d B", b)
	}
	units := []string{"kB", "MB", "GB", "TB", "PB", "EB"}
	v := float64(b)
	u := -1
	for v >= 999.5 && u < len(units)-1 {
		v /= 1000
		u++
	}
	switch {
	case v >= 99.95:
		return fmt.Sprintf("%.0f %s", v, units[u])
	case v >= 9.995:
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.2f %s", v, units[u])
}
