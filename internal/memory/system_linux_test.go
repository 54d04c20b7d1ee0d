package memory

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// Under an address-space limit (ulimit -v) Available says what the
// limit leaves, on the live process: the soft limit is lowered to 1 GiB
// above the process's virtual size and put back.
func TestAvailableUnderUlimit(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &old); err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	vm, ok := kBFields(b)["VmSize"]
	if !ok {
		t.Skip("no VmSize in /proc/self/status")
	}
	const room = 1 << 30
	if old.Cur < vm+2*room {
		t.Skipf("the address-space limit is already low: %d", old.Cur)
	}
	lim := old
	lim.Cur = vm + room
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		t.Skip(err)
	}
	a := Available()
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &old); err != nil {
		t.Fatal(err)
	}
	// The virtual size may have grown a little between the two reads.
	if !a.Known || a.Bytes > room || a.Bytes < room/2 || !strings.Contains(a.Source, "ulimit -v") {
		t.Errorf("with ulimit -v at VmSize + 1 GiB: Available() = %+v", a)
	}
}
