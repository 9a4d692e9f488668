package v2sim

import (
	"testing"
)

func TestMoneyString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   Money
		want string
	}{{0, "0.00"}, {5, "0.05"}, {2990, "29.90"}, {100, "1.00"}, {123456789, "1234567.89"}, {-150, "-1.50"}} {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("Money(%d) = %q, want %q", int64(tc.in), got, tc.want)
		}
	}
}

func TestMoneyFromFloat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   float64
		want Money
		ok   bool
	}{{29.9, 2990, true}, {0.1 + 0.2, 30, true}, {1000000, 100000000, true}, {12.345, 0, false}, {0.001, 0, false}} {
		got, ok := moneyFromFloat(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("moneyFromFloat(%v) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPercentOfRoundsHalfUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		amount Money
		bp     int64
		want   Money
	}{
		{8970, 500, 449}, // 448.5 -> 449
		{1001, 450, 45},  // 45.045 -> 45
		{1010, 500, 51},  // 50.5 -> 51
		{5382, 500, 269}, // 269.1 -> 269
		{14700, 10000, 14700},
		{0, 5000, 0},
		{999, 0, 0},
	} {
		if got := percentOf(tc.amount, tc.bp); got != tc.want {
			t.Errorf("percentOf(%d, %d) = %d, want %d", tc.amount, tc.bp, got, tc.want)
		}
	}
}

func TestPriceLine(t *testing.T) {
	t.Parallel()
	loyalty := appliedDiscount{ID: 1, Name: "Loyalty 10%", BP: 1000, AppliesTo: appliesRecurring}
	volume := appliedDiscount{ID: 3, Name: "Volume 5%", BP: 500, AppliesTo: appliesBoth}
	freeInstall := appliedDiscount{ID: 12, Name: "Free installation", BP: 10000, AppliesTo: appliesActivation}
	sixty := appliedDiscount{ID: 4, Name: "Sixty", BP: 6000, AppliesTo: appliesBoth}
	for _, tc := range []struct {
		name           string
		unitA, unitR   Money
		qty            int64
		discounts      []appliedDiscount
		extras         []appliedExtra
		listA, listR   Money
		discA, discR   Money
		extraA, extraR Money
		netA, netR     Money
	}{
		{name: "quantity multiplies the list", unitA: 4900, unitR: 2990, qty: 2,
			listA: 9800, listR: 5980, netA: 9800, netR: 5980},
		{name: "example of docs/v2-assumptions.md A4", unitA: 4900, unitR: 2990, qty: 2,
			discounts: []appliedDiscount{loyalty}, extras: []appliedExtra{{ID: 9, BP: 500, AppliesTo: appliesRecurring}},
			listA: 9800, listR: 5980, discR: 598, extraR: 269, netA: 9800, netR: 5113},
		{name: "discounts on both sides, extra on the remainder, half-up per amount", unitA: 4900, unitR: 2990, qty: 3,
			discounts: []appliedDiscount{loyalty, volume}, extras: []appliedExtra{{ID: 9, BP: 450, AppliesTo: appliesBoth}},
			listA: 14700, listR: 8970, discA: 735, discR: 897 + 449, extraA: 628, extraR: 343, netA: 13337, netR: 7281},
		{name: "percentages capped at 100 per side", unitA: 9900, unitR: 3990, qty: 1,
			discounts: []appliedDiscount{freeInstall, {ID: 13, Name: "Multi-site", BP: 750, AppliesTo: appliesBoth}},
			listA:     9900, listR: 3990, discA: 9900, discR: 299, netA: 0, netR: 3691},
		{name: "second discount gets what is left of 100", unitA: 1000, unitR: 1000, qty: 1,
			discounts: []appliedDiscount{sixty, sixty},
			listA:     1000, listR: 1000, discA: 1000, discR: 1000, netA: 0, netR: 0},
		{name: "extras each take a percent of the same remainder", unitA: 0, unitR: 10000, qty: 1,
			extras: []appliedExtra{{ID: 8, BP: 1000, AppliesTo: appliesRecurring}, {ID: 9, BP: 500, AppliesTo: appliesBoth}},
			listR:  10000, extraR: 1500, netR: 8500},
		{name: "zero prices", unitA: 0, unitR: 0, qty: 9999, discounts: []appliedDiscount{volume},
			extras: []appliedExtra{{ID: 9, BP: 2000, AppliesTo: appliesBoth}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lp := priceLine(tc.unitA, tc.unitR, tc.qty, tc.discounts, tc.extras)
			var discA, discR Money
			for _, d := range lp.Discounts {
				discA += d.Activation
				discR += d.Recurring
			}
			got := [8]Money{lp.ListActivation, lp.ListRecurring, discA, discR, lp.ExtraActivation, lp.ExtraRecurring, lp.NetActivation, lp.NetRecurring}
			want := [8]Money{tc.listA, tc.listR, tc.discA, tc.discR, tc.extraA, tc.extraR, tc.netA, tc.netR}
			if got != want {
				t.Errorf("list/discount/extra/net = %v, want %v", got, want)
			}
			if len(lp.Discounts) != len(tc.discounts) {
				t.Errorf("%d discount lines, want one per applied discount (%d)", len(lp.Discounts), len(tc.discounts))
			}
		})
	}
}

func TestPartnerPricelistIsFifteenPercentCheaper(t *testing.T) {
	t.Parallel()
	p := &product{Activation: 4900, Recurring: 2990}
	a, r := p.price(pricelistPartner)
	if a != 4165 || r != 2541 { // 49.00 - 7.35; 29.90 - 4.485 rounded half-up to 4.49
		t.Errorf("partner price = %s / %s, want 41.65 / 25.41", a, r)
	}
	a, r = p.price(pricelistStandard)
	if a != 4900 || r != 2990 {
		t.Errorf("standard price = %s / %s", a, r)
	}
}

// TestQuotePricingThroughTheAPI drives the pricing rules of A4 through calls 3, 5, 8, 12, 13, 15 and 16, and
// checks every answer is the whole quote document with consistent totals.
func TestQuotePricingThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid, q := e.newQuote(10)
	if len(q.Carts) != 1 || q.Carts[0].Quantity != 1 || q.Carts[0].PricelistID != 1 || q.Status != "DRAFT" || q.Currency != "EUR" {
		t.Fatalf("new quote = %+v", q)
	}
	basket := q.Carts[0].BasketID
	root := q.Carts[0].Root
	if cents(root.ListRecurringPrice) != 2990 || cents(q.Totals.NetActivation) != 4900 {
		t.Fatalf("new quote prices = %+v totals %+v", root, q.Totals)
	}
	base := path("/v2/cpq/1/quote/%d", q.QuoteID)

	// Quantity 3 multiplies every line.
	e.do("PUT", path("%s/basket/%d/quantity", base, basket), map[string]any{"quantity": 3}, withSession(sid)).wantStatus(t, 200).decode(t, &q)
	if got := q.Carts[0].Totals; cents(got.ListActivation) != 14700 || cents(got.ListRecurring) != 8970 {
		t.Fatalf("after quantity 3: cart totals %+v", got)
	}

	// An add-on (Roaming World pack, 0 / 9.00) under the main product.
	e.do("POST", path("%s/basket/%d/parent/%d/additemtocart", base, basket, root.NodeID), map[string]any{
		"offerTypeId": 11, "productId": 104, "offerTypeProductId": 1104, "itemUniqueId": "6f1c1f6e-4a8e-4d3b-9b39-0d6c1d1e2f30",
	}, withSession(sid)).wantStatus(t, 200).decode(t, &q)
	if kids := q.Carts[0].Root.Children; len(kids) != 1 || kids[0].ProductID != 104 || kids[0].Kind != "ADDON" || kids[0].ParentID != root.NodeID {
		t.Fatalf("children after additem = %+v", kids)
	}

	// Loyalty 10% (recurring), Volume 5% (both) and a negotiated 4.5% extra (both).
	e.do("PUT", base+"/applyDiscounts", map[string]any{
		"appliedDiscounts":  []int{1, 3},
		"extraDiscountList": []map[string]any{{"discountId": 9, "discountValue": 4.5}},
	}, withSession(sid)).wantStatus(t, 200).decode(t, &q)
	wantTotals := tTotals{ListActivation: 147, ListRecurring: 116.70, DiscountActivation: 7.35, DiscountRecurring: 17.51,
		ExtraActivation: 6.28, ExtraRecurring: 4.46, NetActivation: 133.37, NetRecurring: 94.73}
	assertTotals(t, "after discounts", q.Totals, wantTotals)
	assertTotals(t, "cart after discounts", q.Carts[0].Totals, wantTotals)
	rootLine := q.Carts[0].Root.Breakdown
	if len(rootLine.Discounts) != 2 || cents(rootLine.Discounts[1].Recurring) != 449 || cents(rootLine.Net.Recurring) != 7281 {
		t.Errorf("root breakdown = %+v", rootLine)
	}
	if len(q.AppliedDiscounts) != 2 || len(q.ExtraDiscounts) != 1 || q.ExtraDiscounts[0].DiscountValue != 4.5 {
		t.Errorf("discounts in document = %+v / %+v", q.AppliedDiscounts, q.ExtraDiscounts)
	}

	// Clear discounts, reprice the main product: its list price stays visible, the line uses the override.
	e.do("PUT", base+"/applyDiscounts", map[string]any{"appliedDiscounts": []int{}, "extraDiscountList": []any{}}, withSession(sid)).wantStatus(t, 200)
	e.do("PUT", base+"/reprice", map[string]any{"activationPrice": 40, "recurringPrice": 25.5, "basketId": basket, "cartItemId": root.NodeID},
		withSession(sid)).wantStatus(t, 200).decode(t, &q)
	r := q.Carts[0].Root
	if !r.Repriced || cents(r.ActivationPrice) != 4000 || cents(r.RecurringPrice) != 2550 || cents(r.ListActivationPrice) != 4900 ||
		cents(r.Breakdown.List.Activation) != 12000 || cents(r.Breakdown.List.Recurring) != 7650 {
		t.Errorf("repriced root = %+v", r)
	}

	// Partner price list: the add-on follows it (9.00 -> 7.65), the repriced root keeps its override.
	e.do("PUT", base+"/changePricelist", map[string]any{"pricelistId": 2, "cartId": basket}, withSession(sid)).wantStatus(t, 200).decode(t, &q)
	c := q.Carts[0]
	if c.PricelistID != 2 || cents(c.Root.Children[0].ListRecurringPrice) != 765 || cents(c.Root.RecurringPrice) != 2550 {
		t.Errorf("after price list change: %+v", c)
	}
	assertTotals(t, "partner list", q.Totals, tTotals{ListActivation: 120, ListRecurring: 76.50 + 22.95, NetActivation: 120, NetRecurring: 76.50 + 22.95})

	// A package adds to the quote's recurring list and net, not to the cart's.
	cartBefore := q.Carts[0].Totals
	e.do("POST", "/v2/cpq/1/package", map[string]any{"customerId": 10, "customerQuoteId": 0, "packageId": 31, "tofId": 11,
		"quoteId": q.QuoteID, "assigneeUserId": 1003}, withSession(sid)).wantStatus(t, 200).decode(t, &q)
	if len(q.Packages) != 1 || q.Packages[0].PackageID != 31 || q.Packages[0].AssigneeUserID != 1003 {
		t.Fatalf("packages = %+v", q.Packages)
	}
	assertTotals(t, "cart with package", q.Carts[0].Totals, cartBefore)
	assertTotals(t, "quote with package", q.Totals, tTotals{ListActivation: 120, ListRecurring: 99.45 + 15, NetActivation: 120, NetRecurring: 99.45 + 15})

	// Call 10 answers the same document as the last mutation.
	last := e.do("POST", "/v2/cpq/1/package", map[string]any{"customerId": 10, "customerQuoteId": 0, "packageId": 32, "tofId": 11,
		"quoteId": q.QuoteID, "assigneeUserId": 1003}, withSession(sid)).wantStatus(t, 200)
	resumed := e.do("GET", path("/v2/cpq/1/customer/10/quote/%d/toflist", q.QuoteID), nil).wantStatus(t, 200)
	if string(last.body) != string(resumed.body) {
		t.Errorf("toflist differs from the last mutation's document:\n%s\n%s", last.body, resumed.body)
	}
}

