package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/cpqportal/portal/internal/apiclient"
)

// benchQuote is a quote made for the run directly on the simulator with the user's own token: two carts
// with add-ons and a discount, like a quote a sales person works on.
type benchQuote struct {
	cpqID      int32
	customerID int32
	quoteID    int64
	quote      *apiclient.Quote
}

// pagePath is the portal's quote page.
func (q *benchQuote) pagePath() string {
	return fmt.Sprintf("/quotes/%d/%d/%d", q.cpqID, q.customerID, q.quoteID)
}

// v2Client is a v2 client (the portal's own client package) straight to the lab's simulator.
func (l *lab) v2Client() (*apiclient.Client, error) {
	return apiclient.New(l.simURL, apiclient.WithHTTPClient(&http.Client{Transport: apiclient.NewTransport()}))
}

// newBenchQuote creates a quote of configurator 1 for customer 1 (associated in the seed data).
func newBenchQuote(ctx context.Context, l *lab, user *signedIn) (*benchQuote, error) {
	api, err := l.v2Client()
	if err != nil {
		return nil, err
	}
	ctx = apiclient.WithToken(ctx, user.accessToken)
	const cpqID, customerID = 1, 1
	init, err := api.CPQ.Init(ctx, cpqID, customerID)
	if err != nil {
		return nil, fmt.Errorf("bench quote: %w", err)
	}
	if len(init.TOFList) == 0 {
		return nil, errors.New("bench quote: configurator 1 has no TOF")
	}
	var quote *apiclient.Quote
	for i, tof := range init.TOFList {
		if i == 2 {
			break
		}
		products, err := api.CPQ.ValidProducts(ctx, init.SessionID, cpqID, tof.ID)
		if err != nil {
			return nil, fmt.Errorf("bench quote: %w", err)
		}
		main := pickProduct(products, "MAIN", 0)
		if main == nil {
			return nil, fmt.Errorf("bench quote: TOF %d has no main product", tof.ID)
		}
		if quote == nil {
			quote, err = api.CPQ.AddCart(ctx, init.SessionID, cpqID, tof.ID, apiclient.AddCartRequest{
				ProductID: main.ProductID, TOFProductID: main.TOFProductID, CustomerID: customerID, Label: "Bench head office",
			})
		} else {
			quote, err = api.CPQ.AddCartToQuote(ctx, init.SessionID, cpqID, tof.ID, quote.QuoteID)
		}
		if err != nil {
			return nil, fmt.Errorf("bench quote: add cart: %w", err)
		}
		cart := quote.Carts[len(quote.Carts)-1]
		if addon := pickProduct(products, "ADDON", cart.Root.ProductID); addon != nil {
			quote, err = api.CPQ.AddItem(ctx, init.SessionID, cpqID, quote.QuoteID, cart.BasketID, cart.Root.NodeID,
				apiclient.AddItemRequest{OfferTypeID: tof.ID, ProductID: addon.ProductID, OfferTypeProductID: addon.TOFProductID})
			if err != nil {
				return nil, fmt.Errorf("bench quote: add item: %w", err)
			}
		}
	}
	discounts, err := api.CPQ.ApplicableDiscounts(ctx, init.SessionID, cpqID, quote.QuoteID)
	if err != nil {
		return nil, fmt.Errorf("bench quote: %w", err)
	}
	for _, d := range discounts {
		if !d.Extra {
			quote, err = api.CPQ.ApplyDiscounts(ctx, init.SessionID, cpqID, quote.QuoteID,
				apiclient.ApplyDiscountsRequest{AppliedDiscounts: []int32{d.DiscountID}, ExtraDiscountList: []apiclient.ExtraDiscountInput{}})
			if err != nil {
				return nil, fmt.Errorf("bench quote: %w", err)
			}
			break
		}
	}
	return &benchQuote{cpqID: cpqID, customerID: customerID, quoteID: quote.QuoteID, quote: quote}, nil
}

// pickProduct returns the first product of kind (an ADDON allowed under parent when parent != 0),
// preferring the default MAIN product.
func pickProduct(products []apiclient.Product, kind string, parent int32) *apiclient.Product {
	var found *apiclient.Product
	for i := range products {
		p := &products[i]
		if p.Kind != kind {
			continue
		}
		if parent != 0 && !containsID(p.ParentProductIDs, parent) {
			continue
		}
		if p.Default {
			return p
		}
		if found == nil {
			found = p
		}
	}
	return found
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}
