package worklist

import (
	"context"
	"errors"
	"fmt"

	"github.com/cpqportal/portal/internal/apiclient"
)

// V2 is the Source of the v2 API (spec 4.4 validation audit, 4.5 customer); the token rides in
// ctx (apiclient.WithToken).
type V2 struct {
	API *apiclient.Client
}

// Audit implements Source.
func (v V2) Audit(ctx context.Context, quoteID int64) (Audit, error) {
	a, err := v.API.Contracts.ValidationAudit(ctx, quoteID)
	if errors.Is(err, apiclient.ErrNotFound) {
		return Audit{}, ErrNotFound
	}
	if err != nil {
		return Audit{}, fmt.Errorf("worklist: audit of quote %d: %w", quoteID, err)
	}
	out := Audit{CustomerID: a.CustomerID}
	for _, e := range a.Entries {
		row := Row{At: e.At, Actor: e.Actor, Action: e.Action, Summary: e.Summary}
		for _, c := range e.Changes {
			row.Changes = append(row.Changes, Change{Field: c.Field, Before: Value(c.Before), After: Value(c.After)})
		}
		out.Entries = append(out.Entries, row)
	}
	return out, nil
}

// CustomerName implements Source.
func (v V2) CustomerName(ctx context.Context, customerID int32) (string, error) {
	c, err := v.API.Customers.Get(ctx, customerID)
	if err != nil {
		return "", err
	}
	return c.Name, nil
}
