// Package cudaemu runs CUDA kernel source on the host, for tests: a
// header (Header, cuda_emu.h) emulates the CUDA built-ins that
// gradsolve's generated kernels use — the qualifiers (__global__,
// __device__, __host__, __forceinline__, __constant__), the built-in
// variables threadIdx, blockIdx, blockDim and gridDim, the intrinsics
// __dmul_rn, __double_as_longlong and their kin — and runs a launch as
// loops over the grid (gs_emu_launch), so that a kernel's source
// compiles with the system C++ compiler into a host program. A kernel
// whose threads do not communicate (each trajectory on its own thread,
// as in package sym/emitcuda) computes there what it computes on a
// GPU, operation for operation, provided both sides do IEEE double
// arithmetic with no contraction of products into fused multiply–adds:
// Flags turns contraction off here, and the kernels round their
// products explicitly (__dmul_rn) for the device.
//
// Compiler finds the compiler, Build compiles a translation unit once
// per content hash into a cache directory, and Run executes the
// program with its input on stdin.
package cudaemu

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Header is cuda_emu.h, the emulation of the CUDA built-ins. Build
// writes it beside the source it compiles, so that the source includes
// it as "cuda_emu.h".
//
//go:embed cuda_emu.h
var Header string

// HeaderName is the name under which sources include Header.
const HeaderName = "cuda_emu.h"

// Flags are the compiler flags of Build: C++17, optimised, with no
// contraction of a product and a sum into a fused multiply–add and no
// value-changing optimisation, so that every operation is the IEEE
// operation the source names.
var Flags = []string{"-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math", "-fno-finite-math-only", "-w"}

// ErrNoCompiler is returned by Compiler when no C++ compiler is found.
var ErrNoCompiler = errors.New("cudaemu: no C++ compiler: set CXX or put c++, g++ or clang++ on PATH")

// Compiler returns the path of the C++ compiler to use: $CXX when set
// (a name on PATH or a path), else the first of c++, g++ and clang++
// on PATH; or ErrNoCompiler.
func Compiler() (string, error) {
	if cxx := strings.TrimSpace(os.Getenv("CXX")); cxx != "" {
		p, err := exec.LookPath(cxx)
		if err != nil {
			return "", fmt.Errorf("cudaemu: CXX=%q: %w", cxx, err)
		}
		return p, nil
	}
	for _, name := range []string{"c++", "g++", "clang++"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoCompiler
}

// Build compiles src, a C++ translation unit that includes "cuda_emu.h"
// (and, for its input and output, "emu_io.h"),
// with compiler cxx and Flags into an executable in dir, and returns
// its path. The executable is named by a hash of the source, the
// header, the compiler's path and the flags; when it exists already it
// is reused without compiling, so that a test compiles each distinct
// source once. Concurrent Builds of one source are safe: each compiles
// to a name of its own and renames the result into place. A failed
// compile returns an error holding the compiler's messages.
func Build(ctx context.Context, cxx, dir string, src []byte) (string, error) {
	h := sha256.New()
	for _, part := range [][]byte{src, []byte(Header), []byte(IOHeader), []byte(cxx), []byte(strings.Join(Flags, " "))} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	key := hex.EncodeToString(h.Sum(nil))[:24]
	exe := filepath.Join(dir, "emu-"+key)
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cudaemu: %w", err)
	}
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("cudaemu: %w", err)
	}
	defer os.RemoveAll(work)
	for name, text := range map[string]string{HeaderName: Header, IOHeaderName: IOHeader} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			return "", fmt.Errorf("cudaemu: %w", err)
		}
	}
	srcPath := filepath.Join(work, "main.cpp")
	if err := os.WriteFile(srcPath, src, 0o644); err != nil {
		return "", fmt.Errorf("cudaemu: %w", err)
	}
	tmp := filepath.Join(work, "a.out")
	args := append(append([]string(nil), Flags...), "-I", work, "-o", tmp, srcPath)
	cmd := exec.CommandContext(ctx, cxx, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := stderr.String()
		if len(msg) > 8000 {
			msg = msg[:8000] + "\n…"
		}
		return "", fmt.Errorf("cudaemu: %s %s: %w\n%s", filepath.Base(cxx), strings.Join(Flags, " "), err, msg)
	}
	if err := os.Rename(tmp, exe); err != nil {
		return "", fmt.Errorf("cudaemu: %w", err)
	}
	return exe, nil
}

// Run executes the program exe with stdin as its standard input and
// returns its standard output. A program that fails returns an error
// with its exit status and standard error.
func Run(ctx context.Context, exe string, stdin []byte) ([]byte, error) {
	cmd := exec.CommandContext(ctx, exe)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("cudaemu: %s: %w\n%s", filepath.Base(exe), err, stderr.String())
	}
	return stdout.Bytes(), nil
}
