package offer

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
)

// rightToLeftTTF is the font of names in Hebrew or Arabic: a subset of DejaVu Sans (fonts/README.md).
//
//go:embed fonts/DejaVuSans-HebrewArabic.ttf
var rightToLeftTTF []byte

// replacement is drawn for a character no embedded font has (an emoji, a CJK ideograph) and for
// bytes that are not UTF-8: both fonts have U+FFFD, so the reader sees that something stood there.
// Before, such a character reached fpdf's font map and panicked (issue 38: any customer or rep
// name with an emoji answered 500).
const replacement = '\uFFFD'

// glyphs knows which characters the embedded fonts can draw: the Go fonts (every style), and the
// DejaVu subset for text they cannot draw (Hebrew, Arabic).
type glyphs struct {
	primary  []*sfnt.Font
	fallback []*sfnt.Font
	buf      sfnt.Buffer
	arabic   *arabicShaper
}

// newGlyphs reads the character maps of the embedded TrueType fonts.
func newGlyphs(primary [][]byte, fallback []byte) (*glyphs, error) {
	g := &glyphs{arabic: newArabicShaper()}
	for _, ttf := range primary {
		f, err := sfnt.Parse(ttf)
		if err != nil {
			return nil, err
		}
		g.primary = append(g.primary, f)
	}
	f, err := sfnt.Parse(fallback)
	if err != nil {
		return nil, err
	}
	g.fallback = []*sfnt.Font{f}
	return g, nil
}

// has reports whether every font of fonts has a glyph for r.
func (g *glyphs) has(fonts []*sfnt.Font, r rune) bool {
	for _, f := range fonts {
		if i, err := f.GlyphIndex(&g.buf, r); err != nil || i == 0 {
			return false
		}
	}
	return true
}

// drawable is s as the embedded fonts can draw it, and whether it is to be drawn in the
// right-to-left font. Controls and format characters (bidirectional overrides among them: they
// would reorder nothing in a PDF but must not print as boxes) are dropped, tab and line breaks
// become spaces, U+202F NARROW NO-BREAK SPACE (French number grouping), which the Go fonts lack,
// becomes U+00A0. Text the Go fonts cannot draw whole but the DejaVu subset can better (Hebrew,
// Arabic) is drawn in the subset, shaped and in visual order. Characters the chosen font lacks and
// invalid bytes become one replacement glyph each (an emoji sequence joined by U+200D, with its
// skin tone and variation selectors, becomes one).
func (g *glyphs) drawable(s string) (string, bool) {
	clean := cleanText(s)
	fonts, rtl := g.primary, false
	for _, r := range clean {
		if r != replacement && !g.has(g.primary, r) && g.has(g.fallback, r) {
			fonts, rtl = g.fallback, true
			break
		}
	}
	text := g.replaceMissing(fonts, clean)
	if !rtl {
		return text, false
	}
	runes := []rune(text)
	if !hasRightToLeft(runes) {
		return text, true
	}
	return string(visualOrder(g.arabic.shape(runes))), true
}

// cleanText drops controls and format characters but U+200D (kept to join emoji sequences), makes
// tab and line breaks spaces, U+202F a no-break space and invalid bytes U+FFFD.
func cleanText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				b.WriteRune(replacement)
				continue
			}
		}
		switch {
		case r == '\u202F':
			b.WriteRune('\u00A0')
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r == '\u200D':
			b.WriteRune(r)
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// replaceMissing replaces the characters fonts lack by one replacement glyph each, an emoji
// sequence (characters joined by U+200D, skin tones, variation selectors) by one.
func (g *glyphs) replaceMissing(fonts []*sfnt.Font, s string) string {
	var b strings.Builder
	b.Grow(len(s))
	replaced, joining := false, false
	for _, r := range s {
		switch {
		case r == '\u200D': // ZERO WIDTH JOINER: the next character is part of this one
			joining = replaced
			continue
		case unicode.Is(unicode.Variation_Selector, r) || (r >= 0x1F3FB && r <= 0x1F3FF): // emoji presentation, skin tones
			if replaced || !g.has(fonts, r) {
				continue
			}
		}
		if r != replacement && g.has(fonts, r) {
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
