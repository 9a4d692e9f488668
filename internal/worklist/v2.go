package worklist

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auditwords"
)

// maxQuoteReads bounds the configurators tried for a quote's document (call 10 needs the
// quote's configurator, which the audit does not name; the customer's are tried in turn).
const maxQuoteReads = 3

// V2 is the Source of the v2 API (spec 4.4 validation audit, 4.5 customer, 4.1 call 10); the
// token rides in ctx (apiclient.WithToken).
type V2 struct {
	API *apiclient.Client
	// Configurators are the configurators' names (may be nil); Viewer is the person reading,
	// whose own entries then show their name.
	Configurators map[int32]string
	ViewerName    string
	ViewerEmail   string
	// People names the people who signed in to the portal by login (internal/people; may be nil).
	People auditwords.Directory
}

// Audit implements Source.
func (v V2) Audit(ctx context.Context, quoteID int64) (Audit, error) {
	a, err := v.API.Contracts.ValidationAudit(ctx, quoteID)
	if errors.Is(err, apiclient.ErrNotFound) {
		return Audit{}, ErrNotFound
	}
	if err != nil {
		return Audit{}, fmt.Errorf("worklist: audit of quote %d: %w: %w", quoteID, failureOf(err), err)
	}
	names, customerName := v.Names(ctx, quoteID, a.CustomerID)
	out := Audit{CustomerID: a.CustomerID, CustomerName: customerName, Names: names}
	for _, e := range a.Entries {
		row := Row{At: e.At, Actor: e.Actor, Action: e.Action, Summary: e.Summary}
		for _, c := range e.Changes {
			row.Changes = append(row.Changes, Change{Field: c.Field, Before: Value(c.Before), After: Value(c.After)})
		}
		out.Entries = append(out.Entries, row)
	}
	return out, nil
}

// failureOf is the kind of a failed audit read, for the row's words (problemOf).
func failureOf(err error) error {
	var (
		netErr net.Error
		apiErr *apiclient.APIError
	)
	switch {
	case errors.Is(err, apiclient.ErrForbidden):
		return ErrForbidden
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout(),
		errors.As(err, &apiErr) && apiErr.Status == http.StatusGatewayTimeout:
		return ErrTimeout
	case errors.Is(err, apiclient.ErrServer):
		return ErrUnavailable
	}
	return errUnreadable
}

// errUnreadable is any other failure (a malformed answer, a refused connection).
var errUnreadable = errors.New("worklist: the audit could not be read")

// Names gathers what the audit of quoteID names by id, best effort: the customer's owners, the
// quote's document (carts, items, price lists, discounts, packages, attachments), the
// configurators, the viewer and the people who signed in; and the customer's name. A document that cannot be read teaches
// nothing: its ids are then written as numbered words.
func (v V2) Names(ctx context.Context, quoteID int64, customerID int32) (*auditwords.Names, string) {
	names := &auditwords.Names{Configurators: v.Configurators, People: v.People}
	names.AddPerson(v.ViewerName, v.ViewerEmail)
	customer, err := v.API.Customers.Get(ctx, customerID)
	if err != nil {
		return names, ""
	}
	names.AddCustomer(customer)
	for i, cpqID := range customer.CPQIDs {
		if i == maxQuoteReads || ctx.Err() != nil {
			break
		}
		if quote, err := v.API.CPQ.TOFList(ctx, cpqID, customerID, quoteID); err == nil {
			names.AddQuote(quote)
			break
		}
	}
	return names, customer.Name
}

// NamesAmong is Names when the configurators the quote may be in are known beforehand: the one
// the portal's work index saw the quote in, or the customer's as the user's cached customer list
// holds them. The customer and the quote document in each of the first maxQuoteReads of cpqIDs
// are read side by side, one round trip instead of two or more; the first configurator in
// cpqIDs' order that has the quote names it. A configurator that does not have the quote answers
// 404 and teaches nothing, as when Names tries them in turn. Every read goes with the caller's
// token; a failed read only leaves its names out.
func (v V2) NamesAmong(ctx context.Context, quoteID int64, customerID int32, cpqIDs []int32) (*auditwords.Names, string) {
	names := &auditwords.Names{Configurators: v.Configurators, People: v.People}
	names.AddPerson(v.ViewerName, v.ViewerEmail)
	cpqIDs = cpqIDs[:min(len(cpqIDs), maxQuoteReads)]
	quotes := make([]*apiclient.Quote, len(cpqIDs))
	var wg sync.WaitGroup
	for i, cpqID := range cpqIDs {
		wg.Go(func() {
			if quote, err := v.API.CPQ.TOFList(ctx, cpqID, customerID, quoteID); err == nil {
				quotes[i] = quote
			}
		})
	}
	customer, err := v.API.Customers.Get(ctx, customerID)
	wg.Wait()
	for _, quote := range quotes {
		if quote != nil {
			names.AddQuote(quote)
			break
		}
	}
	if err != nil {
		return names, ""
	}
	names.AddCustomer(customer)
	return names, customer.Name
}

// CustomerName implements Source.
func (v V2) CustomerName(ctx context.Context, customerID int32) (string, error) {
	c, err := v.API.Customers.Get(ctx, customerID)
	if err != nil {
		return "", err
	}
	return c.Name, nil
}
