// Package npy reads and writes NumPy .npy files: the arrays that the
// gradsolve command exchanges with Python users (initial states,
// parameters, results).
//
// The format is NumPy's own (NEP 1, numpy.lib.format): the magic
// string "\x93NUMPY", a major and minor version byte, the length of the
// header as a little-endian uint16 (version 1.0) or uint32 (versions
// 2.0 and 3.0), then the header itself, an ASCII Python dict literal
//
//	{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
//
// padded with spaces and a final '\n', then the raw array data.
//
// Reading accepts float, integer and bool dtypes of either byte order
// and converts every element to float64 exactly (see Read); C or
// Fortran order; any header alignment. Writing produces version 1.0
// files (2.0 only when the header would not fit a uint16 length) that
// are byte for byte what NumPy ≥ 1.24's np.save writes for the same
// array: C order, dtype '<f8' (WriteFloat64) or '<i4' (WriteInt32),
// the header padded so that the data starts at a multiple of 64 bytes.
//
// Arrays are always returned and taken in C order (row-major): element
// (i, j) of a shape (m, n) array is at index i*n + j.
package npy

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Array is an n-dimensional array of float64 in C order (row-major):
// the last index varies fastest. Shape is empty for a 0-d (scalar)
// array, which has exactly one element. len(Data) is always the product
// of Shape for arrays that Read returns.
type Array struct {
	Shape []int
	Data  []float64
}

// Dims returns the number of dimensions of a (0 for a scalar, and for
// a nil *Array).
func (a *Array) Dims() int {
	if a == nil {
		return 0
	}
	return len(a.Shape)
}

// Check reports whether a's shape is one of the allowed shapes. In an
// allowed shape, -1 matches any length along that axis (and only that
// axis; the number of dimensions must match exactly). It returns nil on
// a match, and otherwise an error that starts with name and shows the
// actual and the allowed shapes in Python's tuple notation, with -1
// shown as *:
//
//	--params p.npy: shape (1000, 2): want (1000, 3)
//	y0.npy: shape (2,): want (*, 3) or (3,)
//
// A caller that wants to say what the axes mean can add that to the
// error, e.g. fmt.Errorf("%w (n × params)", err), which gives
//
//	--params p.npy: shape (1000, 2): want (1000, 3) (n × params)
//
// With no allowed shapes every shape is rejected. An empty name leaves
// the prefix off.
func (a *Array) Check(name string, shapes ...[]int) error {
	prefix := ""
	if name != "" {
		prefix = name + ": "
	}
	if a == nil {
		return errors.New(prefix + "no array")
	}
	for _, s := range shapes {
		if shapeMatches(a.Shape, s) {
			return nil
		}
	}
	want := make([]string, len(shapes))
	for i, s := range shapes {
		want[i] = formatShape(s, true)
	}
	w := strings.Join(want, " or ")
	if len(shapes) == 0 {
		w = "no shape allowed"
	}
	return errors.New(prefix + "shape " + formatShape(a.Shape, false) + ": want " + w)
}

// shapeMatches reports whether got equals want, where -1 in want
// matches any length.
func shapeMatches(got, want []int) bool {
	if len(got) != len(want) {
		return false
	}
	for i, w := range want {
		if w != -1 && got[i] != w {
			return false
		}
	}
	return true
}

// formatShape writes shape as a Python tuple: "()", "(3,)", "(2, 3)".
// With wild set, -1 is written as "*".
func formatShape(shape []int, wild bool) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		if wild && d == -1 {
			b.WriteByte('*')
		} else {
			b.WriteString(strconv.Itoa(d))
		}
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// maxElements bounds the number of elements of an array: its float64
// data, and any dtype's raw data (at most 8 bytes an element), must fit
// in an int byte count.
const maxElements = math.MaxInt / 8

// numElements returns the product of shape, or an error if a dimension
// is negative or the product of the non-zero dimensions exceeds
// maxElements. Like NumPy, which refuses to create such an array, it
// rejects huge dimensions even beside a zero one.
func numElements(shape []int) (int, error) {
	n, zero := 1, false
	for _, d := range shape {
		switch {
		case d < 0:
			return 0, errors.New("negative dimension in shape " + formatShape(shape, false))
		case d == 0:
			zero = true
		case n > maxElements/d:
			return 0, errors.New("shape " + formatShape(shape, false) + " has too many elements")
		default:
			n *= d
		}
	}
	if zero {
		return 0, nil
	}
	return n, nil
}
