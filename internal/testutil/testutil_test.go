package testutil

import (
	"math"
	"strings"
	"testing"
)

func TestSameBits(t *testing.T) {
	nan1 := math.Float64frombits(0x7ff8000000000001) // math.NaN()
	nan2 := math.Float64frombits(0xfff8000000000000) // 0/0 on amd64
	cases := []struct {
		a, b float64
		want bool
	}{
		{1, 1, true},
		{1, math.Nextafter(1, 2), false},
		{0, math.Copysign(0, -1), false},
		{nan1, nan2, true},
		{nan1, 1, false},
		{1, nan2, false},
		{math.Inf(1), math.Inf(1), true},
		{math.Inf(1), math.Inf(-1), false},
	}
	for _, c := range cases {
		if got := SameBits(c.a, c.b); got != c.want {
			t.Errorf("SameBits(%v [%#x], %v [%#x]) = %v, want %v", c.a, math.Float64bits(c.a), c.b, math.Float64bits(c.b), got, c.want)
		}
	}
}

func TestFirstDiffAndMaxRelErr(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name      string
		got, want []float64
		floor     float64
		first     int
		count     int
		maxErr    float64
		at        int
	}{
		{"equal", []float64{1, 2, nan}, []float64{1, 2, nan}, 0, -1, 0, 0, -1},
		{"empty", nil, []float64{}, 0, -1, 0, 0, -1},
		{"one ulp", []float64{1, 2, 3}, []float64{1, 2, math.Nextafter(3, 4)}, 0, 2, 1, 0x1p-52 * 2 / math.Nextafter(3, 4), 2},
		{"nan against number", []float64{1, nan}, []float64{1, 1}, 0, 1, 1, math.Inf(1), 1},
		{"largest of two", []float64{1.5, 2.2}, []float64{1, 2}, 0, 0, 2, 0.5, 0},
		{"floor near zero", []float64{0.25, 1}, []float64{0, 1}, 0.5, 0, 1, 0.5, 0},
		{"no floor at zero", []float64{1e-20, 1}, []float64{0, 1}, 0, 0, 1, math.Inf(1), 0},
		{"signed zero", []float64{1, 0}, []float64{1, math.Copysign(0, -1)}, 0, 1, 1, 0, 1},
		{"shorter got", []float64{1}, []float64{1, 2}, 0, 1, 0, math.Inf(1), 1},
		{"longer got", []float64{1, 2, 3}, []float64{1, 2}, 0, 2, 0, math.Inf(1), 2},
	}
	for _, c := range cases {
		if got := FirstDiff(c.got, c.want); got != c.first {
			t.Errorf("%s: FirstDiff = %d, want %d", c.name, got, c.first)
		}
		if got := EqualBits(c.got, c.want); got != (c.first < 0) {
			t.Errorf("%s: EqualBits = %v, want %v", c.name, got, c.first < 0)
		}
		if got := CountDiff(c.got, c.want); got != c.count {
			t.Errorf("%s: CountDiff = %d, want %d", c.name, got, c.count)
		}
		e, at := MaxRelErr(c.got, c.want, c.floor)
		if e != c.maxErr || at != c.at {
			t.Errorf("%s: MaxRelErr = %g at %d, want %g at %d", c.name, e, at, c.maxErr, c.at)
		}
	}
}

func TestDiffReport(t *testing.T) {
	if r := DiffReport("y", []float64{1, math.NaN()}, []float64{1, math.NaN()}, 0); r != "" {
		t.Errorf("equal slices: report %q, want none", r)
	}
	r := DiffReport("y_final", []float64{1, 2, 3.5}, []float64{1, 2, 3}, 0)
	for _, part := range []string{"y_final:", "index 2 of 3", "got 3.5 (0x400c000000000000)", "want 3 (0x4008000000000000)", "1 differ", "0.167 at index 2"} {
		if !strings.Contains(r, part) {
			t.Errorf("report %q lacks %q", r, part)
		}
	}
	if r := DiffReport("s", []float64{1}, []float64{1, 2}, 0); !strings.Contains(r, "length 1, want 2") {
		t.Errorf("report %q does not give the lengths", r)
	}
}

func TestIdenticalBits(t *testing.T) {
	nan1 := math.Float64frombits(0x7ff8000000000001)
	nan2 := math.Float64frombits(0xfff8000000000000)
	cases := []struct {
		a, b []float64
		want bool
	}{
		{[]float64{1, nan1}, []float64{1, nan1}, true},
		{[]float64{1, nan1}, []float64{1, nan2}, false},
		{[]float64{0}, []float64{math.Copysign(0, -1)}, false},
		{[]float64{1}, []float64{1, 1}, false},
		{nil, []float64{}, true},
	}
	for _, c := range cases {
		if got := IdenticalBits(c.a, c.b); got != c.want {
			t.Errorf("IdenticalBits(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

type recorder struct{ msgs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, format)
}

func TestCheckBits(t *testing.T) {
	var r recorder
	if !CheckBits(&r, "a", []float64{1}, []float64{1}) || len(r.msgs) != 0 {
		t.Errorf("equal slices: CheckBits reported %v", r.msgs)
	}
	if CheckBits(&r, "a", []float64{1}, []float64{2}) || len(r.msgs) != 1 {
		t.Errorf("different slices: CheckBits returned true or reported %d errors", len(r.msgs))
	}
}

// TestLowerCond checks LowerCond on matrices whose condition is known:
// the identity (1), diag(2) with one entry below (‖L‖∞ = 5, L⁻¹ =
// [[1/2, 0], [−3/4, 1/2]], ‖L⁻¹‖∞ = 5/4: 25/4).
func TestLowerCond(t *testing.T) {
	for _, c := range []struct {
		diag  float64
		lower [][]float64
		want  float64
	}{
		{1, [][]float64{{}, {0}, {0, 0}}, 1},
		{2, [][]float64{{}, {3}}, 25.0 / 4},
	} {
		if got := LowerCond(c.diag, c.lower); math.Abs(got-c.want) > 1e-15*c.want {
			t.Errorf("LowerCond(%v, %v) = %v, want %v", c.diag, c.lower, got, c.want)
		}
	}
}
