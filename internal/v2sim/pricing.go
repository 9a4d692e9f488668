package v2sim

// Pricing rules of docs/v2-assumptions.md A4. The functions here are pure so they can be table-tested; the quote
// code feeds them one line (one cart item) at a time.

// appliedDiscount is a regular discount applied to the quote, in the order it was applied.
type appliedDiscount struct {
	ID        int32
	Name      string
	BP        int64 // percent in hundredths
	AppliesTo string
}

// appliedExtra is an extra discount with its negotiated value.
type appliedExtra struct {
	ID        int32
	BP        int64 // discountValue in hundredths of a percent
	AppliesTo string
}

// discountLine is what one applied discount takes from one line.
type discountLine struct {
	ID                    int32
	Name                  string
	Activation, Recurring Money
}

// linePrice is the priced line of one cart item (A4 breakdown).
type linePrice struct {
	ListActivation, ListRecurring   Money
	Discounts                       []discountLine
	ExtraActivation, ExtraRecurring Money
	NetActivation, NetRecurring     Money
}

func onActivation(appliesTo string) bool {
	return appliesTo == appliesActivation || appliesTo == appliesBoth
}
func onRecurring(appliesTo string) bool {
	return appliesTo == appliesRecurring || appliesTo == appliesBoth
}

// priceLine prices one item: unit prices times the cart quantity (step 2), each applied discount's percent of
// the list amount on its side with the percentages capped at 100 per side (step 3), each extra discount's
// value as a percent of what remains after step 3 (step 4), net = list - discounts - extra (step 5). Every
// amount is rounded half-up to the cent on its own.
func priceLine(unitActivation, unitRecurring Money, quantity int64, discounts []appliedDiscount, extras []appliedExtra) linePrice {
	lp := linePrice{
		ListActivation: unitActivation * Money(quantity),
		ListRecurring:  unitRecurring * Money(quantity),
		Discounts:      make([]discountLine, 0, len(discounts)),
	}
	const full = 10000 // 100 % in hundredths
	var usedActivation, usedRecurring int64
	var discActivation, discRecurring Money
	for _, d := range discounts {
		dl := discountLine{ID: d.ID, Name: d.Name}
		if onActivation(d.AppliesTo) {
			bp := min(d.BP, full-usedActivation)
			usedActivation += bp
			dl.Activation = percentOf(lp.ListActivation, bp)
		}
		if onRecurring(d.AppliesTo) {
			bp := min(d.BP, full-usedRecurring)
			usedRecurring += bp
			dl.Recurring = percentOf(lp.ListRecurring, bp)
		}
		// Rounding each discount on its own could overshoot the list amount by a cent when the percentages add
		// up to exactly 100; never discount more than the list amount.
		dl.Activation = min(dl.Activation, lp.ListActivation-discActivation)
		dl.Recurring = min(dl.Recurring, lp.ListRecurring-discRecurring)
		discActivation += dl.Activation
		discRecurring += dl.Recurring
		lp.Discounts = append(lp.Discounts, dl)
	}
	remainActivation := lp.ListActivation - discActivation
	remainRecurring := lp.ListRecurring - discRecurring
	for _, e := range extras {
		if onActivation(e.AppliesTo) {
			lp.ExtraActivation += percentOf(remainActivation, e.BP)
		}
		if onRecurring(e.AppliesTo) {
			lp.ExtraRecurring += percentOf(remainRecurring, e.BP)
		}
	}
	lp.ExtraActivation = min(lp.ExtraActivation, remainActivation)
	lp.ExtraRecurring = min(lp.ExtraRecurring, remainRecurring)
	lp.NetActivation = remainActivation - lp.ExtraActivation
	lp.NetRecurring = remainRecurring - lp.ExtraRecurring
	return lp
}

// totals are the sums of a cart's or quote's lines (A4 totals).
type totals struct {
	ListActivation     Money `json:"listActivation"`
	ListRecurring      Money `json:"listRecurring"`
	DiscountActivation Money `json:"discountActivation"`
	DiscountRecurring  Money `json:"discountRecurring"`
	ExtraActivation    Money `json:"extraActivation"`
	ExtraRecurring     Money `json:"extraRecurring"`
	NetActivation      Money `json:"netActivation"`
	NetRecurring       Money `json:"netRecurring"`
}

func (t *totals) addLine(lp linePrice) {
	t.ListActivation += lp.ListActivation
	t.ListRecurring += lp.ListRecurring
	for _, d := range lp.Discounts {
		t.DiscountActivation += d.Activation
		t.DiscountRecurring += d.Recurring
	}
	t.ExtraActivation += lp.ExtraActivation
	t.ExtraRecurring += lp.ExtraRecurring
	t.NetActivation += lp.NetActivation
	t.NetRecurring += lp.NetRecurring
}

func (t *totals) add(o totals) {
	t.ListActivation += o.ListActivation
	t.ListRecurring += o.ListRecurring
	t.DiscountActivation += o.DiscountActivation
	t.DiscountRecurring += o.DiscountRecurring
	t.ExtraActivation += o.ExtraActivation
	t.ExtraRecurring += o.ExtraRecurring
	t.NetActivation += o.NetActivation
	t.NetRecurring += o.NetRecurring
}
