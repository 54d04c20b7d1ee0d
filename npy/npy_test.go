package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gradsolve/gradsolve/internal/testutil"
)

// ---- helpers ----

// npyFile builds a .npy file by hand: magic, version major.0, the
// header length (uint16 for major 1, uint32 otherwise), header padded
// with spaces and a '\n' so the preamble is a multiple of align (no
// padding and no '\n' if align is 0), then data.
func npyFile(major byte, header string, align int, data []byte) []byte {
	lenBytes := 4
	if major == 1 {
		lenBytes = 2
	}
	if align > 0 {
		header += "\n"
		for (8+lenBytes+len(header))%align != 0 {
			header = header[:len(header)-1] + " \n"
		}
	}
	b := append([]byte(magic), major, 0)
	if lenBytes == 2 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(header)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(header)))
	}
	b = append(b, header...)
	return append(b, data...)
}

// dict returns a header dict as NumPy writes it.
func dict(descr, shape string, fortran bool) string {
	fo := "False"
	if fortran {
		fo = "True"
	}
	return fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fo, shape)
}

// raw encodes values with the given byte order; each value's Go type
// sets its size (float64, float32, int64, uint16, ...).
func raw(o binary.ByteOrder, vals ...any) []byte {
	var b []byte
	for _, v := range vals {
		b, _ = binary.Append(b, o, v)
	}
	return b
}

func f64s(vals ...float64) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// readBoth reads b with Read (from a reader that returns one byte at a
// time, to exercise short reads) and with ReadFile (from a file, which
// takes the size-aware path). Both must agree on success; it returns
// Read's result and both errors.
func readBoth(t *testing.T, b []byte) (*Array, error, error) {
	t.Helper()
	a, err := Read(iotest.OneByteReader(bytes.NewReader(b)))
	path := filepath.Join(t.TempDir(), "x.npy")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fa, ferr := ReadFile(path)
	if (err == nil) != (ferr == nil) {
		t.Fatalf("Read error %v, ReadFile error %v: they must agree", err, ferr)
	}
	if err == nil && (!slices.Equal(a.Shape, fa.Shape) || !testutil.IdenticalBits(a.Data, fa.Data)) {
		t.Fatalf("Read gives %v %v, ReadFile gives %v %v", a.Shape, a.Data, fa.Shape, fa.Data)
	}
	if ferr != nil && !strings.HasPrefix(ferr.Error(), path+": ") {
		t.Errorf("ReadFile error %q does not start with the path", ferr)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "npy: ") {
		t.Errorf("Read error %q does not start with npy: ", err)
	}
	return a, err, ferr
}

// checkPreamble checks the layout of a file that we wrote: a 1.0 (or,
// for huge headers, 2.0) preamble padded to a multiple of 64 bytes,
// ending in '\n', whose header parses as a C-order array of descr and
// shape, followed by exactly dataBytes bytes.
func checkPreamble(t *testing.T, b []byte, descr string, shape []int, dataBytes int) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte(magic)) {
		t.Fatalf("no magic: %q", b[:min(len(b), 10)])
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2:
		hlen, start = int(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		t.Fatalf("version %d.%d", b[6], b[7])
	}
	pre := start + hlen
	if pre%64 != 0 {
		t.Errorf("preamble is %d bytes, not a multiple of 64", pre)
	}
	if b[pre-1] != '\n' {
		t.Errorf("header ends in %q, want '\\n'", b[pre-1])
	}
	if len(b) != pre+dataBytes {
		t.Errorf("file is %d bytes, want preamble %d + data %d", len(b), pre, dataBytes)
	}
	h, err := parseHeader(b[start:pre])
	if err != nil {
		t.Fatalf("header does not parse: %v", err)
	}
	if h.descr != descr || h.fortran || !slices.Equal(h.shape, shape) {
		t.Errorf("header says %q fortran=%v shape %v, want %q false %v", h.descr, h.fortran, h.shape, descr, shape)
	}
}

var testShapes = [][]int{{}, {0}, {5}, {3, 4}, {2, 3, 4}}

// ---- writing ----

// TestRoundTripFloat64 writes float64 arrays of several shapes, checks
// the file's layout, and reads them back bit for bit (including NaN,
// infinities and -0).
func TestRoundTripFloat64(t *testing.T) {
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.SmallestNonzeroFloat64, math.MaxFloat64}
	for _, shape := range testShapes {
		t.Run(formatShape(shape, false), func(t *testing.T) {
			n, _ := numElements(shape)
			data := make([]float64, n)
			for i := range data {
				data[i] = float64(i)*1.5 - 7
				if i < len(special) {
					data[i] = special[i]
				}
			}
			var buf bytes.Buffer
			if err := WriteFloat64(&buf, shape, data); err != nil {
				t.Fatal(err)
			}
			checkPreamble(t, buf.Bytes(), "<f8", shape, 8*n)
			a, err, _ := readBoth(t, buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Shape, shape) || !testutil.IdenticalBits(a.Data, data) {
				t.Errorf("read back %v %v, want %v %v", a.Shape, a.Data, shape, data)
			}
			if a.Dims() != len(shape) {
				t.Errorf("Dims() = %d, want %d", a.Dims(), len(shape))
			}
		})
	}
}

