package quotes

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"golang.org/x/text/language"

	"github.com/cpqportal/portal/internal/i18n"
)

// render renders c in English, the catalogue's source language.
func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	return renderIn(t, i18n.Source, c)
}

// renderIn renders c in the language.
func renderIn(t *testing.T, lang language.Tag, c templ.Component) *goquery.Document {
	t.Helper()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.Render(i18n.WithTranslator(context.Background(), bundle.Translator(lang)), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestFormatEUR(t *testing.T) {
	t.Parallel()
	for cents, want := range map[int64]string{
		0: "€0.00", 5: "€0.05", 99: "€0.99", 2990: "€29.90", 100000: "€1,000.00", 123456789: "€1,234,567.89", -598: "−€5.98",
	} {
		if got := FormatEUR(cents); got != want {
			t.Errorf("FormatEUR(%d) = %q, want %q", cents, got, want)
		}
	}
}

// Amounts, numbers typed back into inputs and notices follow the reader's language.
func TestMoneyAndInputsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	en, it := bundle.Translator(i18n.Source), bundle.Translator(language.Italian)
	for _, tc := range []struct {
		tr    *i18n.Translator
		cents int64
		want  string
	}{
		{en, 123450, "€1,234.50"}, {en, -598, "−€5.98"}, {it, 1234550, "12.345,50 €"}, {it, -598, "−5,98 €"},
	} {
		if got := Money(tc.tr, tc.cents); got != tc.want {
			t.Errorf("Money(%s, %d) = %q, want %q", tc.tr.Lang(), tc.cents, got, tc.want)
		}
	}
	for _, tc := range []struct {
		tr   *i18n.Translator
		v    float64
		want string
	}{
		{en, 7.5, "7.5"}, {it, 7.5, "7,5"}, {it, 20, "20"}, {it, 12.25, "12,25"},
	} {
		if got := InputNumber(tc.tr, tc.v); got != tc.want {
			t.Errorf("InputNumber(%s, %v) = %q, want %q", tc.tr.Lang(), tc.v, got, tc.want)
		}
		if back, err := tc.tr.ParseDecimal(InputNumber(tc.tr, tc.v)); err != nil || back != tc.v {
			t.Errorf("%s: %q does not read back as %v: %v, %v", tc.tr.Lang(), InputNumber(tc.tr, tc.v), tc.v, back, err)
		}
	}

	doc := renderIn(t, language.Italian, CartPartial(testCart()))
	if got := doc.Find(`#line-800001 [data-testid="line-list-recurring"]`).Text(); got != "89,70 €" {
		t.Errorf("Italian amount %q", got)
	}
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid="cart-quantity-was"]`).Text()), " "); got != "prima 1" {
		t.Errorf("Italian quantity note %q", got)
	}
	// The removal's question is read when the person clicks, in their language (the handlers'
	// TestQuoteRemovalConfirmationsStateTheQuoteOfNow): the button names where, and asks nothing itself.
	remove := doc.Find(`[data-testid="cart-remove"]`)
	if got := remove.AttrOr("data-confirm-url", ""); !strings.HasSuffix(got, "/carts/"+strconv.FormatInt(testCart().BasketID, 10)+"/confirm") || remove.AttrOr("hx-confirm", "") != "" {
		t.Errorf("the cart's removal asks %q (hx-confirm %q), want its question read from .../carts/<id>/confirm", got, remove.AttrOr("hx-confirm", ""))
	}
	extras := renderIn(t, language.Italian, DiscountsPanel(DiscountsVM{Extras: []ExtraChoice{{DiscountID: 9, Name: "Negotiated", Max: 12.5, Value: 7.5, HasValue: true}}}))
	if got := extras.Find(`[data-testid="extra-value"]`).AttrOr("value", ""); got != "7,5" {
		t.Errorf("the extra discount's input holds %q, want 7,5", got)
	}
	if got := extras.Find(`input[name="extraMax-9"]`).AttrOr("value", ""); got != "12.5" {
		t.Errorf("the hidden maximum is %q, want the plain 12.5 the portal reads back", got)
	}
	notice := renderIn(t, language.German, LiveNotice(LiveNoticeVM{Subject: "contract", Notice: ChangeNotice{Who: "backoffice"}}))
	if got := notice.Find(`[data-testid="live-notice-text"]`).Text(); got != "Dieser Vertrag wurde von backoffice geändert." {
		t.Errorf("German contract notice %q", got)
	}
	// "… ago" is an element app.js keeps up to date, inside the translated sentence (issue 26).
	ago := renderIn(t, language.English, LiveNotice(LiveNoticeVM{Subject: "quote", Notice: ChangeNotice{Who: "backoffice", Ago: "10 s ago", AgoSeconds: 10, Actions: []string{"cart removed"}}}))
	if got := ago.Find(`[data-testid="live-notice-text"] time[data-ago="10"]`).Text(); got != "10 s ago" {
		t.Errorf("the notice's time is %q, want 10 s ago in <time data-ago=10>", got)
	}
	if got := ago.Find(`[data-testid="live-notice-text"]`).Text(); !strings.Contains(got, "backoffice 10 s ago") || !strings.Contains(got, "cart removed") {
		t.Errorf("the notice reads %q", got)
	}
}

func testCart() CartVM {
	ref := Ref{CPQID: 1, CustomerID: 17, QuoteID: 900001}
	return CartVM{
		Ref: ref, BasketID: 700001, TOFID: 11, TOFName: "Mobile plans", Label: `<script>alert("x")</script>`, Quantity: 3,
		QuantityWas: 1, QuantityChanged: true, PricelistID: 1,
		Lines: []Line{
			{NodeID: 800001, Name: "Main & <b>bold</b>", Kind: "MAIN", Quantity: 3,
				Price: Totals{
					List:      Sides{Recurring: Amount{Cents: 8970, Was: 2990, Changed: true}},
					Discounts: []DiscountLine{{DiscountID: 1, Name: "Loyalty 10%", Amount: Sides{Recurring: Amount{Cents: 897}}}},
					Net:       Sides{Recurring: Amount{Cents: 8073}},
				}},
			{NodeID: 800002, ParentID: 800001, ParentName: "Main", Name: "Add-on", Kind: "ADDON", Depth: 1, New: true},
		},
	}
}

// A cart shows its tree, the breakdown of each line, what changed, and escapes every name.
func TestCartPartial(t *testing.T) {
	t.Parallel()
	doc := render(t, CartPartial(testCart()))
	if doc.Find("script").Length() != 0 || doc.Find("b").Length() != 0 {
		t.Error("names from the v2 API are not escaped")
	}
	if got := doc.Find(`[data-testid="cart-title"]`).Text(); got != `<script>alert("x")</script>` {
		t.Errorf("cart title %q", got)
	}
	if doc.Find("[style]").Length() != 0 {
		t.Error("inline style (the CSP forbids it)")
	}
	main := doc.Find(`#line-800001`)
	if got := main.Find(`[data-testid="line-list-recurring"]`); !got.HasClass("is-changed") || got.Text() != "€89.70" {
		t.Errorf("changed list amount: %q, class %q", got.Text(), got.AttrOr("class", ""))
	}
	if got := strings.Join(strings.Fields(main.Find(`[data-testid="line-list-recurring-was"]`).Text()), " "); got != "changed, was €29.90" {
		t.Errorf("previous amount: %q", got)
	}
	if got := main.Find(`[data-testid="line-discount-recurring"]`).Text(); got != "−€8.97" {
		t.Errorf("discount: %q", got)
	}
	if main.Find(`[data-testid="line-discount-activation"]`).Length() != 0 {
		t.Error("a discount that took nothing on the one-off side is listed")
	}
	if main.Find(`[data-testid="line-remove"]`).Length() != 0 {
		t.Error("the main product offers Remove (the API refuses it: remove the cart instead)")
	}
	addon := doc.Find(`#line-800002`)
	if !addon.HasClass("depth-1") || !addon.HasClass("is-new") || addon.Find(`[data-testid="line-remove"]`).AttrOr("hx-delete", "") !=
		"/quotes/1/17/900001/carts/700001/items/800002/parent/800001" {
		t.Errorf("add-on row: class %q, remove %q", addon.AttrOr("class", ""), addon.Find(`[data-testid="line-remove"]`).AttrOr("hx-delete", ""))
	}
	// Every action sends the fingerprint, shows a spinner and disables its control.
	doc.Find("[hx-post], [hx-delete]").Each(func(_ int, s *goquery.Selection) {
		if s.AttrOr("hx-include", "") != "#quote-digest" || s.AttrOr("hx-indicator", "") == "" || s.AttrOr("hx-disabled-elt", "") == "" {
			t.Errorf("action %s %s: include %q, indicator %q, disabled %q", s.AttrOr("hx-post", ""), s.AttrOr("hx-delete", ""),
				s.AttrOr("hx-include", ""), s.AttrOr("hx-indicator", ""), s.AttrOr("hx-disabled-elt", ""))
		}
	})
	if got := doc.Find(`[data-testid="cart-quantity-was"]`).Text(); got != "was 1" {
		t.Errorf("quantity change note %q", got)
	}
}

