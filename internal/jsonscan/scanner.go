// Package jsonscan reads a JSON text from a stream without building its values: the caller walks
// the objects and arrays it wants, reads the strings and numbers it keeps as byte slices that
// alias the scanner's buffer, and skips the rest (a skipped value is still checked to be valid
// JSON).
//
// It exists for one answer: the v2 customer list, about 50 MB of JSON for 100,000 customers of
// which the portal keeps a fifth. encoding/json spends most of that decode allocating strings,
// slices and maps that are thrown away at once (docs/performance.md); this scanner allocates
// nothing per value. What it accepts is what encoding/json accepts (RFC 8259, nesting at most
// 10,000 deep); invalid UTF-8 inside a string is replaced by U+FFFD byte by byte, as
// encoding/json does.
package jsonscan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrSyntax is wrapped by every error about the JSON text itself (as opposed to the reader's).
var ErrSyntax = errors.New("jsonscan: invalid JSON")

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// Scanner reads JSON values from a reader.
type Scanner struct {
	r       io.Reader
	buf     []byte
	pos     int    // next unread byte
	end     int    // end of the bytes read
	base    int64  // offset in the stream of buf[0], for error messages
	readErr error  // the reader's error (io.EOF at the end), returned once the buffer is used up
	scratch []byte // unescaped strings
	key     []byte // the last object key read
}

// New returns a scanner reading r through a buffer of size bytes (it grows when a single token
// is longer).
func New(r io.Reader, size int) *Scanner {
	return &Scanner{r: r, buf: make([]byte, max(size, 64))}
}

// Offset is the number of bytes consumed so far.
func (s *Scanner) Offset() int64 { return s.base + int64(s.pos) }

func (s *Scanner) syntaxError(format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d", ErrSyntax, fmt.Sprintf(format, args...), s.Offset())
}

// fill reads more bytes, keeping buf[keep:end] (moved to the start of the buffer, or into a
// larger one when the buffer is full). It returns the shift applied to indexes >= keep, and
// false when the reader has nothing more (s.readErr then says why).
func (s *Scanner) fill(keep int) (shift int, ok bool) {
	if s.readErr != nil {
		return 0, false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:s.end])
		s.base += int64(keep)
		s.pos -= keep
		s.end = n
		shift = keep
	}
	if s.end == len(s.buf) {
		bigger := make([]byte, 2*len(s.buf))
		copy(bigger, s.buf[:s.end])
		s.buf = bigger
	}
	for range 100 {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.readErr = err
		}
		if n > 0 {
			return shift, true
		}
		if err != nil {
			return shift, false
		}
	}
	s.readErr = io.ErrNoProgress
	return shift, false
}

// eofError is the error for a text that ends too early: the reader's own error when it failed,
// else a syntax error.
func (s *Scanner) eofError() error {
	if s.readErr != nil && s.readErr != io.EOF {
		return fmt.Errorf("jsonscan: read: %w", s.readErr)
	}
	return s.syntaxError("unexpected end of JSON input")
}

// Peek skips white space and returns the next byte without consuming it; io.EOF when the input
// ends cleanly there.
func (s *Scanner) Peek() (byte, error) {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, nil
			}
		}
		if _, ok := s.fill(s.pos); !ok {
			if s.readErr == io.EOF {
				return 0, io.EOF
			}
			return 0, s.eofError()
		}
	}
}

// peek is Peek where the end of the input is an error. Its fast path (the next byte is buffered
// and not white space) is inlined.
func (s *Scanner) peek() (byte, error) {
	if s.pos < s.end {
		if c := s.buf[s.pos]; c > ' ' {
			return c, nil
		}
	}
	return s.peekSlow()
}

func (s *Scanner) peekSlow() (byte, error) {
	c, err := s.Peek()
	if err == io.EOF {
		return 0, s.eofError()
	}
	return c, err
}

// Enter consumes the opening delimiter of an object ('{') or an array ('[').
func (s *Scanner) Enter(open byte) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c != open {
		return s.syntaxError("want %q, found %q", open, c)
	}
	s.pos++
	return nil
}

