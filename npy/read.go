package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
)

// magic starts every .npy file.
const magic = "\x93NUMPY"

// maxHeaderLen bounds the header a reader accepts. NumPy's own np.load
// refuses headers over 10000 bytes unless told to trust the file; the
// headers of numeric arrays are under 200 bytes plus 21 per dimension.
const maxHeaderLen = 1 << 24

// chunkBytes is how much array data is read and converted at a time; a
// multiple of every item size.
const chunkBytes = 1 << 16

// maxExactInt is 2^53: integers of larger magnitude are not all
// representable as float64.
const maxExactInt = 1 << 53

// dtype is a supported element type.
type dtype struct {
	descr string // as in the header, for messages
	kind  byte   // 'f', 'i', 'u' or 'b'
	size  int    // bytes per element: 1, 2, 4 or 8
	order binary.ByteOrder
}

// parseDescr interprets a dtype string such as '<f8'. Supported are
// float ('f': 2, 4, 8 bytes), signed ('i') and unsigned ('u') integers
// of 1, 2, 4, 8 bytes, and bool ('b1'), little-endian ('<') or
// big-endian ('>'); one-byte types may also say '|' (no byte order), as
// NumPy writes them.
func parseDescr(s string) (dtype, error) {
	if len(s) < 2 {
		return dtype{}, fmt.Errorf("unsupported dtype %q", s)
	}
	t := dtype{descr: s, kind: s[1]}
	switch s[0] {
	case '<', '|':
		t.order = binary.LittleEndian
	case '>':
		t.order = binary.BigEndian
	case '=':
		return dtype{}, fmt.Errorf("dtype %q has native byte order '=', which a file cannot have; want '<' or '>'", s)
	default:
		return dtype{}, fmt.Errorf("unsupported dtype %q (no byte order '<', '>' or '|')", s)
	}
	switch t.kind {
	case 'O':
		return dtype{}, fmt.Errorf("object dtype %q (pickled Python objects) is not supported; want a numeric array", s)
	case 'c':
		return dtype{}, fmt.Errorf("complex dtype %q is not supported; want a real numeric array", s)
	case 'U', 'S', 'a':
		return dtype{}, fmt.Errorf("string dtype %q is not supported; want a numeric array", s)
	case 'V':
		return dtype{}, fmt.Errorf("void/structured dtype %q is not supported; want a numeric array", s)
	case 'M', 'm':
		return dtype{}, fmt.Errorf("datetime/timedelta dtype %q is not supported; want a numeric array", s)
	}
	size, err := strconv.Atoi(s[2:])
	if err != nil || strconv.Itoa(size) != s[2:] {
		return dtype{}, fmt.Errorf("unsupported dtype %q", s)
	}
	t.size = size
	ok := false
	switch t.kind {
	case 'f':
		ok = size == 2 || size == 4 || size == 8
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'b':
		ok = size == 1
	}
	if !ok && t.kind == 'f' && (size == 12 || size == 16) {
		return dtype{}, fmt.Errorf("extended-precision float dtype %q (np.longdouble) is not supported; want float64, float32 or float16 (np.float64 holds what gradsolve computes with)", s)
	}
	if !ok {
		return dtype{}, fmt.Errorf("unsupported dtype %q", s)
	}
	if s[0] == '|' && size != 1 {
		return dtype{}, fmt.Errorf("dtype %q has no byte order ('|') but %d-byte elements; want '<' or '>'", s, size)
	}
	return t, nil
}

// decode converts the raw elements in src to float64 into dst
// (len(dst)*t.size == len(src)). first is the index of src's first
// element in the file, for error messages.
func (t dtype) decode(dst []float64, src []byte, first int) error {
	o := t.order
	switch {
	case t.kind == 'f' && t.size == 8:
		for i := range dst {
			dst[i] = math.Float64frombits(o.Uint64(src[8*i:]))
		}
	case t.kind == 'f' && t.size == 4:
		for i := range dst {
			dst[i] = float64(math.Float32frombits(o.Uint32(src[4*i:])))
		}
	case t.kind == 'f' && t.size == 2:
		for i := range dst {
			dst[i] = halfToFloat64(o.Uint16(src[2*i:]))
		}
	case t.kind == 'i' && t.size == 8:
		for i := range dst {
			v := int64(o.Uint64(src[8*i:]))
			if v > maxExactInt || v < -maxExactInt {
				return inexactError(t, first+i, strconv.FormatInt(v, 10))
			}
			dst[i] = float64(v)
		}
	case t.kind == 'u' && t.size == 8:
		for i := range dst {
			v := o.Uint64(src[8*i:])
			if v > maxExactInt {
				return inexactError(t, first+i, strconv.FormatUint(v, 10))
			}
			dst[i] = float64(v)
		}
	case t.kind == 'i' && t.size == 4:
		for i := range dst {
			dst[i] = float64(int32(o.Uint32(src[4*i:])))
		}
	case t.kind == 'u' && t.size == 4:
		for i := range dst {
			dst[i] = float64(o.Uint32(src[4*i:]))
		}
	case t.kind == 'i' && t.size == 2:
		for i := range dst {
			dst[i] = float64(int16(o.Uint16(src[2*i:])))
		}
	case t.kind == 'u' && t.size == 2:
		for i := range dst {
			dst[i] = float64(o.Uint16(src[2*i:]))
		}
	case t.kind == 'i' && t.size == 1:
		for i := range dst {
			dst[i] = float64(int8(src[i]))
		}
	case t.kind == 'u' && t.size == 1:
		for i := range dst {
			dst[i] = float64(src[i])
		}
	case t.kind == 'b':
		for i := range dst {
			if src[i] != 0 {
				dst[i] = 1
			} else {
				dst[i] = 0
			}
		}
	default:
		panic("npy: unhandled dtype " + t.descr) // parseDescr admits no other
	}
	return nil
}

