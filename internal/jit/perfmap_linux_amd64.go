package jit

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

var perfMap = struct {
	on   bool
	dir  string // where the map is written (tests change it)
	mu   sync.Mutex
	keep []*Code // every code listed, kept mapped
}{on: os.Getenv("GRADSOLVE_PERFMAP") == "1", dir: os.TempDir()}

// Name lists c, of size bytes, in the perf map as name, one line per
// section (sections in order of Off; none: one line for the whole
// code), where GRADSOLVE_PERFMAP=1; it does nothing otherwise.
func (c *Code) Name(size int, name string, sections []Section) {
	if !perfMap.on || c == nil {
		return
	}
	perfMap.mu.Lock()
	defer perfMap.mu.Unlock()
	perfMap.keep = append(perfMap.keep, c)
	f, err := os.OpenFile(filepath.Join(perfMap.dir, fmt.Sprintf("perf-%d.map", os.Getpid())), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return // a profiling aid: the code runs the same without its names
	}
	defer f.Close()
	if len(sections) == 0 {
		sections = []Section{{0, ""}}
	}
	for i, s := range sections {
		end := size
		if i+1 < len(sections) {
			end = sections[i+1].Off
		}
		if end <= s.Off {
			continue
		}
		n := name
		if s.Name != "" {
			n += "_" + s.Name
		}
		fmt.Fprintf(f, "%x %x %s\n", c.Addr(s.Off), end-s.Off, n)
	}
}