// More reports whether the object or array (closed by close) that was entered has another
// element, consuming the comma before it or the closing delimiter. first is true for the first
// call after Enter.
func (s *Scanner) More(close byte, first bool) (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	switch {
	case c == close:
		s.pos++
		return false, nil
	case first:
		return true, nil
	case c == ',':
		s.pos++
		return true, nil
	}
	return false, s.syntaxError("want ',' or %q, found %q", close, c)
}

// Key reads an object member's name and the colon after it. The slice is valid until the next
// call.
func (s *Scanner) Key() ([]byte, error) {
	key, err := s.String()
	if err != nil {
		return nil, err
	}
	// Reading on to the colon may move the buffer under key: keep a copy.
	s.key = append(s.key[:0], key...)
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	if c != ':' {
		return nil, s.syntaxError("want ':' after an object key, found %q", c)
	}
	s.pos++
	return s.key, nil
}

// Null consumes a null if one comes next.
func (s *Scanner) Null() (bool, error) {
	c, err := s.peek()
	if err != nil || c != 'n' {
		return false, err
	}
	return true, s.literal("null")
}

// Bool reads true or false.
func (s *Scanner) Bool() (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	switch c {
	case 't':
		if err := s.literal("true"); err != nil {
			return false, err
		}
		return true, nil
	case 'f':
		return false, s.literal("false")
	}
	return false, s.syntaxError("want true or false, found %q", c)
}

func (s *Scanner) literal(word string) error {
	for s.end-s.pos < len(word) {
		if _, ok := s.fill(s.pos); !ok {
			break
		}
	}
	if s.end-s.pos < len(word) {
		if string(s.buf[s.pos:s.end]) == word[:s.end-s.pos] {
			return s.eofError()
		}
		return s.syntaxError("invalid literal")
	}
	if string(s.buf[s.pos:s.pos+len(word)]) != word {
		return s.syntaxError("invalid literal")
	}
	s.pos += len(word)
	return nil
}

// special marks the bytes that end the fast path of a string: the quote, the backslash and
// control characters (not allowed unescaped), and bytes >= 0x80 (checked as UTF-8).
var special = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// plainRun returns the index of the first byte of b[i:] that is special (or len(b)), eight
// bytes at a time while it can: most strings of a JSON text are plain ASCII.
func plainRun(b []byte, i int) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// A byte of w is special when it is >= 0x80 (w's own high bit), < 0x20, '"' or '\\'
		// (the "has a byte less than n" and "has a zero byte" tests of Hacker's Delight, exact
		// for the lowest such byte; a false alarm above it only ends the fast loop early).
		q, bs := w^(lsb*'"'), w^(lsb*'\\')
		special := w | ((w - lsb*0x20) &^ w) | ((q - lsb) &^ q) | ((bs - lsb) &^ bs)
		if special&msb != 0 {
			break
		}
	}
	for i < len(b) && !special[b[i]] {
		i++
	}
	return i
}

// String reads a string value and returns its text (unescaped, valid UTF-8). The slice is valid
// until the next call.
func (s *Scanner) String() ([]byte, error) {
	return s.readString(true)
}