func assertTotals(t *testing.T, what string, got, want tTotals) {
	t.Helper()
	g := [8]int64{cents(got.ListActivation), cents(got.ListRecurring), cents(got.DiscountActivation), cents(got.DiscountRecurring),
		cents(got.ExtraActivation), cents(got.ExtraRecurring), cents(got.NetActivation), cents(got.NetRecurring)}
	w := [8]int64{cents(want.ListActivation), cents(want.ListRecurring), cents(want.DiscountActivation), cents(want.DiscountRecurring),
		cents(want.ExtraActivation), cents(want.ExtraRecurring), cents(want.NetActivation), cents(want.NetRecurring)}
	if g != w {
		t.Errorf("%s: totals (cents) = %v, want %v", what, g, w)
	}
}

// TestQuoteTotalsAreSumsOfLines checks, on every seeded quote, that cart totals are the sums of their lines
// and quote totals the sums of carts plus packages.
func TestQuoteTotalsAreSumsOfLines(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.sim.mu.Lock()
	defer e.sim.mu.Unlock()
	if len(e.sim.quotes) < 3 {
		t.Fatalf("seeded %d quotes, want 3", len(e.sim.quotes))
	}
	for _, q := range e.sim.quotes {
		doc := e.sim.quoteDoc(q)
		var sum totals
		for _, c := range doc.Carts {
			var lines totals
			var walk func(n nodeDoc)
			walk = func(n nodeDoc) {
				lines.ListActivation += n.Breakdown.List.Activation
				lines.ListRecurring += n.Breakdown.List.Recurring
				lines.NetActivation += n.Breakdown.Net.Activation
				lines.NetRecurring += n.Breakdown.Net.Recurring
				lines.ExtraActivation += n.Breakdown.Extra.Activation
				lines.ExtraRecurring += n.Breakdown.Extra.Recurring
				for _, d := range n.Breakdown.Discounts {
					lines.DiscountActivation += d.Activation
					lines.DiscountRecurring += d.Recurring
				}
				if n.Breakdown.Net.Activation != n.Breakdown.List.Activation-sumDiscounts(n, true)-n.Breakdown.Extra.Activation {
					t.Errorf("quote %d node %d: net activation is not list - discounts - extra", q.ID, n.NodeID)
				}
				for _, ch := range n.Children {
					walk(ch)
				}
			}
			walk(c.Root)
			if lines != c.Totals {
				t.Errorf("quote %d cart %d: totals %+v, sum of lines %+v", q.ID, c.BasketID, c.Totals, lines)
			}
			sum.add(c.Totals)
		}
		for _, p := range doc.Packages {
			sum.ListRecurring += p.RecurringPrice
			sum.NetRecurring += p.RecurringPrice
		}
		if sum != doc.Totals {
			t.Errorf("quote %d: totals %+v, want %+v", q.ID, doc.Totals, sum)
		}
	}
}

func sumDiscounts(n nodeDoc, activation bool) Money {
	var s Money
	for _, d := range n.Breakdown.Discounts {
		if activation {
			s += d.Activation
		} else {
			s += d.Recurring
		}
	}
	return s
}
