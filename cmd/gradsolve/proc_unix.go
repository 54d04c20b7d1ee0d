//go:build unix

package main

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this id exists (in this
// process's PID namespace).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// lockDir takes an exclusive lock on the directory (flock), so that two
// runs that write into it commit one after the other; the returned
// function releases it. Where the lock cannot be taken the commit goes
// ahead unlocked.
func lockDir(dir string) func() {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return func() {}
	}
	if syscall.Flock(fd, syscall.LOCK_EX) != nil {
		syscall.Close(fd)
		return func() {}
	}
	return func() { syscall.Flock(fd, syscall.LOCK_UN); syscall.Close(fd) }
}

// tryLock takes an exclusive flock on path without waiting. It returns
// lockTaken and the function that releases the lock, lockBusy when
// another open file holds it (a live run, in whatever process or PID
// namespace: the kernel drops a process's locks when it dies, SIGKILL
// included), or lockUnknown where the file system takes no locks.
func tryLock(path string) (func(), lockState) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, lockUnknown
	}
	switch err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); {
	case err == nil:
		return func() { syscall.Flock(fd, syscall.LOCK_UN); syscall.Close(fd) }, lockTaken
	case errors.Is(err, syscall.EWOULDBLOCK):
		syscall.Close(fd)
		return nil, lockBusy
	default:
		syscall.Close(fd)
		return nil, lockUnknown
	}
}
