package handlers

import (
	"strconv"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// quoteView turns a quote document (docs/v2-assumptions.md A4) into the quote page's view models,
// comparing it with what the page showed before the last action (prev, see quote_digest.go).
// The portal computes no price: it only sums what each discount took, for the breakdowns.
type quoteView struct {
	tr             *i18n.Translator // the reader's: names the portal makes up are in their language
	ref            quotes.Ref
	q              *apiclient.Quote
	prev           quoteDigest
	tofNames       map[int32]string
	pricelistNames map[int32]string
	pricelists     []components.Option
}

func newQuoteView(tr *i18n.Translator, ref quotes.Ref, q *apiclient.Quote, prev quoteDigest) *quoteView {
	v := &quoteView{tr: tr, ref: ref, q: q, prev: prev, tofNames: map[int32]string{}, pricelistNames: map[int32]string{}}
	for _, t := range q.TOFList {
		v.tofNames[t.ID] = t.Name
	}
	for _, pl := range q.AvailablePricelists {
		v.pricelistNames[pl.PricelistID] = pl.Name
		v.pricelists = append(v.pricelists, components.Option{Value: strconv.FormatInt(int64(pl.PricelistID), 10), Label: pl.Name})
	}
	return v
}

func (v *quoteView) tofName(id int32) string {
	if name, ok := v.tofNames[id]; ok && name != "" {
		return name
	}
	return v.tr.T("quote.tof.numbered", idText(id))
}

func (v *quoteView) pricelistName(id int32) string {
	if name, ok := v.pricelistNames[id]; ok && name != "" {
		return name
	}
	return v.tr.T("quote.pricelist.numbered", idText(id))
}

// tofs lists the quote's TOFs (call 10's tofList: every TOF of the configurator, A4).
func (v *quoteView) tofs() []quotes.TOF {
	out := make([]quotes.TOF, 0, len(v.q.TOFList))
	for _, t := range v.q.TOFList {
		out = append(out, quotes.TOF{ID: t.ID, Name: v.tofName(t.ID), Description: t.Description})
	}
	return out
}

// carts is the #quote-carts region.
func (v *quoteView) carts(focus bool) quotes.CartsVM {
	vm := quotes.CartsVM{Ref: v.ref, Focus: focus}
	for i := range v.q.Carts {
		vm.Carts = append(vm.Carts, v.cart(&v.q.Carts[i]))
	}
	return vm
}

// cart is one cart's region.
func (v *quoteView) cart(c *apiclient.Cart) quotes.CartVM {
	key := "c" + strconv.FormatInt(c.BasketID, 10)
	prev, ok := v.prev.previous(key, 8)
	vm := quotes.CartVM{
		Ref: v.ref, BasketID: c.BasketID, TOFID: c.TOFID, TOFName: v.tofName(c.TOFID), Label: c.Label,
		Quantity: c.Quantity, PricelistID: c.PricelistID, PricelistName: v.pricelistName(c.PricelistID),
		Pricelists: v.pricelists, New: v.prev.isNew(key),
	}
	if ok && prev[0] != int64(c.Quantity) {
		vm.QuantityChanged, vm.QuantityWas = true, int32(prev[0])
	}
	if ok && prev[1] != int64(c.PricelistID) {
		vm.PricelistWas = v.pricelistName(int32(prev[1]))
	}
	t := c.Totals
	vm.Totals = quotes.Totals{
		List: quotes.Sides{Activation: amountAt(cents(t.ListActivation), prev, ok, 2), Recurring: amountAt(cents(t.ListRecurring), prev, ok, 3)},
		// Regular discounts are summed from the lines, per discount, to show what each took.
		Extra: quotes.Sides{Activation: amountAt(cents(t.ExtraActivation), prev, ok, 4), Recurring: amountAt(cents(t.ExtraRecurring), prev, ok, 5)},
		Net:   quotes.Sides{Activation: amountAt(cents(t.NetActivation), prev, ok, 6), Recurring: amountAt(cents(t.NetRecurring), prev, ok, 7)},
	}
	var sums []discountSum
	index := map[int32]int{}
	for _, d := range v.q.AppliedDiscounts {
		index[d.DiscountID] = len(sums)
		sums = append(sums, discountSum{id: d.DiscountID, name: d.Name})
	}
	addDiscountSums(c.Root, &sums, index)
	vm.Totals.Discounts = discountLines(sums)

	walkItems(c.Root, 0, "", func(it *apiclient.Item, depth int, parentName string) {
		vm.Lines = append(vm.Lines, v.line(c, it, depth, parentName))
	})
	return vm
}

// line is one item of a cart with its breakdown.
func (v *quoteView) line(c *apiclient.Cart, it *apiclient.Item, depth int, parentName string) quotes.Line {
	key := "n" + strconv.FormatInt(it.NodeID, 10)
	prev, ok := v.prev.previous(key, 8)
	bd := it.Breakdown
	l := quotes.Line{
		NodeID: it.NodeID, ParentID: it.ParentID, ProductID: it.ProductID, Name: it.Name, Kind: it.Kind,
		Depth: depth, ParentName: parentName, Repriced: it.Repriced, Quantity: c.Quantity,
		Unit: quotes.Sides{Activation: amountAt(cents(it.ActivationPrice), prev, ok, 0), Recurring: amountAt(cents(it.RecurringPrice), prev, ok, 1)},
		ListUnit: quotes.Sides{Activation: quotes.Amount{Cents: cents(it.ListActivationPrice)},
			Recurring: quotes.Amount{Cents: cents(it.ListRecurringPrice)}},
		Price: quotes.Totals{
			List:  quotes.Sides{Activation: amountAt(cents(bd.List.Activation), prev, ok, 2), Recurring: amountAt(cents(bd.List.Recurring), prev, ok, 3)},
			Extra: quotes.Sides{Activation: amountAt(cents(bd.Extra.Activation), prev, ok, 4), Recurring: amountAt(cents(bd.Extra.Recurring), prev, ok, 5)},
			Net:   quotes.Sides{Activation: amountAt(cents(bd.Net.Activation), prev, ok, 6), Recurring: amountAt(cents(bd.Net.Recurring), prev, ok, 7)},
		},
		New: v.prev.isNew(key),
	}
	for _, d := range bd.Discounts {
		l.Price.Discounts = append(l.Price.Discounts, quotes.DiscountLine{DiscountID: d.DiscountID, Name: d.Name,
			Amount: quotes.Sides{Activation: quotes.Amount{Cents: cents(d.Activation)}, Recurring: quotes.Amount{Cents: cents(d.Recurring)}}})
	}
	return l
}

// discountLines turns sums into the view's discount lines (not compared: the totals are).
func discountLines(sums []discountSum) []quotes.DiscountLine {
	out := make([]quotes.DiscountLine, 0, len(sums))
	for _, s := range sums {
		out = append(out, quotes.DiscountLine{DiscountID: s.id, Name: s.name,
			Amount: quotes.Sides{Activation: quotes.Amount{Cents: s.activation}, Recurring: quotes.Amount{Cents: s.recurring}}})
	}
	return out
}

// summary is the #quote-summary region.
func (v *quoteView) summary() quotes.SummaryVM {
	t := v.q.Totals
	prev, ok := v.prev.previous("q", 6)
	vm := quotes.SummaryVM{
		Ref:       v.ref,
		CartCount: len(v.q.Carts),
		Totals: quotes.Totals{
			List:  quotes.Sides{Activation: amountAt(cents(t.ListActivation), prev, ok, 0), Recurring: amountAt(cents(t.ListRecurring), prev, ok, 1)},
			Extra: quotes.Sides{Activation: amountAt(cents(t.ExtraActivation), prev, ok, 2), Recurring: amountAt(cents(t.ExtraRecurring), prev, ok, 3)},
			Net:   quotes.Sides{Activation: amountAt(cents(t.NetActivation), prev, ok, 4), Recurring: amountAt(cents(t.NetRecurring), prev, ok, 5)},
		},
	}
	for _, d := range quoteDiscountSums(v.q) {
		dp, dok := v.prev.previous("d"+strconv.FormatInt(int64(d.id), 10), 2)
		if v.prev != nil && !dok {
			dp, dok = []int64{0, 0}, true // newly applied: it took nothing before
		}
		vm.Totals.Discounts = append(vm.Totals.Discounts, quotes.DiscountLine{DiscountID: d.id, Name: d.name,
			Amount: quotes.Sides{Activation: amountAt(d.activation, dp, dok, 0), Recurring: amountAt(d.recurring, dp, dok, 1)}})
	}
	for _, d := range v.q.AppliedDiscounts {
		vm.Applied = append(vm.Applied, quotes.AppliedDiscount{DiscountID: d.DiscountID, Name: d.Name,
			Percent: d.Percent, AppliesTo: d.AppliesTo})
	}
	for _, d := range v.q.ExtraDiscounts {
		vm.Extras = append(vm.Extras, quotes.ExtraDiscount{DiscountID: d.DiscountID, Name: d.Name, Value: d.DiscountValue})
	}
	for _, p := range v.q.Packages {
		vm.Packages = append(vm.Packages, quotes.Package{PackageID: p.PackageID, TOFName: v.tofName(p.TOFID), Name: p.Name,
			Recurring: cents(p.RecurringPrice), AssigneeUserID: p.AssigneeUserID})
		vm.PackagesRecurring += cents(p.RecurringPrice)
	}
	return vm
}

// update is the answer of an action that changed prices (see quotes.UpdatePartial).
func (v *quoteView) update() quotes.UpdateVM {
	digest := digestOf(v.q)
	return quotes.UpdateVM{Ref: v.ref, Summary: v.summary(), Digest: digest, DigestTag: changeTag(digest)}
}

// totalText says the quote's new net total, for the screen-reader announcement.
func totalText(tr *i18n.Translator, q *apiclient.Quote) string {
	return tr.T("quote.announce.total", quotes.Money(tr, cents(q.Totals.NetActivation)), quotes.Money(tr, cents(q.Totals.NetRecurring)))
}

// idText writes an id as plain digits for a message: ids are never grouped ("900001", not
// "900,001", which a %d in a catalogue message would print).
func idText[T ~int32 | ~int64](id T) string { return strconv.FormatInt(int64(id), 10) }