// TestRoundTripInt32 does the same for int32, including the extremes.
func TestRoundTripInt32(t *testing.T) {
	for _, shape := range testShapes {
		t.Run(formatShape(shape, false), func(t *testing.T) {
			n, _ := numElements(shape)
			data := make([]int32, n)
			want := make([]float64, n)
			for i := range data {
				data[i] = int32(i*1000 - 3)
				switch i {
				case 0:
					data[i] = math.MinInt32
				case 1:
					data[i] = math.MaxInt32
				}
				want[i] = float64(data[i])
			}
			var buf bytes.Buffer
			if err := WriteInt32(&buf, shape, data); err != nil {
				t.Fatal(err)
			}
			checkPreamble(t, buf.Bytes(), "<i4", shape, 4*n)
			a, err, _ := readBoth(t, buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Shape, shape) || !testutil.IdenticalBits(a.Data, want) {
				t.Errorf("read back %v %v, want %v %v", a.Shape, a.Data, shape, want)
			}
		})
	}
}

// TestGolden checks that we write exactly the bytes NumPy's np.save
// writes: the header dict in NumPy's key order and spacing, padded with
// spaces so that magic (6) + version (2) + length (2) + header = 128
// bytes, the header length field 118 = 0x76, then '\n' and the data.
// (Checked against NumPy 1.24's output.)
func TestGolden(t *testing.T) {
	golden := func(header string, data []byte) []byte {
		const hlen = 128 - 10
		h := header + strings.Repeat(" ", hlen-1-len(header)) + "\n"
		return slices.Concat([]byte("\x93NUMPY\x01\x00\x76\x00"), []byte(h), data)
	}
	tests := []struct {
		name  string
		write func(io.Writer) error
		want  []byte
	}{
		{"arange(6.0).reshape(2,3)",
			func(w io.Writer) error { return WriteFloat64(w, []int{2, 3}, []float64{0, 1, 2, 3, 4, 5}) },
			golden("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64s(0, 1, 2, 3, 4, 5))},
		{"arange(4, dtype=int32)",
			func(w io.Writer) error { return WriteInt32(w, []int{4}, []int32{0, 1, 2, 3}) },
			golden("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", raw(binary.LittleEndian, int32(0), int32(1), int32(2), int32(3)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), tt.want) {
				t.Errorf("wrote\n%q\nwant\n%q", buf.Bytes(), tt.want)
			}
		})
	}
}

// TestHeaderPadding checks NumPy's padding rules (the expected lengths
// are np.save's, NumPy 1.24): the dict, then 21 minus the digits of the
// first dimension in growth spaces, then padding and '\n' up to the next
// multiple of 64 of the whole preamble (10 bytes before the header),
// which is 64 bytes more when the header alone would end exactly on one.
func TestHeaderPadding(t *testing.T) {
	tests := []struct {
		shape []int
		pre   int // expected preamble length
	}{
		{[]int{}, 128},                    // 55-byte dict, no growth spaces: 10+55+1 → 128
		{[]int{7}, 128},                   // 57 + 20 growth spaces: 10+77+1 → 128
		{[]int{1, 1, 1, 1, 1, 1, 1}, 128}, // 74 + 20: 10+94+1 → 128
		// 10 + 97 + 20 + 1 = 128 exactly: NumPy adds 64 spaces → 192
		{[]int{0, 1, 1, 1, 10, 10, 10, 10, 10, 10, 10, 10}, 192},
		{slices.Repeat([]int{1}, 20), 192}, // 10 + 113 + 20 + 1 = 144 → 192
	}
	for _, tt := range tests {
		b := encodeHeader("<f8", tt.shape)
		if len(b) != tt.pre {
			t.Errorf("shape %v: preamble %d bytes, want %d: %q", tt.shape, len(b), tt.pre, b)
		}
	}
}

// TestWriteVersion2 writes an array whose header exceeds 65535 bytes
// (22000 dimensions of length 1, 3 bytes each), which needs version 2.0
// with a uint32 header length, and reads it back.
func TestWriteVersion2(t *testing.T) {
	shape := slices.Repeat([]int{1}, 22000)
	var buf bytes.Buffer
	if err := WriteFloat64(&buf, shape, []float64{42}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if b[6] != 2 || b[7] != 0 {
		t.Fatalf("version %d.%d, want 2.0", b[6], b[7])
	}
	checkPreamble(t, b, "<f8", shape, 8)
	a, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Shape) != len(shape) || a.Data[0] != 42 {
		t.Errorf("read back %d dims, data %v", len(a.Shape), a.Data)
	}
	// A small header stays at version 1.0.
	buf.Reset()
	WriteFloat64(&buf, slices.Repeat([]int{1}, 1000), []float64{1})
	if buf.Bytes()[6] != 1 {
		t.Errorf("1000 dims: version %d, want 1", buf.Bytes()[6])
	}
}

type failWriter struct{ n int } // accepts n bytes, then fails

var errFail = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errFail
	}
	w.n -= len(p)
	return len(p), nil
}

