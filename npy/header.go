package npy

import (
	"errors"
	"fmt"
	"strconv"
)

// This file parses the .npy header: the subset of Python literal syntax
// (as ast.literal_eval reads it) that NumPy writes and that hand-made or
// Python 2 files use: dicts, lists, tuples, strings, integers (with an
// optional Python 2 "L" suffix), True, False and None.

// Python values, as the parser returns them.
type (
	pyStr string
	pyInt struct {
		neg    bool
		digits string
	} // sign and decimal digits, no leading sign
	pyBool  bool
	pyNone  struct{}
	pyTuple []any
	pyList  []any
	pyDict  []pyItem // in source order; duplicate keys are kept
)

type pyItem struct{ key, val any }

// maxNesting bounds how deeply containers may nest in a header, so a
// hostile header cannot exhaust the stack. NumPy's own headers nest at
// most a few levels (structured dtypes).
const maxNesting = 64

type parser struct {
	s     []byte
	pos   int
	depth int
}

// parseLiteral parses s as one Python literal surrounded by optional
// whitespace.
func parseLiteral(s []byte) (any, error) {
	p := &parser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(p.s) {
		return nil, p.errorf("unexpected %s after the value", p.quoteAt())
	}
	return v, nil
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

// quoteAt describes the byte at p.pos for an error message.
func (p *parser) quoteAt() string {
	if p.pos >= len(p.s) {
		return "end of header"
	}
	return strconv.QuoteRune(rune(p.s[p.pos]))
}

func (p *parser) space() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (p *parser) peek() byte {
	p.space()
	if p.pos >= len(p.s) {
		return 0
	}
	return p.s[p.pos]
}

func (p *parser) value() (any, error) {
	switch c := p.peek(); {
	case c == '{':
		return p.container('{', '}')
	case c == '[':
		return p.container('[', ']')
	case c == '(':
		return p.container('(', ')')
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || isDigit(c):
		return p.integer()
	case isLetter(c):
		start := p.pos
		for p.pos < len(p.s) && (isLetter(p.s[p.pos]) || isDigit(p.s[p.pos])) {
			p.pos++
		}
		switch w := string(p.s[start:p.pos]); w {
		case "True":
			return pyBool(true), nil
		case "False":
			return pyBool(false), nil
		case "None":
			return pyNone{}, nil
		default:
			p.pos = start
			return nil, p.errorf("unexpected name %q", w)
		}
	default:
		return nil, p.errorf("unexpected %s", p.quoteAt())
	}
}

// container parses a dict, list or tuple; p.s[p.pos] is open. Like
// Python, "(x)" is x itself, not a tuple; "(x,)" and "()" are tuples.
func (p *parser) container(open, close byte) (any, error) {
	if p.depth >= maxNesting {
		return nil, p.errorf("nested more than %d deep", maxNesting)
	}
	p.depth++
	defer func() { p.depth-- }()
	p.pos++ // open
	var (
		items []any
		dict  pyDict
		comma bool // a comma followed the last item
	)
	for {
		if p.peek() == close {
			p.pos++
			break
		}
		if len(items)+len(dict) > 0 && !comma {
			return nil, p.errorf("expected ',' or %q, found %s", close, p.quoteAt())
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if open == '{' {
			if p.peek() != ':' {
				return nil, p.errorf("expected ':' after dict key, found %s", p.quoteAt())
			}
			p.pos++
			val, err := p.value()
			if err != nil {
				return nil, err
			}
			dict = append(dict, pyItem{v, val})
		} else {
			items = append(items, v)
		}
		comma = p.peek() == ','
		if comma {
			p.pos++
		}
	}
	switch open {
	case '{':
		return dict, nil
	case '[':
		return pyList(items), nil
	}
	if len(items) == 1 && !comma {
		return items[0], nil // parenthesized value
	}
	return pyTuple(items), nil
}

// str parses a quoted string. Backslash escapes are kept simple: a
// backslash takes the next byte literally (NumPy's headers have none).
func (p *parser) str() (any, error) {
	q := p.s[p.pos]
	p.pos++
	var b []byte
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		p.pos++
		switch {
		case c == q:
			return pyStr(b), nil
		case c == '\n':
			return nil, p.errorf("newline in string")
		case c == '\\' && p.pos < len(p.s):
			b = append(b, p.s[p.pos])
			p.pos++
		default:
			b = append(b, c)
		}
	}
	return nil, p.errorf("unterminated string")
}

// integer parses an optionally signed decimal integer with an optional
// Python 2 long suffix (L or l).
func (p *parser) integer() (any, error) {
	var v pyInt
	for p.pos < len(p.s) && (p.s[p.pos] == '-' || p.s[p.pos] == '+') {
		if p.s[p.pos] == '-' {
			v.neg = !v.neg
		}
		p.pos++
		p.space()
	}
	start := p.pos
	for p.pos < len(p.s) && isDigit(p.s[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		return nil, p.errorf("expected a digit, found %s", p.quoteAt())
	}
	v.digits = string(p.s[start:p.pos])
	if p.pos < len(p.s) && (p.s[p.pos] == 'L' || p.s[p.pos] == 'l') {
		p.pos++
	}
	if p.pos < len(p.s) && (isLetter(p.s[p.pos]) || p.s[p.pos] == '.') {
		return nil, p.errorf("unexpected %s in a number (only integers are allowed)", p.quoteAt())
	}
	return v, nil
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'A' <= c&^0x20 && c&^0x20 <= 'Z' || c == '_' }

// String formats v as Python would (used in error messages).
func (v pyInt) String() string {
	if v.neg {
		return "-" + v.digits
	}
	return v.digits
}

// header is what a .npy header says.
type header struct {
	descr   string
	fortran bool
	shape   []int
}

// parseHeader parses and checks the header dict: it must have exactly
// the keys 'descr' (a string), 'fortran_order' (a bool) and 'shape' (a
// tuple of non-negative ints), as NumPy requires.
func parseHeader(s []byte) (*header, error) {
	v, err := parseLiteral(s)
	if err != nil {
		return nil, fmt.Errorf("cannot parse header %s: %v", quoteHeader(s), err)
	}
	d, ok := v.(pyDict)
	if !ok {
		return nil, fmt.Errorf("header is not a dict: %s", quoteHeader(s))
	}
	vals := map[string]any{}
	for _, it := range d {
		k, ok := it.key.(pyStr)
		switch {
		case !ok:
			return nil, fmt.Errorf("header has a non-string key: %s", quoteHeader(s))
		case k != "descr" && k != "fortran_order" && k != "shape":
			return nil, fmt.Errorf("header has unexpected key %q (want only 'descr', 'fortran_order', 'shape')", string(k))
		}
		vals[string(k)] = it.val // the last one wins, as in Python
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if _, ok := vals[k]; !ok {
			return nil, fmt.Errorf("header has no '%s' key: %s", k, quoteHeader(s))
		}
	}
	h := &header{}
	switch descr := vals["descr"].(type) {
	case pyStr:
		h.descr = string(descr)
	case pyList:
		return nil, errors.New("structured dtype (descr is a list of fields) is not supported; want a plain numeric array")
	default:
		return nil, fmt.Errorf("descr is not a dtype string: %s", quoteHeader(s))
	}
	fo, ok := vals["fortran_order"].(pyBool)
	if !ok {
		return nil, fmt.Errorf("fortran_order is not True or False: %s", quoteHeader(s))
	}
	h.fortran = bool(fo)
	t, ok := vals["shape"].(pyTuple)
	if !ok {
		return nil, fmt.Errorf("shape is not a tuple: %s", quoteHeader(s))
	}
	h.shape = make([]int, len(t))
	for i, x := range t {
		n, ok := x.(pyInt)
		if !ok {
			return nil, fmt.Errorf("shape has a non-integer dimension: %s", quoteHeader(s))
		}
		if n.neg && n.digits != "" && trimZeros(n.digits) != "0" {
			return nil, fmt.Errorf("negative dimension %s in shape", n)
		}
		d, err := strconv.Atoi(n.digits)
		if err != nil {
			return nil, fmt.Errorf("dimension %s in shape is too large", n)
		}
		h.shape[i] = d
	}
	return h, nil
}

// trimZeros strips leading zeros, leaving at least one digit.
func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

// quoteHeader quotes a header for an error message, trimmed of its
// padding and shortened if long.
func quoteHeader(s []byte) string {
	end := len(s)
	for end > 0 && (s[end-1] == ' ' || s[end-1] == '\n') {
		end--
	}
	const max = 200
	if end > max {
		return strconv.Quote(string(s[:max])) + "..."
	}
	return strconv.Quote(string(s[:end]))
}
