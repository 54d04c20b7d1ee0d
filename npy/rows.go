package npy

import (
	"fmt"
	"io"
	"os"
)

// Rows reads the array of a .npy file a block of rows at a time — the
// rows along its first axis — so that a file larger than memory can be
// consumed in pieces. Values are converted to float64 exactly as Read
// converts them, and come in C order whatever the file's order, so the
// rows [lo, hi) are the elements ReadFile's Data holds from lo·RowLen()
// to hi·RowLen(). A Rows is not safe for concurrent use.
type Rows struct {
	f       *os.File
	path    string
	shape   []int
	t       dtype
	data    int64 // offset of the first element
	rowLen  int   // elements per row
	fortran bool
	buf     []byte
}

// OpenRows opens the .npy file at path for reading by rows. It checks
// the header and the file's size against the shape (as ReadFile does);
// the array must have at least one dimension. Errors are worded as
// ReadFile's.
func OpenRows(path string) (*Rows, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError: names the path
	}
	r, err := openRows(f, path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func openRows(f *os.File, path string) (*Rows, error) {
	h, t, hdrBytes, err := readHeader(f)
	if err != nil {
		return nil, err
	}
	count, err := numElements(h.shape)
	if err != nil {
		return nil, err
	}
	if len(h.shape) == 0 {
		return nil, fmt.Errorf("shape () of %s: a scalar has no rows", h.descr)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	need := int64(count) * int64(t.size)
	what := fmt.Sprintf("shape %s of %s", formatShape(h.shape, false), h.descr)
	switch have := st.Size() - hdrBytes; {
	case have < need:
		return nil, fmt.Errorf("truncated data: %s needs %d bytes of data, the file has %d", what, need, have)
	case have > need:
		return nil, fmt.Errorf("extra data: %s needs %d bytes of data, the file has %d more", what, need, have-need)
	}
	rowLen := 1
	for _, d := range h.shape[1:] {
		rowLen *= d
	}
	return &Rows{f: f, path: path, shape: h.shape, t: t, data: hdrBytes, rowLen: rowLen, fortran: h.fortran && len(h.shape) > 1}, nil
}

// Shape returns the array's shape.
func (r *Rows) Shape() []int { return append([]int(nil), r.shape...) }

// RowLen returns the number of elements in a row: the product of the
// shape past the first axis.
func (r *Rows) RowLen() int { return r.rowLen }

// Read returns the rows [lo, hi), (hi − lo)·RowLen() values in C
// order, in dst's storage when it has room. 0 ≤ lo ≤ hi ≤ Shape()[0].
func (r *Rows) Read(lo, hi int, dst []float64) ([]float64, error) {
	if lo < 0 || hi > r.shape[0] || lo > hi {
		return nil, fmt.Errorf("%s: rows [%d, %d) of %d", r.path, lo, hi, r.shape[0])
	}
	count := (hi - lo) * r.rowLen
	if cap(dst) < count {
		dst = make([]float64, count)
	}
	dst = dst[:count]
	if count == 0 {
		return dst, nil
	}
	if !r.fortran {
		if err := r.readAt(dst, lo*r.rowLen); err != nil {
			return nil, err
		}
		return dst, nil
	}
	// Fortran order: the first index is fastest, so each column (a
	// fixed index past the first axis) holds the rows' values
	// contiguously; read them column by column and place each value at
	// its C-order index.
	n := r.shape[0]
	rest := r.shape[1:]
	col := make([]float64, hi-lo)
	idx := make([]int, len(rest))
	for c := range r.rowLen {
		if err := r.readAt(col, c*n+lo); err != nil {
			return nil, err
		}
		// idx: column c's index past the first axis (Fortran order,
		// the first fastest); cc its C-order offset within a row.
		cc := 0
		for d := range rest {
			cc = cc*rest[d] + idx[d]
		}
		for i, v := range col {
			dst[i*r.rowLen+cc] = v
		}
		for d := range idx {
			if idx[d]++; idx[d] < rest[d] {
				break
			}
			idx[d] = 0
		}
	}
	return dst, nil
}

// readAt decodes len(dst) elements starting at element first (in file
// order).
func (r *Rows) readAt(dst []float64, first int) error {
	size := r.t.size
	for len(dst) > 0 {
		k := min(len(dst), chunkBytes/size)
		if cap(r.buf) < k*size {
			r.buf = make([]byte, chunkBytes)
		}
		b := r.buf[:k*size]
		if _, err := r.f.ReadAt(b, r.data+int64(first)*int64(size)); err != nil {
			if err == io.EOF {
				return fmt.Errorf("%s: truncated data: the file ends before element %d", r.path, first+k)
			}
			return fmt.Errorf("%s: %w", r.path, err)
		}
		if err := r.t.decode(dst[:k], b, first); err != nil {
			return fmt.Errorf("%s: %w", r.path, err)
		}
		dst, first = dst[k:], first+k
	}
	return nil
}

// Close closes the file.
func (r *Rows) Close() error { return r.f.Close() }
