package memory

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// This file reads Linux's measures from a file tree rooted at root ("/"
// on a live system; a test's fake tree otherwise). It has no build tag
// so that its tests run everywhere.

// unlimited is the smallest limit read as "no limit": cgroup v1 writes
// an unset limit as 2⁶³ − 4096 rounded to pages, v2 as "max".
const unlimited = 1 << 62

// linuxInfo returns the lower of MemAvailable and the cgroup's room.
func linuxInfo(root string) Info {
	return lower(memAvailable(root), cgroupInfo(root))
}

// rlimitInfo returns the room the process's own limits leave: the
// address-space limit (ulimit -v, RLIMIT_AS) less its virtual size
// (VmSize), and the data limit (ulimit -d, RLIMIT_DATA) less its
// private writable memory (VmData), both read from
// root/proc/self/status. The Go runtime holds far more address space
// than memory (reservations it maps later), and an allocation beyond
// either limit fails however much memory the machine has free, so these
// are what such a process may still allocate. A limit of unlimited or
// more is none.
func rlimitInfo(root string, as, data uint64) Info {
	var best Info
	if as >= unlimited && data >= unlimited {
		return best
	}
	b, err := os.ReadFile(filepath.Join(root, "proc/self/status"))
	if err != nil {
		return best
	}
	fields := kBFields(b)
	for _, l := range []struct {
		limit  uint64
		field  string
		source string
	}{{as, "VmSize", "ulimit -v less VmSize"}, {data, "VmData", "ulimit -d less VmData"}} {
		if l.limit >= unlimited {
			continue
		}
		if used, ok := fields[l.field]; ok {
			best = lower(best, Info{Bytes: l.limit - min(l.limit, used), Source: l.source, Known: true})
		}
	}
	return best
}

// kBFields reads the "Name: value [kB]" lines of /proc/meminfo or
// /proc/self/status, in bytes.
func kBFields(b []byte) map[string]uint64 {
	fields := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			v *= 1024
		}
		fields[name] = v
	}
	return fields
}

// memAvailable reads MemAvailable from /proc/meminfo (kernels before
// 3.14 lack it: MemFree + Cached then).
func memAvailable(root string) Info {
	b, err := os.ReadFile(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return Info{}
	}
	fields := kBFields(b)
	if v, ok := fields["MemAvailable"]; ok {
		return Info{Bytes: v, Source: "MemAvailable in /proc/meminfo", Known: true}
	}
	free, ok1 := fields["MemFree"]
	cached, ok2 := fields["Cached"]
	if ok1 && ok2 {
		return Info{Bytes: free + cached, Source: "MemFree + Cached in /proc/meminfo", Known: true}
	}
	return Info{}
}

// mount is a cgroup file system mounted at point, showing the
// hierarchy from root.
type mount struct{ root, point string }

// cgroupMounts reads /proc/self/mountinfo: the cgroup2 mount and the
// cgroup v1 mount of the memory controller.
func cgroupMounts(root string) (v2, v1 *mount) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/mountinfo"))
	if err != nil {
		return nil, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// ID parent major:minor root mountpoint options [optional…] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 1 {
			continue
		}
		m := &mount{root: unescape(f[3]), point: unescape(f[4])}
		switch g[0] {
		case "cgroup2":
			if v2 == nil {
				v2 = m
			}
		case "cgroup":
			if len(g) >= 3 && v1 == nil && hasOption(g[2], "memory") {
				v1 = m
			}
		}
	}
	return v2, v1
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}

func hasOption(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

// cgroupPaths reads /proc/self/cgroup: the v2 path ("0::/…") and the
// path in the v1 memory hierarchy.
func cgroupPaths(root string) (v2, v1 string, ok2, ok1 bool) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2, ok2 = f[2], true
		case hasOption(f[1], "memory"):
			v1, ok1 = f[2], true
		}
	}
	return
}

// dirOf maps a cgroup path onto the mount: the mount shows the
// hierarchy from m.root, so a path under it lies at the same place
// below m.point. A path outside it (another cgroup namespace) maps to
// the mount point itself.
func dirOf(root string, m *mount, path string) string {
	rel, err := filepath.Rel(m.root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		rel = "."
	}
	return filepath.Join(root, m.point, rel)
}

// cgroupInfo returns the room left under the cgroup's memory limits:
// the lowest over the cgroup and its ancestors (v2) of the limit less
// the usage not counting inactive page cache, which the kernel reclaims
// before it fails an allocation.
func cgroupInfo(root string) Info {
	m2, m1 := cgroupMounts(root)
	p2, p1, ok2, ok1 := cgroupPaths(root)
	var best Info
	if m2 != nil && ok2 {
		top := filepath.Join(root, m2.point)
		for dir := dirOf(root, m2, p2); ; dir = filepath.Dir(dir) {
			lim, okl := readLimit(filepath.Join(dir, "memory.max"))
			if okl && lim < unlimited {
				used, _ := readLimit(filepath.Join(dir, "memory.current"))
				inactive := statField(filepath.Join(dir, "memory.stat"), "inactive_file")
				best = lower(best, Info{Bytes: room(lim, used, inactive), Source: "cgroup memory.max", Known: true})
			}
			if dir == top || len(dir) <= len(top) {
				break
			}
		}
	}
	if m1 != nil && ok1 {
		dir := dirOf(root, m1, p1)
		lim, okl := readLimit(filepath.Join(dir, "memory.limit_in_bytes"))
		if h := statField(filepath.Join(dir, "memory.stat"), "hierarchical_memory_limit"); h > 0 && (!okl || h < lim) {
			lim, okl = h, true
		}
		if okl && lim < unlimited {
			used, _ := readLimit(filepath.Join(dir, "memory.usage_in_bytes"))
			inactive := statField(filepath.Join(dir, "memory.stat"), "total_inactive_file")
			best = lower(best, Info{Bytes: room(lim, used, inactive), Source: "cgroup memory.limit_in_bytes", Known: true})
		}
	}
	return best
}

// room is limit − (used − inactive), never below zero.
func room(limit, used, inactive uint64) uint64 {
	used -= min(used, inactive)
	return limit - min(limit, used)
}

// readLimit reads a number, or "max" (no limit), from a cgroup file.
func readLimit(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return unlimited, true
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// statField reads "name value" from a cgroup memory.stat (0 if absent).
func statField(path, name string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == name {
			x, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return x
		}
	}
	return 0
}
