package handlers

import (
	"strings"
	"testing"

	"golang.org/x/text/language"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/quotes"
)

func sampleQuoteRef() quotes.Ref { return quotes.Ref{CPQID: 1, CustomerID: 17, QuoteID: 900001} }

func TestQuoteParseQuantity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int32
		ok   bool
	}{
		{"1", 1, true}, {"9999", 9999, true}, {"42", 42, true}, {"007", 7, true},
		{"", 0, false}, {"0", 0, false}, {"-1", 0, false}, {"10000", 0, false}, {"1.5", 0, false}, {"1,0", 0, false},
		{"three", 0, false}, {"+3", 0, false}, {"1e3", 0, false}, {"99999999999999999999", 0, false}, {"٣", 0, false},
	} {
		got, msg := parseQuantity(tc.in)
		if msg.IsZero() != tc.ok || got != tc.want {
			t.Errorf("parseQuantity(%q) = %d, %q; want %d, ok=%v", tc.in, got, msg.Key, tc.want, tc.ok)
		}
	}
}

// quoteTranslators are the English and Italian translators.
func quoteTranslators(t *testing.T) (en, it *i18n.Translator) {
	t.Helper()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	return bundle.Translator(i18n.Source), bundle.Translator(language.Italian)
}

// Prices are read the reader's way: the decimal separator of their language, its grouping, and
// never the other separator (in Italian "1.234" is a thousand and more, in English it has three
// decimals, too many for money).
func TestQuoteParsePrice(t *testing.T) {
	t.Parallel()
	en, it := quoteTranslators(t)
	for _, tc := range []struct {
		tr   *i18n.Translator
		in   string
		want float64
		ok   bool
	}{
		{en, "0", 0, true}, {en, "49.90", 49.9, true}, {en, "€ 12.5", 12.5, true}, {en, "1000000", 1000000, true}, {en, "1,234.50", 1234.5, true},
		{en, "", 0, false}, {en, "-1", 0, false}, {en, "1.234", 0, false}, {en, "abc", 0, false}, {en, "1000000.01", 0, false},
		{en, "NaN", 0, false}, {en, "Inf", 0, false}, {en, "1e3", 0, false}, {en, "12 000", 0, false}, {en, "49,9", 0, false},
		{it, "49,9", 49.9, true}, {it, "12,5 €", 12.5, true}, {it, "1.234,50", 1234.5, true}, {it, "1.234", 1234, true},
		{it, "49.90", 0, false}, {it, "1.5", 0, false}, {it, "1,234", 0, false}, {it, "NaN", 0, false},
	} {
		got, msg := parsePrice(tc.tr, tc.in, false)
		if msg.IsZero() != tc.ok || got != tc.want {
			t.Errorf("parsePrice(%s, %q) = %v, %q; want %v, ok=%v", tc.tr.Lang(), tc.in, got, msg.Key, tc.want, tc.ok)
		}
	}
}

func TestQuoteParsePercent(t *testing.T) {
	t.Parallel()
	en, it := quoteTranslators(t)
	for _, tc := range []struct {
		tr   *i18n.Translator
		in   string
		max  float64
		want float64
		ok   bool
	}{
		{en, "5", 20, 5, true}, {en, "7.5", 20, 7.5, true}, {en, "20", 20, 20, true}, {en, "0.01", 10, 0.01, true},
		{en, "0", 20, 0, false}, {en, "20.01", 20, 0, false}, {en, "-3", 20, 0, false}, {en, "abc", 20, 0, false}, {en, "5%", 20, 0, false},
		{en, "7,5", 20, 0, false}, {en, "5.125", 20, 0, false},
		{it, "12,5", 20, 12.5, true}, {it, "5", 20, 5, true}, {it, "1.5", 20, 0, false}, {it, "20,01", 20, 0, false},
	} {
		got, msg := parsePercent(tc.tr, tc.in, tc.max)
		if msg.IsZero() != tc.ok || got != tc.want {
			t.Errorf("parsePercent(%s, %q, %v) = %v, %q; want %v, ok=%v", tc.tr.Lang(), tc.in, tc.max, got, msg.Key, tc.want, tc.ok)
		}
	}
	if _, msg := parsePercent(it, "25", 12.5); msg.In(it) != "Lo sconto extra deve essere maggiore di 0 e al massimo 12,5." {
		t.Errorf("Italian range message %q", msg.In(it))
	}
}

