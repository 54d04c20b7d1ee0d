package npy

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Rows gives, for every block of rows, ReadFile's values of those rows:
// C and Fortran order (2-d and 3-d), several dtypes and byte orders,
// one-dimensional arrays, blocks of every length.
func TestRows(t *testing.T) {
	dir := t.TempDir()
	f32 := func(vals []float64) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(float32(v)))
		}
		return b
	}
	i16 := func(vals []float64) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint16(b, uint16(int16(v)))
		}
		return b
	}
	seq := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i*7%23) - 11.5
		}
		return v
	}
	ints := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i*7%23) - 11
		}
		return v
	}
	cases := []struct {
		name string
		file []byte
	}{
		{"f8 C 2-d", npyFile(1, dict("<f8", "(7, 3)", false), 64, f64s(seq(21)...))},
		{"f8 Fortran 2-d", npyFile(1, dict("<f8", "(7, 3)", true), 64, f64s(seq(21)...))},
		{"f8 Fortran 3-d", npyFile(1, dict("<f8", "(2, 3, 4)", true), 64, f64s(fortran234()...))},
		{"f4 big-endian C 3-d", npyFile(1, dict(">f4", "(5, 2, 2)", false), 64, f32(seq(20)))},
		{"i2 1-d", npyFile(1, dict("<i2", "(9,)", false), 64, i16(ints(9)))},
		{"empty rows", npyFile(1, dict("<f8", "(0, 3)", false), 64, nil)},
	}
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".npy")
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := OpenRows(path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(r.Shape(), want.Shape) {
			t.Errorf("%s: shape %v, want %v", c.name, r.Shape(), want.Shape)
		}
		n, w := want.Shape[0], r.RowLen()
		var buf []float64
		for lo := 0; lo <= n; lo++ {
			for hi := lo; hi <= n; hi++ {
				got, err := r.Read(lo, hi, buf)
				if err != nil {
					t.Fatalf("%s: rows [%d, %d): %v", c.name, lo, hi, err)
				}
				if !slices.Equal(got, want.Data[lo*w:hi*w]) {
					t.Errorf("%s: rows [%d, %d) = %v, want %v", c.name, lo, hi, got, want.Data[lo*w:hi*w])
				}
				buf = got
			}
		}
		if _, err := r.Read(0, n+1, nil); err == nil || !strings.Contains(err.Error(), "rows [0,") {
			t.Errorf("%s: rows past the end: %v", c.name, err)
		}
		r.Close()
	}
}

// A file whose size disagrees with its header, a scalar and a missing
// file are refused, naming the path.
func TestOpenRowsErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"short", npyFile(1, dict("<f8", "(3, 2)", false), 64, f64s(1, 2, 3)), "truncated data"},
		{"long", npyFile(1, dict("<f8", "(1, 2)", false), 64, f64s(1, 2, 3)), "extra data"},
		{"scalar", npyFile(1, dict("<f8", "()", false), 64, f64s(1)), "a scalar has no rows"},
		{"not npy", []byte("hello"), "not a .npy file"},
	} {
		path := filepath.Join(dir, c.name+".npy")
		os.WriteFile(path, c.file, 0o644)
		if _, err := OpenRows(path); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want %q and the path", c.name, err, c.want)
		}
	}
	if _, err := OpenRows(filepath.Join(dir, "missing.npy")); err == nil {
		t.Error("a missing file was opened")
	}
}
