package offer

import (
	"regexp"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"

	"github.com/cpqportal/portal/internal/i18n"
)

// pagesOf splits an offer's text into its pages (each page ends with its footer's "Page N").
func pagesOf(t *testing.T, pdf []byte, pageWord string) []string {
	t.Helper()
	text, err := Text(pdf)
	if err != nil {
		t.Fatal(err)
	}
	footer := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(pageWord) + ` \d+$`)
	var pages []string
	last := 0
	for _, loc := range footer.FindAllStringIndex(text, -1) {
		pages = append(pages, text[last:loc[1]])
		last = loc[1]
	}
	return pages
}

// TestOfferReadsAsTheQuotePage: the offer says what the quote's page says, the way it says it:
// the customer's reference, what each quote discount applies to, a deduction as "−" and one of
// nothing as "—" (issue 40 item 2).
func TestOfferReadsAsTheQuotePage(t *testing.T) {
	t.Parallel()
	in := sampleInput(2)
	in.Quote.CustomerQuoteID = 774411
	in.Quote.AppliedDiscounts[0].AppliesTo = "RECURRING"
	pdf, err := Make(translator(t, "de"), in)
	if err != nil {
		t.Fatal(err)
	}
	text, err := Text(pdf)
	if err != nil {
		t.Fatal(err)
	}
	text = strings.NewReplacer("\u00a0", " ", "\u202f", " ").Replace(text) // the formats' no-break spaces
	for _, want := range []string{"Ihre Referenz", "774411", "Fedeltà: 10 % Rabatt (monatlich)", "Warenkorb 1: Sede 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the German offer lacks %q:\n%s", want, text)
		}
	}
	// "Assistenza più" costs nothing one-off: its discount takes nothing one-off, shown as a dash.
	if !regexp.MustCompile(`(?m)^—$`).MatchString(text) {
		t.Errorf("a deduction of nothing is not a dash:\n%s", text)
	}
	if !strings.Contains(text, "−246,90 €") {
		t.Errorf("the quote's discount is not written as a deduction (−246,90 €):\n%s", text)
	}
	if strings.Contains(text, "-0,00") || strings.Contains(text, "−0,00") {
		t.Errorf("a deduction of nothing is written as an amount:\n%s", text)
	}
	in.Quote.CustomerQuoteID = 0
	pdf, err = Make(translator(t, "de"), in)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := Text(pdf); strings.Contains(text, "Ihre Referenz") {
		t.Error("a quote without the customer's reference shows the heading anyway")
	}
}

// TestOfferColumnHeadingsFitTheirColumns: in every language each line of a cart table's column
// heading fits its column (German's "Einmalig je Stück" ran into its neighbour).
func TestOfferColumnHeadingsFitTheirColumns(t *testing.T) {
	t.Parallel()
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.AddUTF8FontFromBytes(fontFamily, "B", gobold.TTF)
	pdf.SetFont(fontFamily, "B", 8.5)
	for _, lang := range i18n.Languages {
		tr := translator(t, lang.String())
		heads := []string{tr.T("offer.pdf.col.product"), tr.T("offer.pdf.col.unit_one_off"), tr.T("offer.pdf.col.unit_monthly"),
			tr.T("offer.pdf.col.one_off"), tr.T("offer.pdf.col.monthly")}
		for i, h := range heads {
			for _, line := range pdf.SplitText(h, columns[i]-2) {
				if w := pdf.GetStringWidth(line); w > columns[i]-1 {
					t.Errorf("%s: heading %q line %q is %.1f mm wide in a %.0f mm column", lang, h, line, w, columns[i])
				}
			}
		}
	}
}

// TestOfferTotalsNeverAloneOnAPage: however many carts, the page the totals start on also holds
// a cart's table.
func TestOfferTotalsNeverAloneOnAPage(t *testing.T) {
	t.Parallel()
	tr := translator(t, "en")
	for carts := 1; carts <= 9; carts++ {
		in := sampleInput(carts)
		pdf, err := Make(tr, in)
		if err != nil {
			t.Fatal(err)
		}
		pages := pagesOf(t, pdf, "Page")
		found := false
		for i, page := range pages {
			if !regexp.MustCompile(`(?m)^Totals$`).MatchString(page) {
				continue
			}
			found = true
			if !strings.Contains(page, "Cart total") {
				t.Errorf("%d carts: the totals stand alone on page %d of %d:\n%s", carts, i+1, len(pages), page)
			}
		}
		if !found {
			t.Fatalf("%d carts: no totals in the offer", carts)
		}
	}
}
