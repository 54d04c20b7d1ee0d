//go:build unix

package main

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this id exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// lockDir takes an exclusive lock on the directory (flock), so that two
// runs that write into it commit one after the other; the returned
// function releases it. Where the lock cannot be taken the commit goes
// ahead unlocked.
func lockDir(dir string) func() {
	fd, err := syscall.Open(dir, syscall.O_RDONLY, 0)
	if err != nil {
		return func() {}
	}
	if syscall.Flock(fd, syscall.LOCK_EX) != nil {
		syscall.Close(fd)
		return func() {}
	}
	return func() { syscall.Flock(fd, syscall.LOCK_UN); syscall.Close(fd) }
}
