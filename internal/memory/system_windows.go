package memory

import (
	"syscall"
	"unsafe"
)

// memoryStatusEx is Windows' MEMORYSTATUSEX.
type memoryStatusEx struct {
	length, memoryLoad                    uint32
	totalPhys, availPhys                  uint64
	totalPageFile, availPageFile          uint64
	totalVirtual, availVirtual, availExtd uint64
}

// system returns the available physical memory (GlobalMemoryStatusEx).
func system() Info {
	proc := syscall.NewLazyDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")
	if proc.Find() != nil {
		return Info{}
	}
	var st memoryStatusEx
	st.length = uint32(unsafe.Sizeof(st))
	if r, _, _ := proc.Call(uintptr(unsafe.Pointer(&st))); r == 0 {
		return Info{}
	}
	return Info{Bytes: st.availPhys, Source: "available physical memory (GlobalMemoryStatusEx)", Known: true}
}
