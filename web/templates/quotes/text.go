package quotes

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
)

// Words and numbers of the quote pages in the reader's language (the translator rides in ctx).
// Names that come from the v2 API (products, offer types, price lists, discounts) are shown as
// they come; only the portal's own words go through the catalogue.

// Currency is the currency of every amount of the v2 API (docs/v2-assumptions.md conventions).
const Currency = "EUR"

// Money writes cents the way the reader's language writes money ("€1,234.50", "1234,50 €");
// a negative amount gets a typographic minus in front, as every amount on these pages does.
func Money(tr *i18n.Translator, cents int64) string {
	if cents < 0 {
		return "−" + tr.Money(-cents, Currency)
	}
	return tr.Money(cents, Currency)
}

// money is Money in ctx's language, for templates.
func money(ctx context.Context, cents int64) string { return Money(i18n.From(ctx), cents) }

// InputNumber writes v for a text input the reader can submit again as it is: the language's
// separators, no more fraction digits than v has (at most two), e.g. "7,5" in Italian.
func InputNumber(tr *i18n.Translator, v float64) string {
	digits := 0
	for digits < 2 && math.Abs(v*math.Pow10(digits)-math.Round(v*math.Pow10(digits))) > 1e-9 {
		digits++
	}
	return tr.Decimal(v, digits)
}

// inputAmount writes cents for a price input: two decimals in the reader's language ("49,90").
func inputAmount(ctx context.Context, cents int64) string {
	return i18n.From(ctx).Decimal(float64(cents)/100, 2)
}

// percent writes a percentage (10 for 10 %) as the reader's language does ("10%", "10 %").
func percent(ctx context.Context, p float64) string { return i18n.From(ctx).Percent(p / 100) }

// count writes a whole number with the language's grouping.
func count(ctx context.Context, n int) string { return i18n.From(ctx).Integer(int64(n)) }

// appliesToText says which side a discount takes from.
func appliesToText(ctx context.Context, appliesTo string) string {
	switch appliesTo {
	case "ACTIVATION":
		return i18n.T(ctx, "quote.applies.activation")
	case "RECURRING":
		return i18n.T(ctx, "quote.applies.recurring")
	case "BOTH":
		return i18n.T(ctx, "quote.applies.both")
	}
	return strings.ToLower(appliesTo)
}

// kindText names a product kind (docs/v2-assumptions.md A5 #9).
func kindText(ctx context.Context, kind string) string {
	switch kind {
	case "MAIN":
		return i18n.T(ctx, "quote.kind.main")
	case "ADDON":
		return i18n.T(ctx, "quote.kind.addon")
	}
	return kind
}

// statusText names a quote's status; a status the portal does not know is shown as it comes.
func statusText(ctx context.Context, status string) string {
	if status == "DRAFT" {
		return i18n.T(ctx, "quote.status.draft")
	}
	return status
}

// customerDetails is the small print under a customer's name: tax id, city, customer number.
func customerDetails(ctx context.Context, cu CustomerChoice) string {
	parts := []string{}
	if cu.TaxID != "" {
		parts = append(parts, cu.TaxID)
	}
	if cu.City != "" {
		parts = append(parts, i18n.Isolate(cu.City))
	}
	parts = append(parts, i18n.T(ctx, "start.customer_number_short", itoa(int64(cu.ID))))
	return strings.Join(parts, " · ")
}

// sign formats the amount, as a deduction when minus; a deduction of nothing is a dash.
func (a Amount) sign(ctx context.Context, minus bool) string {
	switch {
	case minus && a.Cents == 0:
		return "—"
	case minus:
		return "−" + money(ctx, a.Cents)
	}
	return money(ctx, a.Cents)
}

// wasNote says what a changed amount was; a deduction that took nothing before is new.
func (a Amount) wasNote(ctx context.Context, minus bool) string {
	switch {
	case minus && a.Was == 0:
		return i18n.T(ctx, "quote.amount.new")
	case minus:
		return i18n.T(ctx, "quote.amount.was", "−"+money(ctx, a.Was))
	}
	return i18n.T(ctx, "quote.amount.was", money(ctx, a.Was))
}

// title is the cart's heading: its label, else its main product, else its number.
func (c CartVM) title(ctx context.Context) string {
	if t := c.Title(); t != "" {
		return t
	}
	return i18n.T(ctx, "quote.cart.numbered", itoa(c.BasketID))
}

// noticeText is "This quote was changed by backoffice 10 s ago: discounts applied, cart removed."
// subject is "quote" or "contract" (the contract page shows the same banner).
func noticeText(ctx context.Context, subject string, n ChangeNotice) string {
	var head string
	switch {
	case subject == "contract" && n.Who != "":
		head = i18n.T(ctx, "quote.notice.contract_changed_by", n.Who)
	case subject == "contract":
		head = i18n.T(ctx, "quote.notice.contract_changed_elsewhere")
	case n.Who != "":
		head = i18n.T(ctx, "quote.notice.changed_by", n.Who)
	default:
		head = i18n.T(ctx, "quote.notice.changed_elsewhere")
	}
	if n.Ago != "" {
		head += " " + n.Ago
	}
	if len(n.Actions) > 0 {
		return i18n.T(ctx, "quote.notice.with_actions", head, strings.Join(n.Actions, ", "))
	}
	return i18n.T(ctx, "quote.notice.sentence", head)
}

// extraValue is what an extra discount's input holds: the applied value in the reader's
// language ("7,5"), or nothing.
func extraValue(ctx context.Context, d ExtraChoice) string {
	if !d.HasValue {
		return ""
	}
	return InputNumber(i18n.From(ctx), d.Value)
}

// plainNumber writes a number for the portal itself (a hidden field), never for people: "20.5".
func plainNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// addonsHint says how many add-ons the offer type has, in the right grammatical number.
func addonsHint(ctx context.Context, n int) string {
	return i18n.From(ctx).Plural(n, "start.products.addons.one", "start.products.addons.other")
}

// sessionState is the quote page's data-session: "active" when the quote has a configuration
// session, "later" when one starts with the first change.
func sessionState(active bool) string {
	if active {
		return "active"
	}
	return "later"
}

// extraLabel names the extra discounts' row of the totals: the discount the person chose ("Negotiated
// discount") when there is one, the generic "Extra discount" for several.
func extraLabel(ctx context.Context, extras []ExtraDiscount) string {
	if len(extras) == 1 && extras[0].Name != "" {
		return extras[0].Name
	}
	return i18n.T(ctx, "quote.breakdown.extra")
}

// marked is n with its "… ago" part replaced by components.AgoMark, for components.AgoSentence.
func (n ChangeNotice) marked() ChangeNotice {
	if n.Ago != "" {
		n.Ago = components.AgoMark
	}
	return n
}