func inexactError(t dtype, i int, v string) error {
	return fmt.Errorf("element %d (in file order) of the %s array is %s, beyond ±2^53, so float64 cannot hold it exactly", i, t.descr, v)
}

// halfToFloat64 converts an IEEE 754 binary16 value exactly.
func halfToFloat64(h uint16) float64 {
	sign := uint64(h>>15) << 63
	exp := int(h>>10) & 0x1f
	frac := uint64(h & 0x3ff)
	switch exp {
	case 0: // zero or subnormal: frac × 2^-24
		return math.Float64frombits(sign | math.Float64bits(math.Ldexp(float64(frac), -24)))
	case 0x1f: // infinity or NaN, payload kept
		return math.Float64frombits(sign | 0x7ff<<52 | frac<<42)
	}
	return math.Float64frombits(sign | uint64(exp-15+1023)<<52 | frac<<42)
}

// Read reads one .npy array from r and returns it in C order with its
// elements converted to float64.
//
// Supported dtypes are float64, float32 and float16 ('f8', 'f4', 'f2'),
// signed and unsigned integers of 1, 2, 4 and 8 bytes ('i1' … 'u8') and
// bool ('b1'), each little- or big-endian. Every conversion is exact:
// an 8-byte integer whose magnitude exceeds 2^53 is an error naming the
// value rather than a silently rounded number; a bool is 0 or 1 (any
// non-zero byte is 1). Fortran-order arrays are transposed into C
// order. Object, string, complex, datetime, structured and
// extended-precision (np.longdouble, 'f12' or 'f16') dtypes are
// rejected.
//
// Read consumes r to its end and fails if bytes follow the array's
// data: np.load would ignore them, but a file that np.save wrote never
// has any, and extra bytes usually mean the header and the data
// disagree. A data section shorter than the shape needs is an error
// too. Memory is allocated as the data arrives, so a header that claims
// a huge shape over a short input fails without allocating for it.
//
// Errors start with "npy: ". Format versions 1.0, 2.0 and 3.0 (2.0 with
// a UTF-8 header) are read.
func Read(r io.Reader) (*Array, error) {
	a, err := read(r, -1)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return a, nil
}

