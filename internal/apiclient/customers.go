package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// CustomersService holds the customer calls of spec section 4.5.
type CustomersService service

// CustomerInput is the body of a customer create: the document without id,
// owners, profiles, version and dates (A8). Optional fields are omitted when
// empty.
type CustomerInput struct {
	Name       string          `json:"name"`
	TaxID      string          `json:"taxId"`
	Email      string          `json:"email,omitempty"`
	Phone      string          `json:"phone,omitempty"`
	Segment    string          `json:"segment"`
	Status     string          `json:"status,omitempty"`
	Address    *Address        `json:"address,omitempty"`
	CPQIDs     []int32         `json:"cpqIds,omitempty"`
	Attributes json.RawMessage `json:"attributes,omitempty"`
}

// CustomerUpdate is the body of a customer update: the document with its id.
// The service changes only what the body names (A8), so every field left at
// its zero value is left out of the body and keeps its value. The optional
// text fields are pointers because they can also be cleared: a pointer to ""
// sends "" and the service empties the field. The required fields (name, tax
// id, segment) cannot be empty, so "" leaves them out. A non-zero Version
// makes a stale update answer 409.
type CustomerUpdate struct {
	ID         int32           `json:"id"`
	Version    int64           `json:"version,omitempty"`
	Name       string          `json:"name,omitempty"`
	TaxID      string          `json:"taxId,omitempty"`
	Email      *string         `json:"email,omitempty"`
	Phone      *string         `json:"phone,omitempty"`
	Segment    string          `json:"segment,omitempty"`
	Address    *AddressUpdate  `json:"address,omitempty"`
	CPQIDs     []int32         `json:"cpqIds,omitempty"`
	Attributes json.RawMessage `json:"attributes,omitempty"`
}

// AddressUpdate is the address of a customer update: a nil part is left out
// and keeps its value, a pointer to "" clears the part (A8).
type AddressUpdate struct {
	Street     *string `json:"street,omitempty"`
	City       *string `json:"city,omitempty"`
	PostalCode *string `json:"postalCode,omitempty"`
	Country    *string `json:"country,omitempty"` // two upper-case letters, or "" to clear
}

// ProfileInput is the body of a profile create (A8).
type ProfileInput struct {
	CustomerID  int32  `json:"customerId"`
	ProfileType string `json:"profileType"` // BILLING, SHIPPING, TECHNICAL or LEGAL
	ContactName string `json:"contactName"`
	Email       string `json:"email"`
	Phone       string `json:"phone"`
}

// Get returns a customer.
func (s *CustomersService) Get(ctx context.Context, customerID int32) (*Customer, error) {
	return s.customer(ctx, &call{endpoint: EndpointCustomerGet, params: []param{id32("id", customerID)}})
}

// List returns every customer (the service has no pagination, A8). With the
// ETag of an earlier answer it may answer notModified with no customers.
// The array is decoded as a stream, element by element. The customers' Raw is
// nil: only single documents (Get, Create, Update) keep their JSON.
func (s *CustomersService) List(ctx context.Context, etag string) (customers []Customer, newETag string, notModified bool, err error) {
	newETag, notModified, err = s.ListEach(ctx, etag, func(c *Customer) error {
		customers = append(customers, *c)
		return nil
	})
	if err != nil {
		return nil, "", false, err
	}
	if customers == nil && !notModified {
		customers = []Customer{}
	}
	return customers, newETag, notModified, nil
}

// ListEach is List handing each customer to fn as it is decoded, so a cache
// can hold them in its own form (Raw is nil, as for List). fn's error
// stops the decoding and is returned as is. The caller's context bounds the
// call: the list may be large, so [WithTimeout] does not apply.
func (s *CustomersService) ListEach(ctx context.Context, etag string, fn func(*Customer) error) (newETag string, notModified bool, err error) {
	resp, req, newETag, err := s.openList(ctx, etag)
	if resp == nil || err != nil {
		return newETag, err == nil, err
	}
	defer closeBody(resp.Body)
	cl := &call{endpoint: EndpointCustomerList}
	if err := s.client.decodeArray(resp.Body, func(dec *json.Decoder) error {
		// Decoded as plain fields, without Customer.UnmarshalJSON: that one keeps each document's
		// JSON as Raw, which costs the list another scan and a copy of every document (100,000 of
		// them at scale) that none of its users read (docs/performance.md).
		type fieldsOnly Customer
		var c Customer
		if err := dec.Decode((*fieldsOnly)(&c)); err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return callbackError{err}
		}
		return nil
	}); err != nil {
		return "", false, fmt.Errorf("apiclient: %s %s (%s): %w", req.Method, req.URL.EscapedPath(), cl.endpoint, err)
	}
	return resp.Header.Get("ETag"), false, nil
}

// openList sends GET /v2/customer/ (with If-None-Match when etag is set). It
// answers the response to decode, or a nil response and the ETag when the list
// is not modified.
func (s *CustomersService) openList(ctx context.Context, etag string) (resp *http.Response, req *http.Request, notModifiedETag string, err error) {
	cl := &call{endpoint: EndpointCustomerList}
	if etag != "" {
		if !validHeaderValue(etag) || len(etag) > MaxSegmentBytes {
			return nil, nil, "", fmt.Errorf("apiclient: %s: %w: etag is not a valid header value", EndpointCustomerList, ErrInvalidParameter)
		}
		cl.header = http.Header{"If-None-Match": {etag}}
	}
	req, err = s.client.newRequest(ctx, cl)
	if err != nil {
		return nil, nil, "", err
	}
	resp, err = s.client.send(req, cl.endpoint)
	if err != nil {
		return nil, nil, "", err
	}
	if resp.StatusCode == http.StatusNotModified {
		closeBody(resp.Body)
		notModifiedETag = resp.Header.Get("ETag")
		if notModifiedETag == "" {
			notModifiedETag = etag
		}
		return nil, req, notModifiedETag, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer closeBody(resp.Body)
		return nil, nil, "", newAPIError(cl.endpoint, req, resp)
	}
	return resp, req, "", nil
}