// The update of an action carries its region, the summary and the fingerprint out of band.
func TestUpdatePartial(t *testing.T) {
	t.Parallel()
	cart := testCart()
	doc := render(t, UpdatePartial(UpdateVM{Cart: &cart, Summary: SummaryVM{}, Digest: "q=1,2,3,4,5,6", ClearPanel: "quote-add-cart-panel"}))
	if doc.Find(`#cart-700001`).Length() != 1 {
		t.Error("no cart region")
	}
	if doc.Find(`#quote-summary[hx-swap-oob="true"]`).Length() != 1 || doc.Find(`#quote-digest[hx-swap-oob="true"]`).AttrOr("value", "") != "q=1,2,3,4,5,6" {
		t.Error("summary or fingerprint not out of band")
	}
	if doc.Find(`#quote-add-cart-panel[hx-swap-oob="innerHTML"]`).Length() != 1 {
		t.Error("the panel is not emptied")
	}
	only := render(t, UpdatePartial(UpdateVM{Summary: SummaryVM{}, SummaryOnly: true}))
	if only.Find(`#quote-summary`).AttrOr("hx-swap-oob", "none") != "none" {
		t.Error("the main region is marked out of band")
	}
}

// The Documents slot loads the documents area's partial for the quote.
func TestQuotePageDocumentsSlot(t *testing.T) {
	t.Parallel()
	doc := render(t, QuotePage(QuoteVM{Ref: Ref{CPQID: 1, CustomerID: 17, QuoteID: 900001}, TOFs: []TOF{{ID: 11, Name: "Mobile plans"}}}))
	slot := doc.Find(`#quote-documents`)
	if slot.AttrOr("hx-get", "") != "/quotes/1/17/900001/documents" || slot.AttrOr("hx-trigger", "") != "load" {
		t.Errorf("documents slot: %q %q", slot.AttrOr("hx-get", ""), slot.AttrOr("hx-trigger", ""))
	}
	if got := doc.Find(`[data-testid="quote-add-cart-tof"]`).AttrOr("hx-get", ""); got != "/quotes/1/17/900001/carts/new?tofId=11&tofName=Mobile+plans" {
		t.Errorf("add-cart button: %q", got)
	}
	if doc.Find(`[data-testid="quote-empty"], [data-testid="empty-state"]`).Length() != 1 {
		t.Error("a quote without carts does not say so")
	}
}
