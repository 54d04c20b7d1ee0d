package cudaemu

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
)

// IOHeader is emu_io.h, the C++ side of the wire format (Encoder,
// Decoder): gs_read_i64, gs_read_f64, gs_read_f64s and their writing
// counterparts. Build writes it beside the source, as IOHeaderName.
//
//go:embed emu_io.h
var IOHeader string

// IOHeaderName is the name under which sources include IOHeader.
const IOHeaderName = "emu_io.h"

// Encoder writes a program's input in the wire format of emu_io.h:
// little-endian 64-bit integers and IEEE binary64 values, in sequence.
type Encoder struct{ b []byte }

// Int appends an integer.
func (e *Encoder) Int(v int64) { e.b = binary.LittleEndian.AppendUint64(e.b, uint64(v)) }

// Float appends a float64, bit for bit.
func (e *Encoder) Float(v float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }

// Floats appends each value of v.
func (e *Encoder) Floats(v []float64) {
	for _, x := range v {
		e.Float(x)
	}
}

// Bytes returns the encoded input.
func (e *Encoder) Bytes() []byte { return e.b }

// Decoder reads a program's output in the wire format. Reading past the
// end sets Err and returns zeros.
type Decoder struct {
	b   []byte
	Err error
}

// NewDecoder returns a Decoder of b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

func (d *Decoder) next() uint64 {
	if len(d.b) < 8 {
		if d.Err == nil {
			d.Err = fmt.Errorf("cudaemu: output ends early (%d bytes left, want 8)", len(d.b))
		}
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// Int reads an integer.
func (d *Decoder) Int() int64 { return int64(d.next()) }

// Float reads a float64.
func (d *Decoder) Float() float64 { return math.Float64frombits(d.next()) }

// Floats reads n float64 values.
func (d *Decoder) Floats(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = d.Float()
	}
	return v
}

// Ints reads n integers.
func (d *Decoder) Ints(n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = d.Int()
	}
	return v
}

// Rest returns the number of bytes not read yet.
func (d *Decoder) Rest() int { return len(d.b) }
