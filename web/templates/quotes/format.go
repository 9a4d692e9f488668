package quotes

import (
	"strconv"
	"strings"
)

// FormatEUR writes cents as euros for people: €1,234.56 (the v2 API's currency is EUR,
// docs/v2-assumptions.md conventions); negative amounts get a minus sign: −€1.00.
func FormatEUR(cents int64) string {
	sign := ""
	if cents < 0 {
		sign = "−"
		cents = -cents
	}
	whole := strconv.FormatInt(cents/100, 10)
	var b strings.Builder
	b.WriteString(sign)
	b.WriteString("€")
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	b.WriteByte('.')
	frac := cents % 100
	if frac < 10 {
		b.WriteByte('0')
	}
	b.WriteString(strconv.FormatInt(frac, 10))
	return b.String()
}

// Decimal writes cents as a plain number with two decimals for an input's value: 1234.50.
func Decimal(cents int64) string {
	sign := ""
	if cents < 0 {
		sign = "-"
		cents = -cents
	}
	frac := cents % 100
	pad := ""
	if frac < 10 {
		pad = "0"
	}
	return sign + strconv.FormatInt(cents/100, 10) + "." + pad + strconv.FormatInt(frac, 10)
}

// appliesToText says which side a discount takes from.
func appliesToText(appliesTo string) string {
	switch appliesTo {
	case "ACTIVATION":
		return "one-off"
	case "RECURRING":
		return "monthly"
	case "BOTH":
		return "one-off and monthly"
	}
	return strings.ToLower(appliesTo)
}

func itoa(n int64) string   { return strconv.FormatInt(n, 10) }
func itoa32(n int32) string { return strconv.FormatInt(int64(n), 10) }

// customerDetails is the small print under a customer's name: tax id, city, customer number.
func customerDetails(cu CustomerChoice) string {
	parts := []string{}
	if cu.TaxID != "" {
		parts = append(parts, cu.TaxID)
	}
	if cu.City != "" {
		parts = append(parts, cu.City)
	}
	parts = append(parts, "customer no. "+itoa32(cu.ID))
	return strings.Join(parts, " · ")
}

func cartID(basketID int64) string { return "cart-" + itoa(basketID) }
func lineID(nodeID int64) string   { return "line-" + itoa(nodeID) }

// depthClass indents a line by its depth in the cart's tree (classes, not inline styles: the CSP
// forbids those); deeper lines share the deepest class.
func depthClass(depth int) string {
	return "depth-" + itoa(int64(min(max(depth, 0), 4)))
}

// sign formats the amount, as a deduction when minus; a deduction of nothing is a dash.
func (a Amount) sign(minus bool) string {
	switch {
	case minus && a.Cents == 0:
		return "—"
	case minus:
		return a.Minus()
	}
	return a.Text()
}

// wasNote says what a changed amount was; a deduction that took nothing before is new.
func (a Amount) wasNote(minus bool) string {
	switch {
	case minus && a.Was == 0:
		return "new"
	case minus:
		return "was −" + a.WasText()
	}
	return "was " + a.WasText()
}

// AsOOB returns the summary marked as an out-of-band swap (or not).
func (s SummaryVM) AsOOB(oob bool) SummaryVM {
	s.OOB = oob
	return s
}

// kindText names a product kind (docs/v2-assumptions.md A5 #9).
func kindText(kind string) string {
	switch kind {
	case "MAIN":
		return "Main product"
	case "ADDON":
		return "Add-on"
	}
	return kind
}