// callbackError marks an error returned by the caller's callback, so it is
// not mistaken for a malformed answer.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }
func (e callbackError) Unwrap() error { return e.err }

// decodeArray streams a JSON array from r, calling each for every element
// (each must decode exactly one value with dec).
func (c *Client) decodeArray(r io.Reader, each func(dec *json.Decoder) error) error {
	lr := &limitedReader{r: r, remaining: c.maxResponseBytes}
	dec := json.NewDecoder(lr)
	tok, err := dec.Token()
	if err != nil {
		return lr.wrap(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("%w: want a JSON array, got %v", ErrMalformedResponse, tok)
	}
	for dec.More() {
		if err := each(dec); err != nil {
			var cbErr callbackError
			if errors.As(err, &cbErr) {
				return cbErr.err
			}
			return lr.wrap(err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return lr.wrap(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("%w: data after the JSON array", ErrMalformedResponse)
		}
		return lr.wrap(err)
	}
	return nil
}

// Search returns up to 50 customers of a configurator whose name, tax id,
// e-mail or id contains query (A8); an empty query returns the first 50. The
// spec types this cpqId as long.
func (s *CustomersService) Search(ctx context.Context, cpqID int64, query string) ([]Customer, error) {
	cl := &call{endpoint: EndpointCustomerSearch, params: []param{id64("cpqId", cpqID)}}
	if query != "" {
		if len(query) > MaxSegmentBytes {
			return nil, fmt.Errorf("apiclient: %s: %w: query is longer than %d bytes", EndpointCustomerSearch, ErrInvalidParameter, MaxSegmentBytes)
		}
		cl.query = []param{{name: "query", value: query}}
	}
	var out []Customer
	if _, err := s.client.doJSON(ctx, cl, &out, '['); err != nil {
		return nil, err
	}
	return out, nil
}

// Create creates a customer (answered 201 with the document).
func (s *CustomersService) Create(ctx context.Context, in CustomerInput) (*Customer, error) {
	return s.customer(ctx, &call{endpoint: EndpointCustomerCreate, json: in})
}

// Update changes the fields of a customer that in names (see [CustomerUpdate]).
func (s *CustomersService) Update(ctx context.Context, in CustomerUpdate) (*Customer, error) {
	if p := id32("id", in.ID); p.err != nil {
		return nil, fmt.Errorf("apiclient: %s: %w", EndpointCustomerUpdate, p.err)
	}
	return s.customer(ctx, &call{endpoint: EndpointCustomerUpdate, json: in})
}

// SetOwners replaces the owners of a customer (1 to 10 owner ids).
func (s *CustomersService) SetOwners(ctx context.Context, customerID int32, ownerIDs []int64) (*Customer, error) {
	if ownerIDs == nil {
		ownerIDs = []int64{}
	}
	return s.customer(ctx, &call{
		endpoint: EndpointCustomerOwnersUpdate,
		params:   []param{id32("id", customerID)},
		json: struct {
			OwnerIDs []int64 `json:"ownerIds"`
		}{ownerIDs},
	})
}

// AddOwner adds an owner to a customer (empty body).
func (s *CustomersService) AddOwner(ctx context.Context, customerID int32, ownerID int64) (*Customer, error) {
	return s.customer(ctx, &call{
		endpoint:  EndpointCustomerOwnerAdd,
		params:    []param{id32("id", customerID), id64("ownerId", ownerID)},
		emptyBody: true,
	})
}

// ChangeOwner replaces one owner of a customer by another.
func (s *CustomersService) ChangeOwner(ctx context.Context, customerID int32, currentOwnerID, newOwnerID int64) (*Customer, error) {
	return s.customer(ctx, &call{
		endpoint: EndpointCustomerOwnerChange,
		params:   []param{id32("id", customerID)},
		json: struct {
			CurrentOwnerID int64 `json:"currentOwnerId"`
			NewOwnerID     int64 `json:"newOwnerId"`
		}{currentOwnerID, newOwnerID},
	})
}

// CreateProfile creates a customer profile.
func (s *CustomersService) CreateProfile(ctx context.Context, in ProfileInput) (*Profile, error) {
	out := new(Profile)
	if _, err := s.client.doJSON(ctx, &call{endpoint: EndpointCustomerProfileCreate, json: in}, out, '{'); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteProfile deletes a customer profile (query parameters customerId and
// profileId, A8).
func (s *CustomersService) DeleteProfile(ctx context.Context, customerID, profileID int32) error {
	_, err := s.client.doJSON(ctx, &call{
		endpoint: EndpointCustomerProfileDelete,
		query:    []param{id32("customerId", customerID), id32("profileId", profileID)},
	}, nil, 0)
	return err
}

func (s *CustomersService) customer(ctx context.Context, cl *call) (*Customer, error) {
	out := new(Customer)
	if _, err := s.client.doJSON(ctx, cl, out, '{'); err != nil {
		return nil, err
	}
	return out, nil
}