// TestWriteErrors checks that bad arguments are rejected before anything
// is written, and that the writer's errors are returned.
func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name  string
		write func(io.Writer) error
		want  string
	}{
		{"too little data", func(w io.Writer) error { return WriteFloat64(w, []int{2, 3}, make([]float64, 5)) }, "shape (2, 3) has 6 elements, data has 5"},
		{"too much data", func(w io.Writer) error { return WriteInt32(w, []int{4}, make([]int32, 5)) }, "shape (4,) has 4 elements, data has 5"},
		{"scalar needs one value", func(w io.Writer) error { return WriteFloat64(w, nil, nil) }, "shape () has 1 elements, data has 0"},
		{"negative dim", func(w io.Writer) error { return WriteFloat64(w, []int{-1, 0}, nil) }, "negative dimension"},
		{"overflow", func(w io.Writer) error { return WriteFloat64(w, []int{1 << 40, 1 << 40}, nil) }, "too many elements"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := tt.write(&buf)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes before failing", buf.Len())
			}
		})
	}
	// The writer fails in the header, and in the data.
	for _, n := range []int{0, 100, 128 + 8*5000} {
		err := WriteFloat64(&failWriter{n: n}, []int{10000}, make([]float64, 10000))
		if !errors.Is(err, errFail) {
			t.Errorf("failing after %d bytes: error %v, want %v", n, err, errFail)
		}
	}
}

// ---- reading ----

// TestRead reads hand-made files of every supported dtype, order,
// version and header spelling.
func TestRead(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	c23 := []float64{0, 1, 2, 3, 4, 5} // arange(6).reshape(2, 3)
	tests := []struct {
		name  string
		file  []byte
		shape []int
		data  []float64
	}{
		// Versions and alignment.
		{"v1.0", npyFile(1, dict("<f8", "(2, 3)", false), 64, f64s(c23...)), []int{2, 3}, c23},
		{"v2.0", npyFile(2, dict("<f8", "(2, 3)", false), 64, f64s(c23...)), []int{2, 3}, c23},
		{"v3.0 (utf-8 header)", npyFile(3, dict("<f8", "(2, 3)", false), 64, f64s(c23...)), []int{2, 3}, c23},
		{"old 16-byte alignment", npyFile(1, dict("<f8", "(2, 3)", false), 16, f64s(c23...)), []int{2, 3}, c23},
		{"no padding, no newline", npyFile(1, dict("<f8", "(2, 3)", false), 0, f64s(c23...)), []int{2, 3}, c23},

		// Fortran order: element (i, j) of a 2×3 array is stored at j*2 + i.
		{"fortran 2x3", npyFile(1, dict("<f8", "(2, 3)", true), 64, f64s(0, 3, 1, 4, 2, 5)), []int{2, 3}, c23},
		// (2, 3, 4): element (i, j, k) = 100i + 10j + k, stored at i + 2j + 6k.
		{"fortran 2x3x4", npyFile(1, dict("<f8", "(2, 3, 4)", true), 64, f64s(fortran234()...)), []int{2, 3, 4}, c234()},
		{"fortran 1-d is C order", npyFile(1, dict("<f8", "(3,)", true), 64, f64s(7, 8, 9)), []int{3}, []float64{7, 8, 9}},
		{"fortran empty", npyFile(1, dict("<f8", "(0, 3)", true), 64, nil), []int{0, 3}, []float64{}},

		// Dtypes, little-endian: every conversion is exact.
		{"<f4", npyFile(1, dict("<f4", "(3,)", false), 64, raw(le, float32(1.5), float32(-0.25), math.Float32frombits(1))), []int{3}, []float64{1.5, -0.25, float64(math.Float32frombits(1))}},
		{"<f2", npyFile(1, dict("<f2", "(5,)", false), 64, raw(le, uint16(0x3c00), uint16(0xc000), uint16(0x0001), uint16(0x7bff), uint16(0xfc00))), []int{5}, []float64{1, -2, math.Ldexp(1, -24), 65504, math.Inf(-1)}},
		{"<i8 up to ±2^53", npyFile(1, dict("<i8", "(3,)", false), 64, raw(le, int64(1<<53), int64(-1<<53), int64(-7))), []int{3}, []float64{1 << 53, -1 << 53, -7}},
		{"<u8", npyFile(1, dict("<u8", "(2,)", false), 64, raw(le, uint64(1<<53), uint64(3))), []int{2}, []float64{1 << 53, 3}},
		{"<i4", npyFile(1, dict("<i4", "(2,)", false), 64, raw(le, int32(math.MinInt32), int32(5))), []int{2}, []float64{math.MinInt32, 5}},
		{"<u4", npyFile(1, dict("<u4", "(1,)", false), 64, raw(le, uint32(math.MaxUint32))), []int{1}, []float64{math.MaxUint32}},
		{"<i2", npyFile(1, dict("<i2", "(2,)", false), 64, raw(le, int16(-32768), int16(300))), []int{2}, []float64{-32768, 300}},
		{"<u2", npyFile(1, dict("<u2", "(1,)", false), 64, raw(le, uint16(65535))), []int{1}, []float64{65535}},
		{"|i1", npyFile(1, dict("|i1", "(2,)", false), 64, []byte{0x80, 0x7f}), []int{2}, []float64{-128, 127}},
		{"|u1", npyFile(1, dict("|u1", "(2,)", false), 64, []byte{0, 255}), []int{2}, []float64{0, 255}},
		{"<u1", npyFile(1, dict("<u1", "(2,)", false), 64, []byte{0, 255}), []int{2}, []float64{0, 255}},
		{"|b1, any non-zero byte is true", npyFile(1, dict("|b1", "(4,)", false), 64, []byte{0, 1, 2, 255}), []int{4}, []float64{0, 1, 1, 1}},

		// Big-endian.
		{">f8", npyFile(1, dict(">f8", "(2,)", false), 64, raw(be, 1.25, -3.0)), []int{2}, []float64{1.25, -3}},
		{">f4", npyFile(1, dict(">f4", "(2,)", false), 64, raw(be, float32(1.25), float32(-3))), []int{2}, []float64{1.25, -3}},
		{">i4", npyFile(1, dict(">i4", "(2,)", false), 64, raw(be, int32(-2), int32(70000))), []int{2}, []float64{-2, 70000}},
		{">i8", npyFile(1, dict(">i8", "(2,)", false), 64, raw(be, int64(-2), int64(1)<<40)), []int{2}, []float64{-2, 1 << 40}},
		{">i2", npyFile(1, dict(">i2", "(1,)", false), 64, raw(be, int16(-2))), []int{1}, []float64{-2}},
		{">f8 fortran", npyFile(1, dict(">f8", "(2, 3)", true), 64, raw(be, 0.0, 3.0, 1.0, 4.0, 2.0, 5.0)), []int{2, 3}, c23},

		// Shape spellings.
		{"(3,)", npyFile(1, dict("<f8", "(3,)", false), 64, f64s(1, 2, 3)), []int{3}, []float64{1, 2, 3}},
		{"(3, )", npyFile(1, dict("<f8", "(3, )", false), 64, f64s(1, 2, 3)), []int{3}, []float64{1, 2, 3}},
		{"( 3 , )", npyFile(1, dict("<f8", "( 3 , )", false), 64, f64s(1, 2, 3)), []int{3}, []float64{1, 2, 3}},
		{"()", npyFile(1, dict("<f8", "()", false), 64, f64s(9)), []int{}, []float64{9}},
		{"( )", npyFile(1, dict("<f8", "( )", false), 64, f64s(9)), []int{}, []float64{9}},
		{"(2, 3)", npyFile(1, dict("<f8", "(2, 3)", false), 64, f64s(c23...)), []int{2, 3}, c23},
		{"(2,3)", npyFile(1, dict("<f8", "(2,3)", false), 64, f64s(c23...)), []int{2, 3}, c23},
		{"(2, 3,)", npyFile(1, dict("<f8", "(2, 3,)", false), 64, f64s(c23...)), []int{2, 3}, c23},
		{"(2, 3, )", npyFile(1, dict("<f8", "(2, 3, )", false), 64, f64s(c23...)), []int{2, 3}, c23},
		{"Python 2 longs (2L, 3L)", npyFile(1, dict("<f8", "(2L, 3L)", false), 64, f64s(c23...)), []int{2, 3}, c23},
		{"(0, 5)", npyFile(1, dict("<f8", "(0, 5)", false), 64, nil), []int{0, 5}, []float64{}},

		// Dict spellings: key order, quotes, trailing comma, whitespace.
		{"keys reordered, double quotes, no trailing comma",
			npyFile(1, `{"shape": (2,), "fortran_order": False, "descr": "<f8"}`, 64, f64s(1, 2)), []int{2}, []float64{1, 2}},
		{"newlines and tabs inside",
			npyFile(1, "{\n\t'descr' : '<f8' ,\n 'fortran_order':False,'shape':(2,)}", 64, f64s(1, 2)), []int{2}, []float64{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err, _ := readBoth(t, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Shape, tt.shape) || !testutil.IdenticalBits(a.Data, tt.data) {
				t.Errorf("got %v %v, want %v %v", a.Shape, a.Data, tt.shape, tt.data)
			}
		})
	}
}

