package offer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
)

// replacement is drawn for a character no embedded font has (an emoji, a CJK ideograph, Hebrew
// or Arabic letters) and for bytes that are not UTF-8: the Go fonts have U+FFFD, so the reader
// sees that something stood there. Before, such a character reached fpdf's font map and panicked
// (issue 38: any customer or rep name with an emoji answered 500).
const replacement = '\uFFFD'

// glyphs knows which characters every style of the embedded font can draw.
type glyphs struct {
	fonts []*sfnt.Font
	buf   sfnt.Buffer
}

// newGlyphs reads the character maps of the embedded TrueType fonts.
func newGlyphs(ttfs ...[]byte) (*glyphs, error) {
	g := &glyphs{}
	for _, ttf := range ttfs {
		f, err := sfnt.Parse(ttf)
		if err != nil {
			return nil, err
		}
		g.fonts = append(g.fonts, f)
	}
	return g, nil
}

// has reports whether every style has a glyph for r.
func (g *glyphs) has(r rune) bool {
	for _, f := range g.fonts {
		if i, err := f.GlyphIndex(&g.buf, r); err != nil || i == 0 {
			return false
		}
	}
	return true
}

// drawable is s as the embedded fonts can draw it: invalid bytes and characters no font has
// become one replacement glyph each (an emoji sequence joined by U+200D, with its skin tone and
// variation selectors, becomes one); controls and format characters (bidirectional overrides
// among them: they would reorder nothing in a PDF but must not print as boxes) are dropped, tab
// and line breaks become spaces, and U+202F NARROW NO-BREAK SPACE (French number grouping), which
// the Go fonts lack, becomes U+00A0.
func (g *glyphs) drawable(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	replaced, joining := false, false
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				b.WriteRune(replacement)
				replaced, joining = true, false
				continue
			}
		}
		switch {
		case r == '\u202F':
			r = '\u00A0'
		case r == '\t' || r == '\n' || r == '\r':
			r = ' '
		case r == '\u200D': // ZERO WIDTH JOINER: the next character is part of this one
			joining = replaced
			continue
		case unicode.Is(unicode.Variation_Selector, r) || (r >= 0x1F3FB && r <= 0x1F3FF): // emoji presentation, skin tones
			if replaced {
				continue
			}
			if !g.has(r) {
				continue
			}
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r):
			continue
		}
		if g.has(r) {
			b.WriteRune(r)
			replaced, joining = false, false
			continue
		}
		if !joining {
			b.WriteRune(replacement)
		}
		replaced, joining = true, false
	}
	return b.String()
}