// readString reads a string; with decode false it only checks it (the result is then nil).
func (s *Scanner) readString(decode bool) ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	if c != '"' {
		return nil, s.syntaxError("want a string, found %q", c)
	}
	start := s.pos + 1
	i := start
	clean := true // no escapes and no bytes >= 0x80 so far
	for {
		i = plainRun(s.buf[:s.end], i)
		if i == s.end {
			shift, ok := s.fill(start - 1)
			if !ok {
				return nil, s.eofError()
			}
			start -= shift
			i -= shift
			continue
		}
		switch b := s.buf[i]; {
		case b == '"':
			raw := s.buf[start:i]
			s.pos = i + 1
			if clean || !decode {
				return raw, nil
			}
			return s.unescape(raw)
		case b == '\\':
			clean = false
			// Make sure the whole escape is buffered: \uXXXX is 6 bytes.
			for s.end-i < 6 {
				shift, ok := s.fill(start - 1)
				start -= shift
				i -= shift
				if !ok {
					break
				}
			}
			if s.end-i < 2 {
				return nil, s.eofError()
			}
			switch s.buf[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if s.end-i < 6 {
					return nil, s.eofError()
				}
				if _, ok := hex4(s.buf[i+2 : i+6]); !ok {
					s.pos = i
					return nil, s.syntaxError("invalid \\u escape")
				}
				i += 6
			default:
				s.pos = i
				return nil, s.syntaxError("invalid escape")
			}
		case b < 0x20:
			s.pos = i
			return nil, s.syntaxError("control character in a string")
		default: // >= 0x80: decoded (and checked) when the string is unescaped
			clean = false
			i++
		}
	}
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unescape decodes raw (already checked by readString) into the scratch buffer, the way
// encoding/json does: escapes decoded, unpaired surrogates and invalid UTF-8 bytes replaced by
// U+FFFD.
func (s *Scanner) unescape(raw []byte) ([]byte, error) {
	out := s.scratch[:0]
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			switch raw[i+1] {
			case '"', '\\', '/':
				out = append(out, raw[i+1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, _ := hex4(raw[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					// A pair is two escapes in a row; anything else leaves it unpaired.
					r2 := utf8.RuneError
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if lo, ok := hex4(raw[i+2 : i+6]); ok {
							if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
								r2 = dec
								i += 6
							}
						}
					}
					r = r2
				}
				out = utf8.AppendRune(out, r)
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, raw[i:i+size]...)
			}
			i += size
		}
	}
	s.scratch = out
	return out, nil
}

// Number reads a number and returns its text (checked against the JSON grammar). The slice is
// valid until the next call.
func (s *Scanner) Number() ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	if c != '-' && (c < '0' || c > '9') {
		return nil, s.syntaxError("want a number, found %q", c)
	}
	start, i := s.pos, s.pos
	for {
		for i < s.end && isNumberByte(s.buf[i]) {
			i++
		}
		if i < s.end {
			break
		}
		shift, ok := s.fill(start)
		start -= shift
		i -= shift
		if !ok {
			if s.readErr != io.EOF {
				return nil, s.eofError()
			}
			break
		}
	}
	num := s.buf[start:i]
	if !validNumber(num) {
		return nil, s.syntaxError("invalid number %q", num)
	}
	s.pos = i
	return num, nil
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// validNumber checks the JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// Int reads a number that must be an integer fitting bits bits, as encoding/json requires of an
// integer field (no fraction, no exponent).
func (s *Scanner) Int(bits int) (int64, error) {
	num, err := s.Number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(num), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%w: number %s is not an int%d at offset %d", ErrType, num, bits, s.Offset())
	}
	return n, nil
}

// ErrType is wrapped by errors about a valid value of the wrong type (a string where a number
// was wanted), as encoding/json's UnmarshalTypeError.
var ErrType = errors.New("jsonscan: wrong type")

// TypeError is the error for a value of the wrong kind: the next byte is c where want was wanted.
func (s *Scanner) TypeError(c byte, want string) error {
	return fmt.Errorf("%w: want %s, found %q at offset %d", ErrType, want, c, s.Offset())
}

// Skip reads one value of any kind and checks it, keeping nothing.
func (s *Scanner) Skip() error {
	return s.skip(0)
}

func (s *Scanner) skip(depth int) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch c {
	case '{', '[':
		if depth >= maxDepth {
			return s.syntaxError("exceeded max depth")
		}
		s.pos++
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		for first := true; ; first = false {
			more, err := s.More(closer, first)
			if err != nil || !more {
				return err
			}
			if c == '{' {
				if err := s.skipKey(); err != nil {
					return err
				}
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
		}
	case '"':
		_, err := s.readString(false)
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	_, err = s.Number()
	return err
}

// skipKey is Key without decoding the name.
func (s *Scanner) skipKey() error {
	if _, err := s.readString(false); err != nil {
		return err
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c != ':' {
		return s.syntaxError("want ':' after an object key, found %q", c)
	}
	s.pos++
	return nil
}