func c234() []float64 {
	var d []float64
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				d = append(d, float64(100*i+10*j+k))
			}
		}
	}
	return d
}

func fortran234() []float64 {
	d := make([]float64, 24)
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				d[i+2*j+6*k] = float64(100*i + 10*j + k)
			}
		}
	}
	return d
}

// TestReadErrors checks that each kind of bad input gives an error (and
// no panic) whose message says what is wrong: it must contain want.
func TestReadErrors(t *testing.T) {
	good := func(descr, shape string, data []byte) []byte {
		return npyFile(1, dict(descr, shape, false), 64, data)
	}
	hugeV2 := append([]byte(magic), 2, 0)
	hugeV2 = binary.LittleEndian.AppendUint32(hugeV2, 1<<30)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "empty input"},
		{"bad magic", []byte("\x93NUMPX\x01\x00\x10\x00{}"), "not a .npy file"},
		{"text file", []byte("1.0 2.0 3.0\n"), "not a .npy file"},
		{"short magic", []byte("\x93NUM"), "truncated"},
		{"unsupported version 4.0", append([]byte(magic), 4, 0, 0, 0, 0, 0), "version 4.0"},
		{"unsupported version 1.1", append([]byte(magic), 1, 1, 0, 0), "version 1.1"},
		{"truncated header length", append([]byte(magic), 1, 0, 0x76), "truncated header length"},
		{"truncated header", good("<f8", "(2, 3)", f64s(c23()...))[:40], "truncated header"},
		{"header length over the limit", hugeV2, "exceeds the limit"},
		{"truncated data", good("<f8", "(2, 3)", f64s(0, 1, 2, 3, 4)), "truncated data"},
		{"truncated mid-element", good("<f8", "(2, 3)", f64s(c23()...)[:47]), "truncated data"},
		{"extra data", good("<f8", "(2, 3)", append(f64s(c23()...), 0)), "extra data"},
		{"second array appended", append(good("<f8", "(1,)", f64s(1)), good("<f8", "(1,)", f64s(2))...), "extra data"},
		{"huge shape vs file size", good("<f8", "(1099511627776,)", f64s(1, 2)), "needs 8796093022208 bytes"},
		{"shape product overflows", good("<f8", "(1099511627776, 1099511627776)", nil), "too many elements"},
		{"zero dim beside huge ones (NumPy: array is too big)", good("<f8", "(4611686018427387904, 4611686018427387904, 0)", nil), "too many elements"},
		{"dimension overflows int", good("<f8", "(99999999999999999999,)", nil), "too large"},
		{"negative shape", good("<f8", "(-1, 3)", nil), "negative dimension -1"},
		{"object dtype", good("|O", "(1,)", make([]byte, 8)), "object"},
		{"complex dtype", good("<c16", "(1,)", make([]byte, 16)), "complex"},
		{"string dtype", good("<U5", "(1,)", make([]byte, 20)), "string"},
		{"bytes dtype", good("|S5", "(1,)", make([]byte, 5)), "string"},
		{"datetime dtype", good("<M8[ns]", "(1,)", make([]byte, 8)), "datetime"},
		{"void dtype", good("|V8", "(1,)", make([]byte, 8)), "void"},
		{"structured descr", npyFile(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", 64, f64s(1)), "structured"},
		{"float128", good("<f16", "(1,)", make([]byte, 16)), `extended-precision float dtype "<f16" (np.longdouble) is not supported`},
		{"float96", good("<f12", "(1,)", make([]byte, 12)), "np.longdouble"},
		{"float24 is no dtype", good("<f3", "(1,)", make([]byte, 3)), `unsupported dtype "<f3"`},
		{"no byte order on f8", good("|f8", "(1,)", f64s(1)), "byte order"},
		{"native byte order", good("=f8", "(1,)", f64s(1)), "native byte order"},
		{"dtype name instead of descr", good("float64", "(1,)", f64s(1)), "unsupported dtype"},
		{"int64 beyond 2^53", good("<i8", "(2,)", raw(binary.LittleEndian, int64(1), int64(1<<53+1))), "9007199254740993"},
		{"int64 below -2^53", good(">i8", "(1,)", raw(binary.BigEndian, int64(math.MinInt64))), "-9223372036854775808"},
		{"uint64 beyond 2^53", good("<u8", "(1,)", raw(binary.LittleEndian, uint64(math.MaxUint64))), "18446744073709551615"},
		{"unparsable header", npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), ", 64, f64s(c23()...)), "cannot parse header"},
		{"unterminated string", npyFile(1, "{'descr': '<f8, 'fortran_order': False, 'shape': (2, 3)}", 64, f64s(c23()...)), "cannot parse header"},
		{"float in shape", good("<f8", "(2.5,)", nil), "only integers"},
		{"garbage after dict", npyFile(1, dict("<f8", "(1,)", false)+" x", 64, f64s(1)), "after the value"},
		{"header not a dict", npyFile(1, "[('descr', '<f8')]", 64, f64s(1)), "not a dict"},
		{"header is a string", npyFile(1, "'<f8'", 64, f64s(1)), "not a dict"},
		{"missing shape", npyFile(1, "{'descr': '<f8', 'fortran_order': False}", 64, f64s(1)), "no 'shape' key"},
		{"extra key", npyFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", 64, f64s(1)), "unexpected key"},
		{"fortran_order not a bool", npyFile(1, "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}", 64, f64s(1)), "fortran_order"},
		{"shape is a list", good("<f8", "[1]", f64s(1)), "not a tuple"},
		{"shape (3) is an int, not a tuple", good("<f8", "(3)", f64s(1, 2, 3)), "not a tuple"},
		{"shape has None", good("<f8", "(None,)", f64s(1)), "non-integer"},
		{"nested too deep", npyFile(1, strings.Repeat("(", 100)+strings.Repeat(")", 100), 64, nil), "nested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err, ferr := readBoth(t, tt.file)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read error %q does not contain %q", err, tt.want)
			}
			// ReadFile knows the size and may word size errors
			// differently, but names the same kind of problem.
			want := tt.want
			if strings.HasPrefix(want, "needs ") {
				want = "truncated data"
			}
			if !strings.Contains(ferr.Error(), want) {
				t.Errorf("ReadFile error %q does not contain %q", ferr, want)
			}
		})
	}
}

