package quotes

import (
	"strconv"
	"strings"
)

// FormatEUR writes cents as euros in English: €1,234.56; negative amounts get a minus sign:
// −€1.00. The quote pages use Money (the reader's language); this stays for the recent-items
// summary, which is stored as text when the item is recorded (internal/recent).
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

// itoa writes ids and references as plain digits: ids are never grouped ("900001").
func itoa(n int64) string   { return strconv.FormatInt(n, 10) }
func itoa32(n int32) string { return strconv.FormatInt(int64(n), 10) }

func cartID(basketID int64) string { return "cart-" + itoa(basketID) }
func lineID(nodeID int64) string   { return "line-" + itoa(nodeID) }

// depthClass indents a line by its depth in the cart's tree (classes, not inline styles: the CSP
// forbids those); deeper lines share the deepest class.
func depthClass(depth int) string {
	return "depth-" + itoa(int64(min(max(depth, 0), 4)))
}

// AsOOB returns the summary marked as an out-of-band swap (or not).
func (s SummaryVM) AsOOB(oob bool) SummaryVM {
	s.OOB = oob
	return s
}
