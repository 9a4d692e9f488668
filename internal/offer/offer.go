// Package offer makes the offer document: the PDF a customer reads before any contract exists
// (the spec's QuotePdf, "the finalized PDF version of the offer"). It is made in pure Go with
// github.com/go-pdf/fpdf from the quote document as the v2 API answers it (call 10, toflist: carts
// or baskets, each with a main product and add-ons, quantity, price list, discounts and totals),
// in the language chosen for the customer, with that language's number and date formats.
//
// The text is set in the Go fonts (golang.org/x/image/font/gofont, BSD licence), embedded as
// TrueType so every Latin letter the five languages need (è, ß, ñ, ç...) is rendered whatever
// the reader's PDF viewer has installed. Names in Hebrew or Arabic are set in an embedded subset
// of DejaVu Sans, in visual order (rtl.go); a character no embedded font has is drawn as U+FFFD
// (glyphs.go), never passed to fpdf, whose font map panics on characters beyond U+FFFF.
//
// The output is a function of the input alone: identical input gives identical bytes (the PDF's
// creation date is the quote's last change, resources are written in a fixed order, nothing is
// random). A preview and the stored offer of an unchanged quote on the same day are the same file.
package offer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/countries"
	"github.com/cpqportal/portal/internal/i18n"
)

// ValidDays is how long an offer holds: its valid-until date is its date plus ValidDays days. The
// spec says nothing of an offer's validity; 30 days is the common term of the quoting tools the
// portal is compared with (docs/quotes.md).
const ValidDays = 30

// AttachmentType is the v2 attachment type an offer is stored under (the spec's QuotePdf;
// docs/v2-assumptions.md A6).
const AttachmentType = apiclient.AttachmentTypeQuotePDF

// ContentType is the media type of an offer.
const ContentType = "application/pdf"

// Customer is who the offer is for, as the customer document (A8) knows them.
type Customer struct {
	Name    string
	TaxID   string
	Email   string
	Phone   string
	Address apiclient.Address
}

// Rep is the sales representative making the offer (the signed-in user).
type Rep struct {
	Name  string
	Email string
}

// Input is everything an offer shows.
type Input struct {
	Quote    *apiclient.Quote
	Customer Customer
	Rep      Rep
	// Date is the offer's date (its day in the translator's time zone is printed); the valid-until
	// date is ValidDays later.
	Date time.Time
}

// ValidUntil is the last day the offer made on date holds.
func ValidUntil(date time.Time) time.Time { return date.AddDate(0, 0, ValidDays) }

// FileName is the offer's file name: the quote, the language, the date and the fingerprint of
// the quote it shows, e.g. "offer-1042-it-2026-11-27-3f2a9c41b07d.pdf". The v2 API keeps nothing
// else about an attachment but its type, name and times (A6), so the name carries the
// fingerprint that tells whether the quote changed since (Stale).
func FileName(quoteID int64, lang string, date time.Time, fingerprint string) string {
	return fmt.Sprintf("offer-%d-%s-%s-%s.pdf", quoteID, lang, date.Format("2006-01-02"), fingerprint)
}

// fileNamePattern matches FileName's names; its group is the fingerprint.
var fileNamePattern = regexp.MustCompile(`^offer-\d+-[a-z]{2}-\d{4}-\d{2}-\d{2}-([0-9a-f]{12})\.pdf$`)

