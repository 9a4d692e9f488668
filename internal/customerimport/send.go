package customerimport

import (
	"context"
	"fmt"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/customercache"
)

// Sender sends an import's lines to the v2 API with one person's token. It is what the run (a job
// of internal/jobs) calls for each included line. The v2 create (POST /v2/customer) has no
// idempotency key, so a line that may have been sent (its create was in flight when the job was
// interrupted) must be looked up with FindByTaxID before it is sent again: the customer may exist
// already (docs/backoffice.md).
type Sender struct {
	API *apiclient.Client
	// CPQID is a configurator the person's token can search customers in: the import creates
	// customers without configurators, which A8 offers through every configurator, so any one of
	// them finds a customer the import created.
	CPQID int64
}

// Input is the v2 body that creates the line's customer: its optional fields left out when empty,
// no configurators (every configurator, A8), the address only when the line has one.
func (l Line) Input() apiclient.CustomerInput {
	f := l.Fields
	in := apiclient.CustomerInput{Name: f.Name, TaxID: f.TaxID, Email: f.Email, Phone: f.Phone, Segment: f.Segment}
	if f.Street != "" || f.City != "" || f.PostalCode != "" || f.Country != "" {
		in.Address = &apiclient.Address{Street: f.Street, City: f.City, PostalCode: f.PostalCode, Country: f.Country}
	}
	return in
}

// Send creates the line's customer with token.
func (s Sender) Send(ctx context.Context, token string, l Line) (*apiclient.Customer, error) {
	created, err := s.API.Customers.Create(apiclient.WithToken(ctx, token), l.Input())
	if err != nil {
		return nil, fmt.Errorf("customerimport: create the customer of row %d: %w", l.Row, err)
	}
	return created, nil
}

// FindByTaxID looks for the customer with taxID (compared as the form compares tax ids) among
// those token can see in the configurator CPQID; found is false when there is none.
func (s Sender) FindByTaxID(ctx context.Context, token, taxID string) (customer *apiclient.Customer, found bool, err error) {
	want := customercache.NormalizeTaxID(taxID)
	if want == "" {
		return nil, false, nil
	}
	list, err := s.API.Customers.Search(apiclient.WithToken(ctx, token), s.CPQID, want)
	if err != nil {
		return nil, false, fmt.Errorf("customerimport: look up tax id %s: %w", want, err)
	}
	for i := range list {
		if customercache.NormalizeTaxID(list[i].TaxID) == want {
			return &list[i], true, nil
		}
	}
	return nil, false, nil
}
