package npy

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// Float64Writer writes WriteFloat64's bytes however the values are cut,
// and refuses too many values or too few.
func TestFloat64Writer(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, shape := range [][]int{{0}, {1}, {7, 3}, {100000, 3}, {5, 2, 4}} {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float64, n)
		for i := range data {
			data[i] = rng.NormFloat64()
		}
		var want bytes.Buffer
		if err := WriteFloat64(&want, shape, data); err != nil {
			t.Fatal(err)
		}
		for _, piece := range []int{1, 3, 1000, n + 1} {
			var got bytes.Buffer
			fw, err := NewFloat64Writer(&got, shape)
			if err != nil {
				t.Fatal(err)
			}
			for lo := 0; lo < n; lo += piece {
				if err := fw.Append(data[lo:min(n, lo+piece)]); err != nil {
					t.Fatal(err)
				}
			}
			if err := fw.Finish(); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("shape %v in pieces of %d: %v, bytes equal %v", shape, piece, err, bytes.Equal(got.Bytes(), want.Bytes()))
			}
		}
	}
	var b bytes.Buffer
	fw, _ := NewFloat64Writer(&b, []int{2})
	if err := fw.Append([]float64{1}); err != nil {
		t.Fatal(err)
	}
	if err := fw.Finish(); err == nil || !strings.Contains(err.Error(), "1 of the shape's 2") {
		t.Errorf("short: %v", err)
	}
	if err := fw.Append([]float64{2, 3}); err == nil || !strings.Contains(err.Error(), "1 values past") {
		t.Errorf("long: %v", err)
	}
	if _, err := NewFloat64Writer(&b, []int{-1}); err == nil {
		t.Error("a negative dimension was accepted")
	}
}

// Int32Writer writes WriteInt32's bytes however the values are cut.
func TestInt32Writer(t *testing.T) {
	data := make([]int32, 1000)
	for i := range data {
		data[i] = int32(i*7919 - 500000)
	}
	var want bytes.Buffer
	if err := WriteInt32(&want, []int{1000}, data); err != nil {
		t.Fatal(err)
	}
	for _, piece := range []int{1, 7, 1000} {
		var got bytes.Buffer
		iw, err := NewInt32Writer(&got, []int{1000})
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < len(data); lo += piece {
			if err := iw.Append(data[lo:min(len(data), lo+piece)]); err != nil {
				t.Fatal(err)
			}
		}
		if err := iw.Finish(); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("pieces of %d: %v, bytes equal %v", piece, err, bytes.Equal(got.Bytes(), want.Bytes()))
		}
	}
	var b bytes.Buffer
	iw, _ := NewInt32Writer(&b, []int{1})
	if err := iw.Append([]int32{1, 2}); err == nil || !strings.Contains(err.Error(), "Int32Writer: 1 values past") {
		t.Errorf("long: %v", err)
	}
}
