package parse

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one error in a problem file, at a position. Line and Col
// count from 1; Col counts bytes, as go/scanner does. An error about the
// whole file (no states, for instance) has Line = Col = 0.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

// Error formats the error as "file:line:col: msg", leaving out the parts
// that are unknown: "line:col: msg" without a file name, "file: msg" for
// an error about the whole file.
func (e Error) Error() string {
	var pos string
	switch {
	case e.Line > 0 && e.File != "":
		pos = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	case e.Line > 0:
		pos = fmt.Sprintf("%d:%d", e.Line, e.Col)
	default:
		pos = e.File
	}
	if pos == "" {
		return e.Msg
	}
	return pos + ": " + e.Msg
}

// ErrorList is a list of errors, as Parse returns it. It is sorted by
// position once Parse returns it; whole-file errors come first.
type ErrorList []*Error

// MaxReported is the number of errors ErrorList.Error spells out; the
// rest are counted.
const MaxReported = 10

// Len, Less and Swap implement sort.Interface: by file, line, column,
// then message.
func (l ErrorList) Len() int      { return len(l) }
func (l ErrorList) Swap(i, j int) { l[i], l[j] = l[j], l[i] }
func (l ErrorList) Less(i, j int) bool {
	a, b := l[i], l[j]
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	if a.Col != b.Col {
		return a.Col < b.Col
	}
	return a.Msg < b.Msg
}

// Sort sorts the list in place (stable, so equal positions keep their
// order of discovery when the messages are equal too).
func (l ErrorList) Sort() { sort.Stable(l) }

// Error returns the first MaxReported errors, one a line, then
// "(and N more errors)" when there are more.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i == MaxReported {
			fmt.Fprintf(&b, "\n(and %d more errors)", len(l)-MaxReported)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns the list as an error, or nil when it is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Unwrap returns the errors, so errors.As finds an *Error in the list.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}
