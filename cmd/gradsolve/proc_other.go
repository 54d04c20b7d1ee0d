//go:build !unix

package main

// processAlive cannot tell on this system, so it says yes: a staging
// directory left by a killed run stays until removed by hand.
func processAlive(pid int) bool { return true }