func c23() []float64 { return []float64{0, 1, 2, 3, 4, 5} }

// TestReadIOError checks that an I/O error from the reader is returned
// as is (wrapped), not reported as a format problem.
func TestReadIOError(t *testing.T) {
	b := npyFile(1, dict("<f8", "(1000,)", false), 64, make([]byte, 8000))
	for _, n := range []int{3, 9, 50, 100, 1000} {
		r := io.MultiReader(bytes.NewReader(b[:n]), iotest.ErrReader(errFail))
		if _, err := Read(r); !errors.Is(err, errFail) {
			t.Errorf("failing after %d bytes: error %v, want %v", n, err, errFail)
		}
	}
	// A reader that reports its error with the last bytes of data.
	if _, err := Read(iotest.DataErrReader(bytes.NewReader(b))); err != nil {
		t.Errorf("DataErrReader: %v", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.npy")); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.npy") {
		t.Errorf("missing file: error %v, want one naming the file and wrapping ErrNotExist", err)
	}
}

// ---- Check ----

// TestCheck covers exact shapes, the -1 wildcard, several allowed
// shapes and the message.
func TestCheck(t *testing.T) {
	tests := []struct {
		shape   []int
		name    string
		allowed [][]int
		want    string // "" for no error
	}{
		{[]int{1000, 3}, "p.npy", [][]int{{1000, 3}}, ""},
		{[]int{1000, 3}, "p.npy", [][]int{{-1, 3}}, ""},
		{[]int{5}, "p.npy", [][]int{{1000, 3}, {-1}}, ""},
		{[]int{}, "t.npy", [][]int{{}}, ""},
		{[]int{1000, 2}, "--params p.npy", [][]int{{1000, 3}}, "--params p.npy: shape (1000, 2): want (1000, 3)"},
		{[]int{3}, "y0.npy", [][]int{{-1, 3}, {3, 1}}, "y0.npy: shape (3,): want (*, 3) or (3, 1)"},
		{[]int{3, 2}, "params.npy", [][]int{{-1, 3}}, "params.npy: shape (3, 2): want (*, 3)"},
		{[]int{2, 3, 1}, "x", [][]int{{2, 3}}, "x: shape (2, 3, 1): want (2, 3)"}, // dims must match
		{[]int{4}, "", [][]int{{}}, "shape (4,): want ()"},
		{[]int{4}, "x", nil, "x: shape (4,): want no shape allowed"},
	}
	for _, tt := range tests {
		err := (&Array{Shape: tt.shape}).Check(tt.name, tt.allowed...)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("shape %v vs %v: unexpected error %v", tt.shape, tt.allowed, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("shape %v vs %v: error %v, want %q", tt.shape, tt.allowed, err, tt.want)
		}
	}
	// The caller adds what the axes mean.
	err := fmt.Errorf("%w (n × params)", (&Array{Shape: []int{1000, 2}}).Check("--params p.npy", []int{1000, 3}))
	if got, want := err.Error(), "--params p.npy: shape (1000, 2): want (1000, 3) (n × params)"; got != want {
		t.Errorf("wrapped: %q, want %q", got, want)
	}
	var nilArray *Array
	if err := nilArray.Check("x", []int{}); err == nil || nilArray.Dims() != 0 {
		t.Errorf("nil array: Check %v, Dims %d", err, nilArray.Dims())
	}
}

// ---- WriteFileAtomic ----

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestWriteFileAtomic checks that success leaves exactly the final file
// (and replaces an old one, keeping its mode), and that every kind of
// failure leaves no temporary file and the old contents, if any.
func TestWriteFileAtomic(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.npy")
		if err := WriteFloat64File(path, []int{2}, []float64{1, 2}); err != nil {
			t.Fatal(err)
		}
		if names := dirNames(t, dir); !slices.Equal(names, []string{"out.npy"}) {
			t.Errorf("directory holds %v, want only out.npy", names)
		}
		a, err := ReadFile(path)
		if err != nil || !slices.Equal(a.Data, []float64{1, 2}) {
			t.Errorf("read back %v, %v", a, err)
		}
		if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o644 {
			t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
		}
	})
	t.Run("replace keeps mode", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.npy")
		if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := WriteInt32File(path, []int{3}, []int32{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		a, err := ReadFile(path)
		if err != nil || !slices.Equal(a.Data, []float64{1, 2, 3}) {
			t.Errorf("read back %v, %v", a, err)
		}
		if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
			t.Errorf("replaced file mode %v, want 0600 as before", st.Mode().Perm())
		}
		if names := dirNames(t, dir); !slices.Equal(names, []string{"out.npy"}) {
			t.Errorf("directory holds %v, want only out.npy", names)
		}
	})
	t.Run("write func fails", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.npy")
		err := WriteFileAtomic(path, func(w io.Writer) error {
			w.Write(make([]byte, 1<<17)) // more than the buffer: some reaches the temp file
			return errFail
		})
		if !errors.Is(err, errFail) || !strings.Contains(err.Error(), path) {
			t.Errorf("error %v, want one naming %s and wrapping %v", err, path, errFail)
		}
		if names := dirNames(t, dir); len(names) != 0 {
			t.Errorf("directory holds %v, want nothing", names)
		}
	})
	t.Run("bad data leaves the old file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.npy")
		os.WriteFile(path, []byte("old"), 0o644)
		err := WriteFloat64File(path, []int{3}, []float64{1})
		if err == nil || !strings.Contains(err.Error(), "has 3 elements, data has 1") {
			t.Errorf("error %v, want a length mismatch", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "old" {
			t.Errorf("old file now holds %q", b)
		}
		if names := dirNames(t, dir); !slices.Equal(names, []string{"out.npy"}) {
			t.Errorf("directory holds %v, want only out.npy", names)
		}
	})
	t.Run("rename fails", func(t *testing.T) {
		// The target is a non-empty directory: everything succeeds
		// until the rename, and the temp file must still go.
		dir := t.TempDir()
		path := filepath.Join(dir, "out.npy")
		os.MkdirAll(filepath.Join(path, "sub"), 0o755)
		if err := WriteFloat64File(path, []int{1}, []float64{1}); err == nil {
			t.Error("no error")
		}
		if names := dirNames(t, dir); !slices.Equal(names, []string{"out.npy"}) {
			t.Errorf("directory holds %v, want only out.npy", names)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "no", "such", "out.npy")
		if err := WriteFloat64File(path, []int{1}, []float64{1}); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("error %v, want one naming %s", err, path)
		}
	})
	t.Run("directory is a file", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
		path := filepath.Join(dir, "f", "out.npy")
		if err := WriteFloat64File(path, []int{1}, []float64{1}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("unwritable directory", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("directory permissions differ on Windows")
		}
		dir := filepath.Join(t.TempDir(), "ro")
		os.Mkdir(dir, 0o500)
		defer os.Chmod(dir, 0o700)
		if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
			f.Close()
			t.Skip("running with privileges that ignore directory permissions (root?)")
		}
		path := filepath.Join(dir, "out.npy")
		if err := WriteFloat64File(path, []int{1}, []float64{1}); err == nil || !errors.Is(err, os.ErrPermission) {
			t.Errorf("error %v, want a permission error", err)
		}
	})
	t.Run("relative path", func(t *testing.T) {
		t.Chdir(t.TempDir())
		if err := WriteFloat64File("rel.npy", []int{1}, []float64{1}); err != nil {
			t.Fatal(err)
		}
		if names := dirNames(t, "."); !slices.Equal(names, []string{"rel.npy"}) {
			t.Errorf("directory holds %v, want only rel.npy", names)
		}
	})
}