// ReadFile reads the .npy file at path as Read does. Errors about the
// contents start with the path ("p.npy: truncated data: ..."); failing
// to open it gives the *os.PathError ("open p.npy: ..."). For a regular file, the header's shape is checked against
// the file's size before any data is read, so a truncated file or one
// with bytes after the data is reported with both sizes.
func ReadFile(path string) (*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError: names the path
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	a, err := read(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// readHeader reads the preamble and header of a .npy file from r and
// returns the header, its element type and the number of bytes read.
func readHeader(r io.Reader) (*header, dtype, int64, error) {
	// Magic and version.
	var pre [8]byte
	n, err := io.ReadFull(r, pre[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, dtype{}, 0, err
	}
	if m := min(n, len(magic)); string(pre[:m]) != magic[:m] {
		return nil, dtype{}, 0, fmt.Errorf("not a .npy file: starts with %q, want %q", pre[:m], magic)
	}
	if n == 0 {
		return nil, dtype{}, 0, errors.New("empty input, not a .npy file")
	}
	if n < len(pre) {
		return nil, dtype{}, 0, fmt.Errorf("truncated: %d bytes, too short for a .npy preamble", n)
	}
	major, minor := pre[6], pre[7]
	lenBytes := 4
	switch {
	case major == 1 && minor == 0:
		lenBytes = 2
	case (major == 2 || major == 3) && minor == 0:
	default:
		return nil, dtype{}, 0, fmt.Errorf("unsupported .npy format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}

	// Header length and header.
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:lenBytes]); err != nil {
		return nil, dtype{}, 0, truncated(err, "truncated header length")
	}
	var hlen int64
	if lenBytes == 2 {
		hlen = int64(binary.LittleEndian.Uint16(lb[:]))
	} else {
		hlen = int64(binary.LittleEndian.Uint32(lb[:]))
	}
	if hlen > maxHeaderLen {
		return nil, dtype{}, 0, fmt.Errorf("header length %d exceeds the limit of %d bytes", hlen, maxHeaderLen)
	}
	var hbuf bytes.Buffer // grows as bytes arrive: a false length costs nothing
	if got, err := io.CopyN(&hbuf, r, hlen); err != nil {
		if err == io.EOF {
			return nil, dtype{}, 0, fmt.Errorf("truncated header: its length field says %d bytes, only %d follow", hlen, got)
		}
		return nil, dtype{}, 0, err
	}
	h, err := parseHeader(hbuf.Bytes())
	if err != nil {
		return nil, dtype{}, 0, err
	}
	t, err := parseDescr(h.descr)
	if err != nil {
		return nil, dtype{}, 0, err
	}
	return h, t, int64(len(pre)) + int64(lenBytes) + hlen, nil
}

// ReadShapeFile reads the header of the .npy file at path and returns
// the array's shape without reading its data: what a caller needs to
// size the memory ReadFile will take (8 bytes per element, since every
// element becomes a float64). Errors are worded as ReadFile's.
func ReadShapeFile(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError: names the path
	}
	defer f.Close()
	h, _, _, err := readHeader(f)
	if err == nil {
		_, err = numElements(h.shape)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h.shape, nil
}

// read reads one array from r. size is the total number of bytes r
// holds, or -1 if unknown.
func read(r io.Reader, size int64) (*Array, error) {
	h, t, hdrBytes, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	count, err := numElements(h.shape)
	if err != nil {
		return nil, err
	}
	need := int64(count) * int64(t.size) // no overflow: count ≤ MaxInt/8
	what := fmt.Sprintf("shape %s of %s", formatShape(h.shape, false), h.descr)

	// Compare with the size, where known.
	data := make([]float64, 0, min(count, chunkBytes))
	if size >= 0 {
		have := size - hdrBytes
		switch {
		case have < need:
			return nil, fmt.Errorf("truncated data: %s needs %d bytes of data, the file has %d", what, need, have)
		case have > need:
			return nil, fmt.Errorf("extra data: %s needs %d bytes of data, the file has %d more", what, need, have-need)
		}
		data = make([]float64, 0, count)
	}

	// Data, a chunk at a time.
	buf := make([]byte, min(need, chunkBytes))
	for got := int64(0); got < need; {
		b := buf[:min(need-got, chunkBytes)]
		n, err := io.ReadFull(r, b)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, fmt.Errorf("truncated data: %s needs %d bytes of data, only %d follow the header", what, need, got+int64(n))
			}
			return nil, err
		}
		first, k := len(data), len(b)/t.size
		data = slices.Grow(data, k)[:first+k]
		if err := t.decode(data[first:], b, first); err != nil {
			return nil, err
		}
		got += int64(n)
	}

	// Nothing may follow.
	var one [1]byte
	switch n, err := io.ReadFull(r, one[:]); {
	case n > 0:
		return nil, fmt.Errorf("extra data after the array: %s needs %d bytes of data, more follow", what, need)
	case err != io.EOF:
		return nil, err
	}

	if h.fortran && len(h.shape) > 1 {
		data = fortranToC(data, h.shape)
	}
	return &Array{Shape: h.shape, Data: data}, nil
}

// truncated turns an end-of-input error into one saying what was
// truncated, and passes other errors through.
func truncated(err error, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New(what)
	}
	return err
}

// fortranToC reorders src, the elements of an array of the given shape
// in Fortran order (first index fastest), into C order (last index
// fastest).
func fortranToC(src []float64, shape []int) []float64 {
	dst := make([]float64, len(src))
	nd := len(shape)
	stride := make([]int, nd) // C-order strides
	s := 1
	for d := nd - 1; d >= 0; d-- {
		stride[d] = s
		s *= shape[d]
	}
	idx := make([]int, nd)
	off := 0 // C-order offset of idx
	for _, v := range src {
		dst[off] = v
		for d := 0; d < nd; d++ { // advance idx, first index fastest
			idx[d]++
			off += stride[d]
			if idx[d] < shape[d] {
				break
			}
			off -= idx[d] * stride[d]
			idx[d] = 0
		}
	}
	return dst
}