// testQuote is a small quote document: one cart, a main product and an add-on, one discount.
func sampleQuoteDoc() *apiclient.Quote {
	return &apiclient.Quote{
		QuoteID: 900001, CPQID: 1, CustomerID: 17,
		AppliedDiscounts: []apiclient.AppliedDiscount{{DiscountID: 1, Name: "Loyalty 10%", Percent: 10, AppliesTo: "RECURRING"}},
		Carts: []apiclient.Cart{{
			BasketID: 700001, TOFID: 11, Quantity: 2, PricelistID: 1,
			Root: &apiclient.Item{NodeID: 800001, Name: "Main", ActivationPrice: 49, RecurringPrice: 29.9,
				Breakdown: apiclient.Breakdown{List: apiclient.Amounts{Activation: 98, Recurring: 59.8},
					Discounts: []apiclient.BreakdownDiscount{{DiscountID: 1, Name: "Loyalty 10%", Recurring: 5.98}},
					Net:       apiclient.Amounts{Activation: 98, Recurring: 53.82}},
				Children: []apiclient.Item{{NodeID: 800002, ParentID: 800001, Name: "Addon", RecurringPrice: 4.9,
					Breakdown: apiclient.Breakdown{List: apiclient.Amounts{Recurring: 9.8},
						Discounts: []apiclient.BreakdownDiscount{{DiscountID: 1, Name: "Loyalty 10%", Recurring: 0.98}},
						Net:       apiclient.Amounts{Recurring: 8.82}}}}},
			Totals: apiclient.Totals{ListActivation: 98, ListRecurring: 69.6, DiscountRecurring: 6.96, NetActivation: 98, NetRecurring: 62.64},
		}},
		Totals: apiclient.Totals{ListActivation: 98, ListRecurring: 69.6, DiscountRecurring: 6.96, NetActivation: 98, NetRecurring: 62.64},
	}
}

func TestQuoteDigestRoundTripAndChanges(t *testing.T) {
	t.Parallel()
	before := sampleQuoteDoc()
	d := parseDigest(digestOf(before))
	if d == nil {
		t.Fatalf("digest %q does not parse", digestOf(before))
	}
	if got, ok := d.previous("n800001", 8); !ok || got[3] != 5980 || got[7] != 5382 {
		t.Errorf("line fingerprint %v", got)
	}
	if got, ok := d.previous("d1", 2); !ok || got[1] != 696 {
		t.Errorf("discount fingerprint %v, want 696 monthly (5.98 + 0.98)", got)
	}

	// The quantity goes up and a second add-on appears: the view marks exactly that.
	after := sampleQuoteDoc()
	after.Carts[0].Quantity = 3
	after.Carts[0].Root.Breakdown.Net.Recurring = 80.73
	after.Carts[0].Root.Children = append(after.Carts[0].Root.Children, apiclient.Item{NodeID: 800003, ParentID: 800001, Name: "New"})
	en, _ := quoteTranslators(t)
	v := newQuoteView(en, sampleQuoteRef(), after, d)
	cart := v.cart(&after.Carts[0])
	if !cart.QuantityChanged || cart.QuantityWas != 2 {
		t.Errorf("quantity change not seen: %+v", cart.QuantityChanged)
	}
	if net := cart.Lines[0].Price.Net.Recurring; !net.Changed || net.Was != 5382 || net.Cents != 8073 {
		t.Errorf("net monthly of the main product: %+v", net)
	}
	if cart.Lines[0].Price.Net.Activation.Changed {
		t.Error("an unchanged amount is marked changed")
	}
	if len(cart.Lines) != 3 || cart.Lines[1].New || !cart.Lines[2].New || cart.Lines[2].Depth != 1 || cart.Lines[2].ParentName != "Main" {
		t.Errorf("lines: %+v", cart.Lines)
	}
	if cart.New {
		t.Error("the cart was there before")
	}

	// Without a previous state nothing is marked.
	plain := newQuoteView(en, sampleQuoteRef(), after, nil).cart(&after.Carts[0])
	if plain.QuantityChanged || plain.Lines[2].New || plain.Lines[0].Price.Net.Recurring.Changed {
		t.Error("changes marked without a previous state")
	}
}

func TestQuoteParseDigestRefusesMalformedInput(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "q", "q=1,x", "=1", "q=1;;", strings.Repeat("a", maxDigestBytes+1), "n1=99999999999999999999"} {
		if d := parseDigest(in); d != nil {
			t.Errorf("parseDigest(%.40q) = %v, want nil", in, d)
		}
	}
}

// FuzzQuoteParseDigest: whatever a page sends back as its fingerprint, parsing never panics and
// what it keeps is well-formed.
func FuzzQuoteParseDigest(f *testing.F) {
	f.Add(digestOf(sampleQuoteDoc()))
	f.Add("q=1,2,3,4,5,6;c1=1,1,0,0,0,0,0,0")
	f.Add("n1=-5,,")
	f.Fuzz(func(t *testing.T, s string) {
		d := parseDigest(s)
		for key := range d {
			if key == "" || len(key) > 24 {
				t.Fatalf("key %q kept", key)
			}
		}
	})
}