// ---- fuzzing ----

// FuzzRead feeds Read arbitrary bytes. Properties: it never panics;
// the size-aware path (as ReadFile takes) agrees with the streaming one;
// on success len(Data) is the product of Shape; and writing the result
// with WriteFloat64 reads back to the same shape and the same bits.
func FuzzRead(f *testing.F) {
	le, be := binary.LittleEndian, binary.BigEndian
	seeds := [][]byte{
		npyFile(1, dict("<f8", "(2, 3)", false), 64, f64s(c23()...)),
		npyFile(1, dict("<f8", "()", false), 64, f64s(math.NaN())),
		npyFile(1, dict("<f8", "(0,)", false), 64, nil),
		npyFile(1, dict("<f8", "(2, 3)", true), 64, f64s(0, 3, 1, 4, 2, 5)),
		npyFile(2, dict("<f4", "(3,)", false), 64, raw(le, float32(1), float32(2), float32(3))),
		npyFile(1, dict("<f2", "(2,)", false), 16, raw(le, uint16(0x7e01), uint16(0x3c00))),
		npyFile(1, dict("<i8", "(2, 1)", false), 64, raw(le, int64(-5), int64(1<<53))),
		npyFile(1, dict(">i4", "(2, 2)", true), 64, raw(be, int32(1), int32(2), int32(3), int32(4))),
		npyFile(1, dict("|u1", "(1, 2, 2)", false), 0, []byte{1, 2, 3, 4}),
		npyFile(1, dict("|b1", "(3,)", false), 64, []byte{0, 1, 2}),
		npyFile(1, dict("<i2", "(2,)", false), 64, raw(le, int16(-1), int16(2))),
		npyFile(3, `{"shape": (2L,), "descr": ">f8", "fortran_order": False}`, 64, raw(be, 1.0, 2.0)),
		// Corrupt ones.
		npyFile(1, dict("<f8", "(2, 3)", false), 64, f64s(1, 2)),
		npyFile(1, dict("|O", "(1,)", false), 64, make([]byte, 8)),
		npyFile(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,)}", 64, f64s(1)),
		npyFile(1, dict("<f8", "(-1,)", false), 64, nil),
		[]byte("\x93NUMPY\x01\x00\xff\xff{"),
		[]byte("\x93NUMPY\x02\x00\x00\x00\x00\x01"),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	var ref bytes.Buffer
	WriteInt32(&ref, []int{2, 2}, []int32{1, 2, 3, 4})
	f.Add(ref.Bytes())

	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Read(bytes.NewReader(b))
		sa, serr := read(bytes.NewReader(b), int64(len(b)))
		if (err == nil) != (serr == nil) {
			t.Fatalf("streaming read: %v; size-aware read: %v", err, serr)
		}
		if err != nil {
			return
		}
		if !slices.Equal(a.Shape, sa.Shape) || !testutil.IdenticalBits(a.Data, sa.Data) {
			t.Fatalf("streaming read %v %v, size-aware read %v %v", a.Shape, a.Data, sa.Shape, sa.Data)
		}
		n, nerr := numElements(a.Shape)
		if nerr != nil || n != len(a.Data) {
			t.Fatalf("shape %v (%v), but %d elements", a.Shape, nerr, len(a.Data))
		}
		var buf bytes.Buffer
		if err := WriteFloat64(&buf, a.Shape, a.Data); err != nil {
			t.Fatalf("writing back: %v", err)
		}
		back, err := Read(&buf)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if !slices.Equal(back.Shape, a.Shape) || !testutil.IdenticalBits(back.Data, a.Data) {
			t.Fatalf("round trip: %v %v, want %v %v", back.Shape, back.Data, a.Shape, a.Data)
		}
	})
}