// Fingerprint is a short hash of everything of the quote an offer shows: carts with their items,
// names, quantities, price lists and prices, discounts, packages and totals (the currency too).
// Two quote documents with the same fingerprint make the same offer (for the same customer, rep,
// language and day).
func Fingerprint(q *apiclient.Quote) string {
	shown := struct {
		Currency   string
		Pricelists []apiclient.Pricelist
		Carts      []apiclient.Cart
		Applied    []apiclient.AppliedDiscount
		Extra      []apiclient.ExtraDiscount
		Packages   []apiclient.QuotePackage
		Totals     apiclient.Totals
	}{q.Currency, q.AvailablePricelists, q.Carts, q.AppliedDiscounts, q.ExtraDiscounts, q.Packages, q.Totals}
	data, err := json.Marshal(shown)
	if err != nil { // plain data: cannot fail
		panic(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// Stale reports whether an offer stored as fileName at createdAt no longer shows q: the
// fingerprint in its name differs from q's. A name without one (not made by this package) falls
// back to the times: q changed after the offer was stored. The times alone cannot decide: the v2
// API gives both to the second (A4, A6), and a change in the offer's own second would not show.
func Stale(q *apiclient.Quote, fileName string, createdAt time.Time) bool {
	if m := fileNamePattern.FindStringSubmatch(fileName); m != nil {
		return m[1] != Fingerprint(q)
	}
	return q.UpdatedAt.After(createdAt)
}

// Page geometry in millimetres (A4 portrait).
const (
	pageMargin = 15.0
	lineHeight = 5.5
	fontFamily = "go"
)

// column widths of the cart tables: product, unit one-off, unit monthly, net one-off, net monthly.
var columns = [5]float64{72, 27, 27, 27, 27}

// Make writes the offer of in as a PDF in tr's language, number and date formats and time zone.
func Make(tr *i18n.Translator, in Input) ([]byte, error) {
	if in.Quote == nil {
		return nil, fmt.Errorf("offer: no quote")
	}
	q := in.Quote
	currency := q.Currency
	if currency == "" {
		currency = "EUR"
	}
	g, err := newGlyphs([][]byte{goregular.TTF, gobold.TTF}, rightToLeftTTF)
	if err != nil {
		return nil, fmt.Errorf("offer: embedded fonts: %w", err)
	}
	// The totals never stand alone on the last page: when they would, the offer is laid out
	// again with the last cart moved onto that page too.
	w, err := layout(tr, in, currency, g, false)
	if err != nil {
		return nil, err
	}
	if w.totalsAlone && len(q.Carts) > 0 {
		if w, err = layout(tr, in, currency, g, true); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := w.pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("offer: quote %d: %w", q.QuoteID, err)
	}
	return buf.Bytes(), nil
}

// layout draws the whole offer; lastCartOnNewPage starts the last cart on a page of its own.
func layout(tr *i18n.Translator, in Input, currency string, g *glyphs, lastCartOnNewPage bool) (*writer, error) {
	q := in.Quote
	w := &writer{tr: tr, currency: currency, glyphs: g}
	if tr.Tag() == i18n.Pseudo {
		// The pseudo-locale's markers ⟦ ⟧ are in no embedded font: drawn as [[ ]], its test
		// still tells the portal's words from the quote's.
		w.pseudo = strings.NewReplacer("⟦", "[[", "⟧", "]]")
	}
	pdf := fpdf.New("P", "mm", "A4", "")
	w.pdf = pdf
	stamp := q.UpdatedAt
	if stamp.IsZero() {
		stamp = in.Date
	}
	stamp = stamp.UTC().Truncate(time.Second)
	pdf.SetCreationDate(stamp)
	pdf.SetModificationDate(stamp)
	pdf.SetCatalogSort(true)
	pdf.SetCompression(true)
	pdf.SetProducer("CPQ Portal", true)
	pdf.SetCreator("CPQ Portal", true)
	pdf.SetTitle(tr.T("offer.pdf.title", strconv.FormatInt(q.QuoteID, 10)), true)
	pdf.SetAuthor(cleanText(in.Rep.Name), true)
	pdf.SetLang(tr.Lang())
	pdf.AddUTF8FontFromBytes(fontFamily, "", goregular.TTF)
	pdf.AddUTF8FontFromBytes(fontFamily, "B", gobold.TTF)
	pdf.SetMargins(pageMargin, pageMargin, pageMargin)
	pdf.SetAutoPageBreak(true, pageMargin+8)
	pdf.SetFooterFunc(func() {
		pdf.SetY(-pageMargin - 4)
		w.font("", 8)
		pdf.SetTextColor(110, 110, 110)
		footer := tr.T("offer.pdf.footer", strconv.FormatInt(q.QuoteID, 10), tr.Date(ValidUntil(in.Date)))
		w.cell(150, 4, footer, "", 0, "L", false, 0, "")
		w.cell(0, 4, tr.T("offer.pdf.page", strconv.Itoa(pdf.PageNo())), "", 0, "R", false, 0, "")
		pdf.SetTextColor(0, 0, 0)
	})
	pdf.AddPage()

	w.header(in)
	for i := range q.Carts {
		if lastCartOnNewPage && i == len(q.Carts)-1 && pdf.GetY() > pageMargin+20 {
			pdf.AddPage()
		}
		w.cart(q, i)
	}
	contentPage := pdf.PageNo()
	w.quoteDiscounts(q)
	w.packages(q)
	w.totals(q.Totals)
	w.totalsAlone = w.totalsPage > contentPage
	w.closing(in)

	if err := pdf.Error(); err != nil {
		return nil, fmt.Errorf("offer: quote %d: %w", q.QuoteID, err)
	}
	return w, nil
}

// writer holds what every part of the document needs.
type writer struct {
	pdf      *fpdf.Fpdf
	tr       *i18n.Translator
	currency string
	glyphs   *glyphs
	pseudo   *strings.Replacer // nil but in the pseudo-locale
	// style and size are the current font's (w.font); rtlAdded: the right-to-left font is in
	// the document (added at its first use, so an offer without such names does not carry it).
	style    string
	size     float64
	rtlAdded bool
	// totalsPage is the page the totals start on; totalsAlone: a page break put them on a page
	// with no cart (Make lays the offer out again).
	totalsPage  int
	totalsAlone bool
}

// rtlFamily is the family of the DejaVu subset (Hebrew, Arabic).
const rtlFamily = "dejavu-rtl"

// drawable is text as the embedded fonts can draw it (glyphs.drawable), with the font to draw it
// in set; restore puts the current font back.
func (w *writer) drawable(text string) (drawn string, restore func()) {
	if w.pseudo != nil {
		text = w.pseudo.Replace(text)
	}
	drawn, rtl := w.glyphs.drawable(text)
	if !rtl {
		return drawn, func() {}
	}
	if !w.rtlAdded {
		w.pdf.AddUTF8FontFromBytes(rtlFamily, "", rightToLeftTTF)
		w.pdf.AddUTF8FontFromBytes(rtlFamily, "B", rightToLeftTTF)
		w.rtlAdded = true
	}
	w.pdf.SetFont(rtlFamily, w.style, w.size)
	return drawn, func() { w.font(w.style, w.size) }
}

// cell is fpdf's CellFormat for text of any origin: the text is made drawable (glyphs.drawable)
// and, when wider than the cell, cut with an ellipsis, so a long name never runs over the next
// column or off the page. Text that must be read whole goes through multi, which wraps.
func (w *writer) cell(width, height float64, text, border string, ln int, align string, fill bool, link int, linkURL string) {
	text, restore := w.drawable(text)
	defer restore()
	room := width
	if room == 0 {
		pageWidth, _ := w.pdf.GetPageSize()
		_, _, right, _ := w.pdf.GetMargins()
		room = pageWidth - right - w.pdf.GetX()
	}
	room -= 2 * w.pdf.GetCellMargin()
	if text != "" && w.pdf.GetStringWidth(text) > room {
		// The longest prefix that fits with the ellipsis, found by halving: a name of 100,000
		// characters costs 17 measurements, not 100,000 (cutting a rune at a time took minutes).
		runes := []rune(text)
		fits := sort.Search(len(runes)+1, func(n int) bool { return w.pdf.GetStringWidth(string(runes[:n])+"…") > room }) - 1
		text = string(runes[:max(fits, 0)]) + "…"
	}
	w.pdf.CellFormat(width, height, text, border, ln, align, fill, link, linkURL)
}

// multi is fpdf's MultiCell for text of any origin: made drawable, wrapped at spaces, and a word
// longer than the line (fpdf breaks it between letters) wrapped too.
func (w *writer) multi(width, height float64, text, border, align string, fill bool) {
	text, restore := w.drawable(text)
	defer restore()
	w.pdf.MultiCell(width, height, text, border, align, fill)
}

func (w *writer) font(style string, size float64) {
	w.style, w.size = style, size
	w.pdf.SetFont(fontFamily, style, size)
}

// money writes an amount of the quote (a decimal of the currency) in the language's format.
func (w *writer) money(v float64) string { return w.tr.Money(int64(math.Round(v*100)), w.currency) }

// line writes one full-width line.
func (w *writer) line(style string, size float64, text string) {
	w.font(style, size)
	w.multi(0, lineHeight, text, "", "L", false)
}

// header writes the title, the customer and the offer's facts (number, dates, currency).
func (w *writer) header(in Input) {
	tr, pdf, q := w.tr, w.pdf, in.Quote
	w.font("B", 18)
	w.cell(0, 10, tr.T("offer.pdf.heading"), "", 1, "L", false, 0, "")
	pdf.Ln(2)

	top := pdf.GetY()
	// Left: the customer.
	w.font("B", 10)
	w.cell(100, lineHeight, tr.T("offer.pdf.customer"), "", 2, "L", false, 0, "")
	w.font("", 10)
	for _, text := range customerLines(tr, in.Customer) {
		// A name or street longer than the column (a 156-letter word) wraps within it.
		w.multi(100, lineHeight, text, "", "L", false)
	}
	left := pdf.GetY()

	// Right: the offer's facts.
	pdf.SetXY(pageMargin+105, top)
	facts := [][2]string{
		{tr.T("offer.pdf.quote_number"), strconv.FormatInt(q.QuoteID, 10)},
		{tr.T("offer.pdf.date"), tr.Date(in.Date)},
		{tr.T("offer.pdf.valid_until"), tr.Date(ValidUntil(in.Date))},
		{tr.T("offer.pdf.currency"), w.currency},
	}
	if q.CustomerQuoteID != 0 {
		facts = append(facts[:1], append([][2]string{{tr.T("offer.pdf.reference"), strconv.FormatInt(q.CustomerQuoteID, 10)}}, facts[1:]...)...)
	}
	for _, f := range facts {
		pdf.SetX(pageMargin + 105)
		w.font("B", 10)
		w.cell(35, lineHeight, f[0], "", 0, "L", false, 0, "")
		w.font("", 10)
		w.cell(0, lineHeight, f[1], "", 1, "L", false, 0, "")
	}
	pdf.SetY(math.Max(left, pdf.GetY()) + 4)
	w.font("", 10)
	w.multi(0, lineHeight, tr.T("offer.pdf.intro"), "", "L", false)
	pdf.Ln(2)
}

// countryNames names the customer's country in the offer's language ("Deutschland", not the
// v2 API's "DE"; issue 33).
var countryNames = countries.New()

// customerLines are the customer's name, address and tax id, as far as they are known, the
// country by its name in tr's language.
func customerLines(tr *i18n.Translator, c Customer) []string {
	var lines []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			lines = append(lines, s)
		}
	}
	add(c.Name)
	add(c.Address.Street)
	add(strings.TrimSpace(c.Address.PostalCode + " " + c.Address.City))
	if c.Address.Country != "" {
		add(countryNames.Name(tr.Tag(), strings.ToUpper(c.Address.Country)))
	}
	if c.TaxID != "" {
		add(c.TaxID)
	}
	add(c.Email)
	add(c.Phone)
	return lines
}

// pricelistName names a cart's price list from the quote's available price lists.
func (w *writer) pricelistName(q *apiclient.Quote, id int32) string {
	for _, p := range q.AvailablePricelists {
		if p.PricelistID == id && p.Name != "" {
			return p.Name
		}
	}
	return w.tr.T("offer.pdf.pricelist_numbered", strconv.Itoa(int(id)))
}

// cart writes one cart: its heading, price list and quantity, its items and its totals.
func (w *writer) cart(q *apiclient.Quote, index int) {
	tr, pdf, c := w.tr, w.pdf, &q.Carts[index]
	if pdf.GetY() > 230 {
		pdf.AddPage()
	}
	title := tr.T("offer.pdf.cart", strconv.Itoa(index+1))
	if label := strings.TrimSpace(c.Label); label != "" {
		title += ": " + label
	}
	pdf.Ln(2)
	w.line("B", 12, title)
	w.line("", 9, tr.T("offer.pdf.cart_facts", w.pricelistName(q, c.PricelistID), tr.Integer(int64(c.Quantity))))
	pdf.Ln(1)

	heads := [5]string{tr.T("offer.pdf.col.product"), tr.T("offer.pdf.col.unit_one_off"), tr.T("offer.pdf.col.unit_monthly"),
		tr.T("offer.pdf.col.one_off"), tr.T("offer.pdf.col.monthly")}
	w.headRow(heads)
	if c.Root != nil {
		w.item(c.Root, 0)
	}
	w.font("", 9)
	rows := [][3]string{
		{tr.T("offer.pdf.list_price"), w.money(c.Totals.ListActivation), w.money(c.Totals.ListRecurring)},
	}
	if c.Totals.DiscountActivation != 0 || c.Totals.DiscountRecurring != 0 {
		rows = append(rows, [3]string{tr.T("offer.pdf.discounts"), w.deduction(c.Totals.DiscountActivation), w.deduction(c.Totals.DiscountRecurring)})
	}
	if c.Totals.ExtraActivation != 0 || c.Totals.ExtraRecurring != 0 {
		rows = append(rows, [3]string{tr.T("offer.pdf.extra_discounts"), w.deduction(c.Totals.ExtraActivation), w.deduction(c.Totals.ExtraRecurring)})
	}
	for _, r := range rows {
		w.totalRow(r[0], r[1], r[2], "", false)
	}
	w.totalRow(tr.T("offer.pdf.cart_total"), w.money(c.Totals.NetActivation), w.money(c.Totals.NetRecurring), "B", true)
	pdf.Ln(2)
}

// headRow writes a cart table's column headings, each wrapped within its column (German's
// "Einmalig je Stück" is wider than an amount's column): the row is as tall as its longest.
func (w *writer) headRow(heads [5]string) {
	pdf := w.pdf
	w.font("B", 8.5)
	const lh = 4.2
	lines := make([][]string, len(heads))
	most := 1
	for i, h := range heads {
		text, restore := w.drawable(h)
		lines[i] = pdf.SplitText(text, columns[i]-2)
		restore()
		most = max(most, len(lines[i]))
	}
	if pdf.GetY()+float64(most)*lh+10 > 297-pageMargin-8 {
		pdf.AddPage()
	}
	x, y := pdf.GetXY()
	pdf.SetFillColor(235, 238, 242)
	height := float64(most)*lh + 1.6
	pdf.Rect(x, y, columns[0]+columns[1]+columns[2]+columns[3]+columns[4], height, "F")
	left := x
	for i := range heads {
		align := "R"
		if i == 0 {
			align = "L"
		}
		for j, text := range lines[i] {
			pdf.SetXY(left, y+0.8+float64(j)*lh)
			w.cell(columns[i], lh, text, "", 0, align, false, 0, "")
		}
		left += columns[i]
	}
	pdf.Line(x, y+height, left, y+height)
	pdf.SetXY(x, y+height)
}

// deduction is an amount taken off, as the quote's page writes it: "−" before it, and a dash
// for a deduction of nothing.
func (w *writer) deduction(v float64) string {
	if math.Round(v*100) == 0 {
		return "—"
	}
	return "−" + w.money(math.Abs(v))
}

// item writes an item and, indented below it, its add-ons.
func (w *writer) item(it *apiclient.Item, depth int) {
	tr, pdf := w.tr, w.pdf
	name := strings.TrimSpace(it.Name)
	if name == "" {
		name = tr.T("offer.pdf.product_numbered", strconv.Itoa(int(it.ProductID)))
	}
	kind := tr.T("offer.pdf.add_on")
	if depth == 0 {
		kind = tr.T("offer.pdf.main_product")
	}
	w.font("", 9)
	indent := strings.Repeat("   ", depth)
	// A long name wraps in its column; the amounts stand on its first line.
	x, y := pdf.GetXY()
	w.multi(columns[0], 4.8, indent+name+" ("+kind+")", "", "L", false)
	after := pdf.GetY()
	if after < y { // the name broke onto a new page
		y = pageMargin
	}
	pdf.SetXY(x+columns[0], y)
	net := it.Breakdown.Net
	for i, v := range []float64{it.ActivationPrice, it.RecurringPrice, net.Activation, net.Recurring} {
		w.cell(columns[i+1], 4.8, w.money(v), "", 0, "R", false, 0, "")
	}
	pdf.SetXY(x, math.Max(after, y+4.8))
	w.font("", 8)
	pdf.SetTextColor(90, 90, 90)
	for _, d := range it.Breakdown.Discounts {
		text := indent + "   " + tr.T("offer.pdf.line_discount", d.Name)
		w.cell(columns[0]+columns[1]+columns[2], 4.2, text, "", 0, "L", false, 0, "")
		w.cell(columns[3], 4.2, w.deduction(d.Activation), "", 0, "R", false, 0, "")
		w.cell(columns[4], 4.2, w.deduction(d.Recurring), "", 1, "R", false, 0, "")
	}
	if it.Breakdown.Extra.Activation != 0 || it.Breakdown.Extra.Recurring != 0 {
		text := indent + "   " + tr.T("offer.pdf.line_extra_discount")
		w.cell(columns[0]+columns[1]+columns[2], 4.2, text, "", 0, "L", false, 0, "")
		w.cell(columns[3], 4.2, w.deduction(it.Breakdown.Extra.Activation), "", 0, "R", false, 0, "")
		w.cell(columns[4], 4.2, w.deduction(it.Breakdown.Extra.Recurring), "", 1, "R", false, 0, "")
	}
	pdf.SetTextColor(0, 0, 0)
	for i := range it.Children {
		w.item(&it.Children[i], depth+1)
	}
}

// totalRow writes a label over the first three columns and the one-off and monthly amounts.
func (w *writer) totalRow(label, oneOff, monthly, style string, rule bool) {
	border := ""
	if rule {
		border = "T"
	}
	w.font(style, 9)
	w.cell(columns[0]+columns[1]+columns[2], 5, label, border, 0, "R", false, 0, "")
	w.cell(columns[3], 5, oneOff, border, 0, "R", false, 0, "")
	w.cell(columns[4], 5, monthly, border, 1, "R", false, 0, "")
}

// quoteDiscounts lists the discounts applied to the whole quote.
func (w *writer) quoteDiscounts(q *apiclient.Quote) {
	if len(q.AppliedDiscounts) == 0 && len(q.ExtraDiscounts) == 0 {
		return
	}
	tr := w.tr
	w.pdf.Ln(1)
	w.line("B", 11, tr.T("offer.pdf.quote_discounts"))
	for _, d := range q.AppliedDiscounts {
		w.line("", 9, tr.T("offer.pdf.discount_applies", d.Name, tr.Percent(d.Percent/100), appliesTo(tr, d.AppliesTo)))
	}
	for _, d := range q.ExtraDiscounts {
		w.line("", 9, tr.T("offer.pdf.discount_percent", d.Name, tr.Percent(d.DiscountValue/100)))
	}
}

// appliesTo says which amounts a discount takes from, as the quote's page says it.
func appliesTo(tr *i18n.Translator, v2 string) string {
	switch v2 {
	case "ACTIVATION":
		return tr.T("quote.applies.activation")
	case "RECURRING":
		return tr.T("quote.applies.recurring")
	case "BOTH":
		return tr.T("quote.applies.both")
	}
	return strings.ToLower(v2)
}

// packages lists the packages assigned to the quote.
func (w *writer) packages(q *apiclient.Quote) {
	if len(q.Packages) == 0 {
		return
	}
	w.pdf.Ln(1)
	w.line("B", 11, w.tr.T("offer.pdf.packages"))
	for _, p := range q.Packages {
		w.line("", 9, w.tr.T("offer.pdf.package", p.Name, w.money(p.RecurringPrice)))
	}
}

// totals writes the quote's totals.
func (w *writer) totals(t apiclient.Totals) {
	tr, pdf := w.tr, w.pdf
	if pdf.GetY() > 240 {
		pdf.AddPage()
	}
	w.totalsPage = pdf.PageNo()
	pdf.Ln(3)
	w.line("B", 12, tr.T("offer.pdf.totals"))
	w.font("B", 9)
	w.cell(columns[0]+columns[1]+columns[2], 6, "", "B", 0, "R", false, 0, "")
	w.cell(columns[3], 6, tr.T("offer.pdf.col.one_off"), "B", 0, "R", false, 0, "")
	w.cell(columns[4], 6, tr.T("offer.pdf.col.monthly"), "B", 1, "R", false, 0, "")
	w.totalRow(tr.T("offer.pdf.list_price"), w.money(t.ListActivation), w.money(t.ListRecurring), "", false)
	if t.DiscountActivation != 0 || t.DiscountRecurring != 0 {
		w.totalRow(tr.T("offer.pdf.discounts"), w.deduction(t.DiscountActivation), w.deduction(t.DiscountRecurring), "", false)
	}
	if t.ExtraActivation != 0 || t.ExtraRecurring != 0 {
		w.totalRow(tr.T("offer.pdf.extra_discounts"), w.deduction(t.ExtraActivation), w.deduction(t.ExtraRecurring), "", false)
	}
	w.totalRow(tr.T("offer.pdf.total"), w.money(t.NetActivation), w.money(t.NetRecurring), "B", true)
}

// closing writes the validity and the rep's name and contact.
func (w *writer) closing(in Input) {
	tr, pdf := w.tr, w.pdf
	pdf.Ln(6)
	w.font("", 10)
	w.multi(0, lineHeight, tr.T("offer.pdf.validity", tr.Date(ValidUntil(in.Date)), strconv.Itoa(ValidDays)), "", "L", false)
	pdf.Ln(3)
	// The contact's heading, name and e-mail stay together on one page.
	if pdf.GetY()+3*lineHeight > 297-pageMargin-8 {
		pdf.AddPage()
	}
	w.line("B", 10, tr.T("offer.pdf.rep"))
	if in.Rep.Name != "" {
		w.line("", 10, in.Rep.Name)
	}
	if in.Rep.Email != "" {
		w.line("", 10, in.Rep.Email)
	}
}
