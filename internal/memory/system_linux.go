package memory

import "syscall"

func system() Info {
	return lower(linuxInfo("/"), rlimitInfo("/", rlimit(syscall.RLIMIT_AS), rlimit(syscall.RLIMIT_DATA)))
}

// rlimit returns the soft limit of a resource, or unlimited when it
// cannot be read.
func rlimit(resource int) uint64 {
	var r syscall.Rlimit
	if syscall.Getrlimit(resource, &r) != nil {
		return unlimited
	}
	return uint64(r.Cur)
}
