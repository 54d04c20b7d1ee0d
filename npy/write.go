package npy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// arrayAlign is the alignment NumPy pads the preamble (magic, version,
// header length and header) to, so the data starts on a multiple of it.
const arrayAlign = 64

// growthAxisMaxDigits is NumPy's GROWTH_AXIS_MAX_DIGITS (since 1.24):
// np.save adds spaces to the header so the first dimension could grow
// to this many digits in place. Copied so our output is byte for byte
// np.save's.
const growthAxisMaxDigits = 21

// encodeHeader returns the preamble NumPy's np.save writes for a C-order
// array of the given dtype string and shape: magic, version 1.0 (2.0 if
// the padded header would not fit a uint16 length), header length, the
// header dict, the growth spaces, padding spaces and '\n'. Like NumPy,
// it pads to the next multiple of arrayAlign strictly past the header
// (a header that would end exactly on one gets arrayAlign more spaces).
func encodeHeader(descr string, shape []int) []byte {
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + formatShape(shape, false) + ", }"
	if len(shape) > 0 {
		dict += strings.Repeat(" ", max(0, growthAxisMaxDigits-len(strconv.Itoa(shape[0]))))
	}
	hlen := len(dict) + 1 // + '\n'
	major, lenBytes := byte(1), 2
	pad := arrayAlign - (len(magic)+2+lenBytes+hlen)%arrayAlign
	if hlen+pad > math.MaxUint16 {
		major, lenBytes = 2, 4
		pad = arrayAlign - (len(magic)+2+lenBytes+hlen)%arrayAlign
	}
	out := make([]byte, 0, len(magic)+2+lenBytes+hlen+pad)
	out = append(out, magic...)
	out = append(out, major, 0)
	if lenBytes == 2 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen+pad))
	}
	out = append(out, dict...)
	out = append(out, strings.Repeat(" ", pad)...)
	return append(out, '\n')
}

// checkData checks that shape is valid and has n elements.
func checkData(fn string, shape []int, n int) error {
	count, err := numElements(shape)
	if err != nil {
		return fmt.Errorf("npy: %s: %w", fn, err)
	}
	if count != n {
		return fmt.Errorf("npy: %s: shape %s has %d elements, data has %d", fn, formatShape(shape, false), count, n)
	}
	return nil
}

// WriteFloat64 writes data, an array of the given shape in C order, to
// w as a .npy file of dtype '<f8': the bytes np.save writes for the
// same float64 array. len(data) must be the product of shape (1 for the
// empty shape, a scalar), and no dimension may be negative.
func WriteFloat64(w io.Writer, shape []int, data []float64) error {
	if err := checkData("WriteFloat64", shape, len(data)); err != nil {
		return err
	}
	return writeElems(w, "<f8", shape, data, 8, func(b []byte, v float64) {
		binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	})
}

// WriteInt32 writes data, an array of the given shape in C order, to w
// as a .npy file of dtype '<i4': the bytes np.save writes for the same
// int32 array. len(data) must be the product of shape (1 for the empty
// shape, a scalar), and no dimension may be negative.
func WriteInt32(w io.Writer, shape []int, data []int32) error {
	if err := checkData("WriteInt32", shape, len(data)); err != nil {
		return err
	}
	return writeElems(w, "<i4", shape, data, 4, func(b []byte, v int32) {
		binary.LittleEndian.PutUint32(b, uint32(v))
	})
}

// writeElems writes the header and then data, size bytes an element,
// encoded by put, in chunks.
func writeElems[T any](w io.Writer, descr string, shape []int, data []T, size int, put func([]byte, T)) error {
	if _, err := w.Write(encodeHeader(descr, shape)); err != nil {
		return err
	}
	buf := make([]byte, min(len(data)*size, chunkBytes))
	for len(data) > 0 {
		k := min(len(data), len(buf)/size)
		for i, v := range data[:k] {
			put(buf[i*size:], v)
		}
		if _, err := w.Write(buf[:k*size]); err != nil {
			return err
		}
		data = data[k:]
	}
	return nil
}

