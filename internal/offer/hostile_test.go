package offer

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 38: a name with an emoji made fpdf's font map panic (500), a 156-letter name ran off the
// page. Every name gives a readable PDF; characters no embedded font has become U+FFFD.

var hostileNames = []struct {
	name, in string
	want     []string // pieces Text must show
}{
	{"emoji", "Caffè 😀 Roma", []string{"Caffè \uFFFD Roma"}},
	{"zwj sequence is one glyph", "Team 👩\u200d💻 Süd", []string{"Team \uFFFD Süd"}},
	{"skin tone and flag", "👍🏽 🇮🇹 ok", []string{"\uFFFD \uFFFD\uFFFD ok"}},
	{"right-to-left override", "ACME\u202e 12,50", []string{"ACME 12,50"}},
	// Hebrew and Arabic in the DejaVu subset, in visual order; Arabic letters joined.
	{"hebrew", "שלום Ltd", []string{"םולש Ltd"}},
	{"hebrew with a number", "חנות 12 Ltd", []string{"12 תונח Ltd"}},
	{"arabic", "شركة", []string{"\uFE94\uFEDB\uFEAE\uFEB7"}},
	{"arabic lam-alef", "سلام", []string{"\uFEE1\uFEFC\uFEB3"}},
	{"cjk", "株式会社 Tokyo", []string{"\uFFFD\uFFFD\uFFFD\uFFFD Tokyo"}},
	{"invalid utf-8", "Bad\xff\xfeName", []string{"Bad\uFFFD\uFFFDName"}},
	{"nul and controls", "A\x00B\x07C", []string{"ABC"}},
	{"greek and cyrillic", "Αθήνα Москва", []string{"Αθήνα Москва"}},
	{"156-letter word", strings.Repeat("W", 156), nil},
	{"1000-letter word", strings.Repeat("é", 1000), nil},
}

func TestMakeDrawsHostileNamesWithoutPanicking(t *testing.T) {
	t.Parallel()
	for _, tt := range hostileNames {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := sampleInput(1)
			in.Customer.Name = tt.in
			in.Customer.Address.Street = tt.in
			in.Rep.Name = tt.in
			in.Quote.Carts[0].Label = tt.in
			in.Quote.Carts[0].Root.Name = tt.in
			in.Quote.Carts[0].Root.Breakdown.Discounts[0].Name = tt.in
			in.Quote.AppliedDiscounts[0].Name = tt.in
			for _, lang := range []string{"en", "fr"} {
				pdf, err := Make(translator(t, lang), in)
				if err != nil {
					t.Fatalf("%s: %v", lang, err)
				}
				checkPDF(t, pdf)
				text, err := Text(pdf)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range tt.want {
					if !strings.Contains(text, w) {
						t.Errorf("%s: the offer does not show %+q:\n%s", lang, w, text)
					}
				}
				if !utf8.ValidString(text) {
					t.Errorf("%s: the shown text is not UTF-8", lang)
				}
				if strings.ContainsAny(text, "\u202e\x00") {
					t.Errorf("%s: a control character was drawn", lang)
				}
			}
		})
	}
}

// checkPDF fails unless pdf looks like a whole PDF file.
func checkPDF(t *testing.T, pdf []byte) {
	t.Helper()
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf[len(pdf)-64:], []byte("%%EOF")) {
		t.Fatalf("not a whole PDF (%d bytes)", len(pdf))
	}
}

func TestMakeWrapsALongWordWithinThePage(t *testing.T) {
	t.Parallel()
	word := strings.Repeat("W", 156)
	in := sampleInput(1)
	in.Customer.Name = word
	in.Rep.Name = word
	pdf, err := Make(translator(t, "en"), in)
	if err != nil {
		t.Fatal(err)
	}
	text, err := Text(pdf)
	if err != nil {
		t.Fatal(err)
	}
	// The word is drawn whole, in pieces each narrower than its column: the customer's column is
	// 100 mm, about 30 W's at 10 pt.
	pieces := 0
	var joined strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Trim(line, "W") == "" && line != "" {
			pieces++
			joined.WriteString(line)
			if len(line) > 60 {
				t.Errorf("a line of %d W's: the word is not wrapped", len(line))
			}
		}
	}
	if pieces < 4 || joined.Len() < 2*156 {
		t.Errorf("the 156-letter name is drawn in %d pieces, %d letters in all; want it whole, wrapped, twice", pieces, joined.Len())
	}
}

// A discount's name of 100,000 characters in a table cell is cut with an ellipsis where the cell
// ends, found by halving (a character at a time measured the text 100,000 times over).
func TestMakeCutsAHugeNameInACell(t *testing.T) {
	t.Parallel()
	for _, name := range []string{strings.Repeat("Lorem ipsum ", 8400), strings.Repeat("שלום עולם ", 10000)} {
		in := sampleInput(1)
		in.Quote.Carts[0].Root.Breakdown.Discounts[0].Name = name
		pdf, err := Make(translator(t, "en"), in)
		if err != nil {
			t.Fatal(err)
		}
		checkPDF(t, pdf)
		text, err := Text(pdf)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, "…") {
			t.Errorf("the discount's %d-character name is not cut with an ellipsis", len([]rune(name)))
		}
	}
}

func FuzzMakeNeverPanics(f *testing.F) {
	for _, tt := range hostileNames {
		f.Add(tt.in)
	}
	tr := translator(f, "de")
	f.Fuzz(func(t *testing.T, name string) {
		in := sampleInput(1)
		in.Customer.Name, in.Rep.Name, in.Quote.Carts[0].Root.Name = name, name, name
		pdf, err := Make(tr, in)
		if err != nil {
			t.Fatal(err)
		}
		checkPDF(t, pdf)
	})
}
