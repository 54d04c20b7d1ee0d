// Package testutil holds the comparisons of floating-point results that
// the tests of every package share: bitwise equality of float64 values
// and slices (NaN-aware, or exact to the NaN payload), the first index
// where two slices differ, the largest relative error with a floor, and
// a one-line report of how two slices differ.
//
// It is imported only by tests (it is a plain package, not a _test.go
// file, so that the tests of every package can use it), and it is
// internal: it is no part of the public API.
package testutil

import (
	"fmt"
	"math"
)

// SameBits reports whether a and b are the same float64 bit for bit,
// counting any two NaNs as the same (whatever their sign and payload,
// which arithmetic does not preserve) and a NaN as different from every
// number. +0 and −0 differ, as their bits do.
func SameBits(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// FirstDiff returns the first index i at which got[i] and want[i] are
// not SameBits, or −1 if the slices have the same length and none
// differs. If one slice is a prefix of the other, it returns the
// shorter length.
func FirstDiff(got, want []float64) int {
	n := min(len(got), len(want))
	for i := 0; i < n; i++ {
		if !SameBits(got[i], want[i]) {
			return i
		}
	}
	if len(got) != len(want) {
		return n
	}
	return -1
}

// EqualBits reports whether got and want have the same length and are
// SameBits element by element.
func EqualBits(got, want []float64) bool { return FirstDiff(got, want) < 0 }

// IdenticalBits reports whether got and want have the same length and
// the same bits element by element, NaN sign and payload included: for
// code that must carry values through unchanged (a file format's round
// trip, a copy), where SameBits's NaN-awareness would be too lenient.
func IdenticalBits(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			return false
		}
	}
	return true
}

// CountDiff returns how many of the elements the slices share (the
// first min(len(got), len(want))) are not SameBits.
func CountDiff(got, want []float64) int {
	c := 0
	for i := range min(len(got), len(want)) {
		if !SameBits(got[i], want[i]) {
			c++
		}
	}
	return c
}

// RelErr returns |got − want| / max(|want|, floor): 0 where the two are
// SameBits (two NaNs, or two infinities of one sign) or are +0 and −0,
// +Inf where only one is NaN or infinite. floor keeps values near zero from turning an
// absolute difference of rounding size into a large relative one; pass
// the scale below which an absolute error is what matters (0 gives the
// plain relative error, +Inf for a nonzero difference from want = 0).
func RelErr(got, want, floor float64) float64 {
	if SameBits(got, want) {
		return 0
	}
	d := math.Abs(got - want)
	switch {
	case math.IsNaN(d) || math.IsInf(d, 0):
		return math.Inf(1)
	case d == 0: // +0 against −0
		return 0
	}
	return d / math.Max(math.Abs(want), floor)
}

// MaxRelErr returns the largest RelErr(got[i], want[i], floor) over the
// slices, and the first index where it is reached among the elements
// that are not SameBits (−1 where every element is; +0 against −0 has
// error 0 but an index). Slices of different lengths give +Inf at the
// shorter length: a missing element is as wrong as it gets.
func MaxRelErr(got, want []float64, floor float64) (maxErr float64, at int) {
	at = -1
	n := min(len(got), len(want))
	for i := 0; i < n; i++ {
		if SameBits(got[i], want[i]) {
			continue
		}
		if e := RelErr(got[i], want[i], floor); at < 0 || e > maxErr {
			maxErr, at = e, i
		}
	}
	if len(got) != len(want) {
		return math.Inf(1), n
	}
	return maxErr, at
}

// DiffReport describes how got differs from want, bitwise, in one line
// that starts with name: the lengths if they differ, the first differing
// index with both values and their bits, how many elements differ, and
// the largest relative error (with floor, as in MaxRelErr) and its
// index. It returns "" when EqualBits(got, want).
func DiffReport(name string, got, want []float64, floor float64) string {
	i := FirstDiff(got, want)
	if i < 0 {
		return ""
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%s: length %d, want %d (first difference at index %d)", name, len(got), len(want), i)
	}
	e, at := MaxRelErr(got, want, floor)
	return fmt.Sprintf("%s: first difference at index %d of %d: got %v (%#016x), want %v (%#016x); %d differ; max relative error %.3g at index %d",
		name, i, len(got), got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]), CountDiff(got, want), e, at)
}

// TB is the part of testing.TB that CheckBits uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// CheckBits reports an error on t, with DiffReport's line (its relative
// error without a floor), unless got and want are bitwise equal; it
// returns whether they are.
func CheckBits(t TB, name string, got, want []float64) bool {
	t.Helper()
	if r := DiffReport(name, got, want, 0); r != "" {
		t.Errorf("%s", r)
		return false
	}
	return true
}
