package parse

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file splits one line into tokens. A line holds at most one
// statement, so the lexer never looks past a newline; a comment (#) ends
// the line.

type tokKind uint8

const (
	tEOL     tokKind = iota // end of the line (or the start of a comment)
	tIdent                  // name
	tNumber                 // decimal literal; num holds its value
	tPunct                  // one of + - * / ^ ( ) , = ' or a comparison < <= > >= == !=
	tInvalid                // a lexical error; text holds the message
)

type token struct {
	kind tokKind
	text string // the source text; for tPunct the character
	num  float64
	col  int // 1-based byte column
}

// punct holds the one-character tokens.
const punct = "+-*/^(),='"

func isLetter(c byte) bool    { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
func isDigit(c byte) bool     { return '0' <= c && c <= '9' }
func isIdentChar(c byte) bool { return isLetter(c) || isDigit(c) }

// describe names a token for an error message.
func describe(t token) string {
	switch t.kind {
	case tEOL:
		return "end of line"
	case tIdent:
		return fmt.Sprintf("name %q", t.text)
	case tNumber:
		return "number " + t.text
	}
	return strconv.Quote(t.text)
}

// lexError is a lexical error at a column of the line.
type lexError struct {
	col int
	msg string
}

// lex returns the tokens of one line, ending with a tEOL token whose
// column is just past the last token. A lexical error becomes a tInvalid
// token and ends the line, so that the parser reports it when it gets
// there, after acting on the tokens before it.
func lex(s string) []token {
	toks, err := lexTokens(s)
	if err != nil {
		toks = append(toks, token{kind: tInvalid, text: err.msg, col: err.col}, token{kind: tEOL, col: err.col})
	}
	return toks
}

// lexTokens returns the tokens of s with the final tEOL, or the tokens
// before the first lexical error and the error.
func lexTokens(s string) ([]token, *lexError) {
	var toks []token
	end := 0 // byte offset just past the last token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '#':
			i = len(s)
			continue
		case isLetter(c):
			j := i + 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tIdent, text: s[i:j], col: i + 1})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			t, j, err := lexNumber(s, i)
			if err != nil {
				return toks, err
			}
			toks = append(toks, t)
			i = j
		case strings.IndexByte("<>=!", c) >= 0 && i+1 < len(s) && s[i+1] == '=':
			toks = append(toks, token{kind: tPunct, text: s[i : i+2], col: i + 1})
			i += 2
		case c == '<' || c == '>':
			toks = append(toks, token{kind: tPunct, text: s[i : i+1], col: i + 1})
			i++
		case c == '!':
			return toks, &lexError{i + 1, `unexpected character '!': the only operator with ! is != (there is no logical not; write x == 0)`}
		case strings.IndexByte(punct, c) >= 0:
			toks = append(toks, token{kind: tPunct, text: s[i : i+1], col: i + 1})
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return toks, &lexError{i + 1, fmt.Sprintf("invalid UTF-8 byte %#02x", c)}
			}
			msg := fmt.Sprintf("unexpected character %q", r)
			if r >= utf8.RuneSelf {
				msg = fmt.Sprintf("unexpected character %q (%U): names are ASCII letters, digits and _", r, r)
			}
			return toks, &lexError{i + 1, msg}
		}
		end = i
	}
	return append(toks, token{kind: tEOL, col: end + 1}), nil
}

// lexNumber reads the decimal literal at s[i:]:
//
//	digits [ "." [ digits ] ] [ exponent ]  |  "." digits [ exponent ]
//	exponent = ( "e" | "E" ) [ "+" | "-" ] digits
//
// A literal directly followed by a letter, digit, _ or "." is malformed
// (2x, 1.2.3, 0x1F, 1_000), as is one that overflows float64. Literals
// smaller than the smallest subnormal round to 0, as in Go.
func lexNumber(s string, i int) (token, int, *lexError) {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	if j < len(s) && (isIdentChar(s[j]) || s[j] == '.') {
		k := j
		for k < len(s) && (isIdentChar(s[k]) || s[k] == '.') {
			k++
		}
		text, rest := s[i:k], s[j:k]
		msg := fmt.Sprintf("malformed number %q", text)
		switch {
		case (rest[0] == 'e' || rest[0] == 'E') && (k == j+1 || k < len(s) && (s[k] == '+' || s[k] == '-')):
			msg += ": the exponent has no digits"
		case s[i:j] == "0" && strings.IndexByte("xXbBoO", rest[0]) >= 0:
			msg += ": only decimal numbers are allowed"
		case rest[0] == '_':
			msg += ": digits cannot be separated by _"
		case isLetter(rest[0]) && !strings.Contains(rest, "."):
			msg += fmt.Sprintf(": write %s*%s for a product", s[i:j], rest)
		}
		return token{}, 0, &lexError{i + 1, msg}
	}
	text := s[i:j]
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0) {
			return token{}, 0, &lexError{i + 1, fmt.Sprintf("number %s overflows float64 (largest %g)", text, math.MaxFloat64)}
		}
		return token{}, 0, &lexError{i + 1, fmt.Sprintf("malformed number %q", text)}
	}
	return token{kind: tNumber, text: text, num: v, col: i + 1}, j, nil
}
