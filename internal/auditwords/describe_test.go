package auditwords

import (
	"testing"

	"golang.org/x/text/language"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	en, it := bundle.Translator(language.English), bundle.Translator(language.Italian)
	names := &Names{}
	names.AddQuote(&apiclient.Quote{
		Currency:            "EUR",
		AvailablePricelists: []apiclient.Pricelist{{PricelistID: 2, Name: "Business 2026"}},
		ExtraDiscounts:      []apiclient.ExtraDiscount{{DiscountID: 9, Name: "Loyalty"}},
		Carts: []apiclient.Cart{{BasketID: 12, Root: &apiclient.Item{NodeID: 40, Name: "Fibra 1000",
			Children: []apiclient.Item{{NodeID: 41, Name: "Static IP", Breakdown: apiclient.Breakdown{Discounts: []apiclient.BreakdownDiscount{{DiscountID: 3, Name: "Welcome"}}}}}}}},
	})
	names.AddCustomer(&apiclient.Customer{Owners: []apiclient.Owner{{OwnerID: 1001, Name: "Olga Owner", Email: "olga@corp.example"}}})
	cases := []struct {
		tr                          *i18n.Translator
		field, before, after        string
		wantField, wantBef, wantAft string
	}{
		{en, "extraDiscounts", `[]`, `[{"discountId":9,"discountValue":5}]`, "Negotiated discounts", "", "Loyalty (5%)"},
		{it, "extraDiscounts", `[]`, `[{"discountId":9,"discountValue":2.5},{"discountId":8,"discountValue":1}]`, "Sconti negoziati", "", "Loyalty (2,5%), sconto n. 8 (1%)"},
		{en, "appliedDiscounts", `[3]`, `[3,7]`, "Discounts", "Welcome", "Welcome, discount no. 7"},
		{en, "carts[12].quantity", "1", "12000", "Quantity of “Fibra 1000”", "1", "12,000"},
		{it, "carts[12].pricelistId", "1", "2", "Listino prezzi di “Fibra 1000”", "Listino prezzi 1", "Business 2026"},
		{en, "items[41].activationPrice", "10", "1234.5", "One-off unit price of “Static IP”", "€10.00", "€1,234.50"},
		{it, "items[41].recurringPrice", "0", "1234.5", "Prezzo unitario mensile di “Static IP”", "0,00\u00a0€", "1234,50\u00a0€"},
		{en, "items", "", "41", "Products", "", "Static IP"},
		{en, "carts", "13", "", "Carts", "cart no. 13", ""},
		{en, "contract.status", "GENERATED", "SIGNATURE_REQUESTED", "Contract status", "Generated", "Signature requested"},
		{en, "owners", "[1001]", "[1001,1002]", "Owners", "Olga Owner", "Olga Owner, user no. 1002"},
		{en, "segment", "BUSINESS", "PUBLIC", "Segment", "Business", "Public"},
		{en, "attributes", `{"tier":"gold","seats":12,"vip":true}`, "", "Other details", "seats: 12; tier: gold; vip: yes", ""},
		{en, "something.new", `{"a":[1,2]}`, "x", "something.new", "a: 1, 2", "x"},
		{en, "name", "Old", "New", "Name", "Old", "New"},
	}
	for _, tc := range cases {
		got := Describe(tc.tr, names, tc.field, tc.before, tc.after)
		if got.Field != tc.wantField || got.Before != tc.wantBef || got.After != tc.wantAft || !got.Changed {
			t.Errorf("%s %s: got %+v, want %q %q -> %q", tc.tr.Lang(), tc.field, got, tc.wantField, tc.wantBef, tc.wantAft)
		}
	}
	if Describe(en, nil, "name", "A", "A").Changed {
		t.Error("an unchanged value is marked changed")
	}
	if got := names.Person("OLGA"); got != "Olga Owner" {
		t.Errorf("person %q", got)
	}
	if got := names.Person("sales"); got != "sales" {
		t.Errorf("unknown person %q", got)
	}
	if got := (*Names)(nil).Person("x"); got != "x" {
		t.Errorf("nil names: %q", got)
	}
}