// ---- NumPy itself ----

// numpyScript saves arrays of many dtypes, orders and shapes with
// np.save into the directory argv[1], as NAME.npy, and each one as
// float64 in C order as NAME.want.npy.
const numpyScript = `
import sys, os, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(1)
shapes = [(), (0,), (5,), (3, 4), (2, 3, 4), (1000, 3), (1,) * 20, (0, 1, 1, 1) + (10,) * 8]
dtypes = ['<f8', '<f4', '<f2', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', '|b1',
          '>f8', '>f4', '>i4', '>i8', '>i2']
for si, shape in enumerate(shapes):
    for dt in dtypes:
        x = rng.standard_normal(shape) * 100
        if dt == '|b1':
            x = x > 0
        elif 'u' in dt:
            x = np.abs(x)
        for order in 'CF':
            a = np.asarray(x, dtype=dt, order=order)
            name = '%d_%s_%s' % (si, dt.replace('<', 'le').replace('>', 'be').replace('|', ''), order)
            np.save(os.path.join(out, name + '.npy'), a)
            np.save(os.path.join(out, name + '.want.npy'), np.array(a, dtype='<f8', order='C'))
`

// TestNumPy runs NumPy (when NPY_TEST_PYTHON names a Python with numpy;
// skipped otherwise) to check against the real thing: every file
// np.save writes reads as NumPy's own float64 conversion of it,
// WriteFloat64 of that float64 array gives exactly np.save's bytes, and
// so does WriteInt32 for the '<i4' arrays.
func TestNumPy(t *testing.T) {
	python := os.Getenv("NPY_TEST_PYTHON")
	if python == "" {
		t.Skip("set NPY_TEST_PYTHON to a Python with numpy to compare with NumPy")
	}
	dir := t.TempDir()
	cmd := exec.Command(python, "-c", numpyScript, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", python, err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.want.npy"))
	if len(files) == 0 {
		t.Fatal("NumPy wrote no files")
	}
	for _, wantPath := range files {
		path := strings.TrimSuffix(wantPath, ".want.npy") + ".npy"
		a, err := ReadFile(path)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		want, err := ReadFile(wantPath)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Shape, want.Shape) || !testutil.IdenticalBits(a.Data, want.Data) {
			t.Errorf("%s: read %v, NumPy says %v", filepath.Base(path), a.Shape, want.Shape)
		}
		wantBytes, _ := os.ReadFile(wantPath)
		var buf bytes.Buffer
		WriteFloat64(&buf, want.Shape, want.Data)
		if !bytes.Equal(buf.Bytes(), wantBytes) {
			t.Errorf("%s: WriteFloat64 differs from np.save:\n%q\n%q", filepath.Base(wantPath), buf.Bytes()[:min(buf.Len(), 200)], wantBytes[:min(len(wantBytes), 200)])
		}
		if strings.HasSuffix(path, "_lei4_C.npy") { // WriteInt32 too
			ints := make([]int32, len(a.Data))
			for i, v := range a.Data {
				ints[i] = int32(v)
			}
			orig, _ := os.ReadFile(path)
			buf.Reset()
			WriteInt32(&buf, a.Shape, ints)
			if !bytes.Equal(buf.Bytes(), orig) {
				t.Errorf("%s: WriteInt32 differs from np.save:\n%q\n%q", filepath.Base(path), buf.Bytes()[:min(buf.Len(), 200)], orig[:min(len(orig), 200)])
			}
		}
	}
	t.Logf("%d NumPy files read and rewritten", len(files))
}

