// Package textfold is how the portal compares names (docs/customers.md "Search"): what a person
// types and what is stored are compared after both are folded the same way, so "impianti spa" finds "Impianti S.p.A." and
// "garcia" finds "García": lower case, letters without their accents (Unicode NFD with the
// combining marks dropped), full stops and apostrophes dropped (S.p.A. is spa, D'Angelo is
// dangelo), runs of white space one space. Other punctuation stays, so "a@example" does not
// match "ann@example.com".
package textfold

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Append appends the folded form of s to dst. ASCII text is folded byte by byte, without
// allocating.
func Append[T string | []byte](dst []byte, s T) []byte {
	start := len(dst)
	space := false // a space is pending
	put := func(r rune) {
		if space && len(dst) > start {
			dst = append(dst, ' ')
		}
		space = false
		dst = utf8.AppendRune(dst, r)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'A' <= c && c <= 'Z':
				put(rune(c + 'a' - 'A'))
			case c == '.' || c == '\'':
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				space = true
			default:
				put(rune(c))
			}
			continue
		}
		r, size := utf8.DecodeRune([]byte(s[i:min(i+utf8.UTFMax, len(s))]))
		i += size
		switch {
		case r == '’' || r == 'ʼ' || r == '‘':
			continue // apostrophes
		case unicode.IsSpace(r):
			space = true
			continue
		}
		// Decompose the rune (the database's table, no allocation) and keep it without its
		// combining marks.
		var buf [utf8.UTFMax]byte
		n := utf8.EncodeRune(buf[:], r)
		decomposed := norm.NFD.Properties(buf[:n]).Decomposition()
		if decomposed == nil {
			decomposed = buf[:n]
		}
		for j := 0; j < len(decomposed); {
			d, dsize := utf8.DecodeRune(decomposed[j:])
			j += dsize
			if !unicode.Is(unicode.Mn, d) {
				put(unicode.ToLower(d))
			}
		}
	}
	return dst
}

// Changes reports whether folding a lower-case word may change it: it has a full stop, an
// apostrophe, white space or a non-ASCII byte.
func Changes(word []byte) bool {
	for _, c := range word {
		if c >= utf8.RuneSelf || c == '.' || c == '\'' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			return true
		}
	}
	return false
}

// Fold is the folded form of s.
func Fold(s string) string { return string(Append(nil, s)) }