// WriteFileAtomic creates or replaces the file at path with what write
// writes, so that path never holds a partial file: write's output goes
// through a bufio.Writer to a new temporary file in the same directory
// (named ".BASE.tmp-*"), which is flushed, synced to disk and closed,
// then renamed onto path. If any step fails, the temporary file is
// removed, path is left as it was, and the error is returned wrapped
// as "write PATH: ..." (errors.Is sees through it).
//
// A new file gets mode 0644; a file that is replaced keeps its mode.
// If path is a symbolic link, the link itself is replaced.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	bw := bufio.NewWriterSize(f, chunkBytes)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	closed = true
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable where the system allows it; it
// is best effort (not every system can sync a directory).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// WriteFloat64File writes data with WriteFloat64 to the file at path,
// atomically (see WriteFileAtomic).
func WriteFloat64File(path string, shape []int, data []float64) error {
	return WriteFileAtomic(path, func(w io.Writer) error { return WriteFloat64(w, shape, data) })
}

// WriteInt32File writes data with WriteInt32 to the file at path,
// atomically (see WriteFileAtomic).
func WriteInt32File(path string, shape []int, data []int32) error {
	return WriteFileAtomic(path, func(w io.Writer) error { return WriteInt32(w, shape, data) })
}

// Float64Writer writes a '<f8' .npy array whose shape is known up front
// but whose values come in pieces (an ensemble solved chunk by chunk):
// NewFloat64Writer writes the header, Append adds values in C order,
// and Finish checks that the shape's count was written. The bytes are those WriteFloat64
// writes for the whole array, however the values are cut.
type Float64Writer struct {
	elemWriter[float64]
}

// NewFloat64Writer writes the header of a '<f8' array of shape to w and
// returns the writer of its values.
func NewFloat64Writer(w io.Writer, shape []int) (*Float64Writer, error) {
	ew, err := newElemWriter("NewFloat64Writer", "Float64Writer", w, "<f8", shape, 8, func(b []byte, v float64) {
		binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	})
	if err != nil {
		return nil, err
	}
	return &Float64Writer{ew}, nil
}

// Int32Writer writes a '<i4' array piece by piece, as Float64Writer
// does a '<f8' one: the bytes are those WriteInt32 writes.
type Int32Writer struct {
	elemWriter[int32]
}

// NewInt32Writer writes the header of a '<i4' array of shape to w and
// returns the writer of its values.
func NewInt32Writer(w io.Writer, shape []int) (*Int32Writer, error) {
	ew, err := newElemWriter("NewInt32Writer", "Int32Writer", w, "<i4", shape, 4, func(b []byte, v int32) {
		binary.LittleEndian.PutUint32(b, uint32(v))
	})
	if err != nil {
		return nil, err
	}
	return &Int32Writer{ew}, nil
}

// elemWriter is the writer of an array's values, size bytes each,
// encoded by put.
type elemWriter[T any] struct {
	name      string
	w         io.Writer
	want, got int
	size      int
	put       func([]byte, T)
	buf       []byte
}

func newElemWriter[T any](fn, name string, w io.Writer, descr string, shape []int, size int, put func([]byte, T)) (elemWriter[T], error) {
	count, err := numElements(shape)
	if err != nil {
		return elemWriter[T]{}, fmt.Errorf("npy: %s: %w", fn, err)
	}
	if _, err := w.Write(encodeHeader(descr, shape)); err != nil {
		return elemWriter[T]{}, err
	}
	return elemWriter[T]{name: name, w: w, want: count, size: size, put: put, buf: make([]byte, min(count*size, chunkBytes))}, nil
}

// Append writes the next len(data) values. It refuses values beyond the
// shape's count, writing none of them.
func (ew *elemWriter[T]) Append(data []T) error {
	if ew.got+len(data) > ew.want {
		return fmt.Errorf("npy: %s: %d values past the %d of the shape", ew.name, ew.got+len(data)-ew.want, ew.want)
	}
	for len(data) > 0 {
		k := min(len(data), len(ew.buf)/ew.size)
		for i, v := range data[:k] {
			ew.put(ew.buf[ew.size*i:], v)
		}
		if _, err := ew.w.Write(ew.buf[:ew.size*k]); err != nil {
			return err
		}
		ew.got += k
		data = data[k:]
	}
	return nil
}

// Finish reports an error where fewer values than the shape's count
// were written (the file would be truncated).
func (ew *elemWriter[T]) Finish() error {
	if ew.got != ew.want {
		return fmt.Errorf("npy: %s: %d of the shape's %d values written", ew.name, ew.got, ew.want)
	}
	return nil
}
