package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"golang.org/x/text/language"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/offer"
)

// The offer document (internal/offer, issue 33): the time to make the PDF of a quote of 20 carts,
// each a main product with three add-ons and a discount on every line, in Italian. Labless: it
// makes the PDF in this process, no portal or simulator is involved.
const (
	offerCarts    = 20
	offerSamples  = 15
	offerBudgetMS = 200
)

// measureOfferPDF reports offer_pdf_20_carts_ms, the median of offerSamples PDFs, and fails over
// the budget.
func measureOfferPDF(ctx context.Context, rep *report) error {
	bundle, err := i18n.Load()
	if err != nil {
		return err
	}
	tr := bundle.Translator(language.Italian).InZone(time.UTC)
	in := offerBenchInput(offerCarts)
	if _, err := offer.Make(tr, in); err != nil { // warm: fonts parsed once by the runtime's caches
		return err
	}
	var ms []float64
	for range offerSamples {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := offer.Make(tr, in); err != nil {
			return err
		}
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
	}
	slices.Sort(ms)
	median := ms[len(ms)/2]
	rep.add("offer_pdf_20_carts_ms", median, "ms")
	if median > offerBudgetMS {
		return fmt.Errorf("offer_pdf_20_carts_ms %.1f > %d", median, offerBudgetMS)
	}
	return nil
}

// offerBenchInput is a quote of carts carts for the offer's benchmark.
func offerBenchInput(carts int) offer.Input {
	line := func(id int32, name string, one, monthly float64) apiclient.Item {
		return apiclient.Item{NodeID: int64(id), ProductID: id, Kind: "ADDON", Name: name, ActivationPrice: one, RecurringPrice: monthly,
			Breakdown: apiclient.Breakdown{
				List:      apiclient.Amounts{Activation: 2 * one, Recurring: 2 * monthly},
				Discounts: []apiclient.BreakdownDiscount{{DiscountID: 1, Name: "Fedeltà", Activation: 0.2 * one, Recurring: 0.2 * monthly}},
				Net:       apiclient.Amounts{Activation: 1.8 * one, Recurring: 1.8 * monthly},
			}}
	}
	q := &apiclient.Quote{QuoteID: 900001, CPQID: 1, CustomerID: 1, Currency: "EUR",
		UpdatedAt:           time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC),
		AvailablePricelists: []apiclient.Pricelist{{PricelistID: 1, Name: "Listino 2026"}},
		AppliedDiscounts:    []apiclient.AppliedDiscount{{DiscountID: 1, Name: "Fedeltà", Percent: 10, AppliesTo: "BOTH"}}}
	for i := range carts {
		root := line(int32(100*i+1), "Fibra Ultra "+strconv.Itoa(i+1), 149, 39.9)
		root.Kind = "MAIN"
		root.Children = []apiclient.Item{line(int32(100*i+2), "Router Wi-Fi", 99, 3.5),
			line(int32(100*i+3), "IP statico", 0, 5), line(int32(100*i+4), "Assistenza più", 0, 9.9)}
		q.Carts = append(q.Carts, apiclient.Cart{BasketID: int64(i + 1), TOFID: 1, Label: "Sede " + strconv.Itoa(i+1), Quantity: 2,
			PricelistID: 1, Root: &root, Totals: apiclient.Totals{ListActivation: 496, ListRecurring: 116.6, DiscountActivation: 49.6,
				DiscountRecurring: 11.66, NetActivation: 446.4, NetRecurring: 104.94}})
	}
	q.Totals = apiclient.Totals{ListActivation: 496 * float64(carts), NetActivation: 446.4 * float64(carts),
		ListRecurring: 116.6 * float64(carts), NetRecurring: 104.94 * float64(carts)}
	return offer.Input{Quote: q, Customer: offer.Customer{Name: "Società Benè S.r.l.", Address: apiclient.Address{Street: "Via Roma 1",
		City: "Milano", PostalCode: "20121", Country: "IT"}}, Rep: offer.Rep{Name: "Sam Sales", Email: "sales@example.test"},
		Date: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
}