// ReadShapeFile reads the shape from the header alone: a file whose
// data is cut short still has its shape; a bad header is an error
// naming the path, as ReadFile's.
func TestReadShapeFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f4 := make([]byte, 4*12)
	full := write("a.npy", npyFile(1, dict("<f4", "(3, 4)", false), 64, f4))
	short := write("short.npy", npyFile(1, dict("<f8", "(1000000, 3)", false), 64, nil))
	scalar := write("scalar.npy", npyFile(1, dict("<f8", "()", false), 64, f64s(1)))
	for _, c := range []struct {
		path string
		want []int
	}{{full, []int{3, 4}}, {short, []int{1000000, 3}}, {scalar, []int{}}} {
		got, err := ReadShapeFile(c.path)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: shape %v, %v; want %v", c.path, got, err, c.want)
		}
	}
	bad := write("bad.npy", []byte("1.0 2.0\n"))
	if _, err := ReadShapeFile(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": not a .npy file") {
		t.Errorf("not a .npy file: %v", err)
	}
	huge := write("huge.npy", npyFile(1, dict("<f8", "(4611686018427387904, 4)", false), 64, nil))
	if _, err := ReadShapeFile(huge); err == nil {
		t.Errorf("a shape whose size overflows: no error")
	}
	if _, err := ReadShapeFile(filepath.Join(dir, "missing.npy")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
