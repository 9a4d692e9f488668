package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cpqportal/portal/internal/jsonscan"
)

// CustomerListItem is the part of a customer document that a list of customers
// shows, searches and exports (ListItems): nothing of the profiles,
// attributes, phone, status or street. Its byte slices alias the decoder's
// buffers and are valid only until the callback returns.
type CustomerListItem struct {
	ID                                         int32
	Name, TaxID, Email, Segment, City, Country []byte
	Owners                                     []CustomerListOwner
	CPQIDs                                     []int32
	UpdatedAt                                  time.Time
}

// CustomerListOwner is an owner of a CustomerListItem.
type CustomerListOwner struct {
	OwnerID     int64
	Name, Email []byte
}

// ListItemOf is the list item of a whole customer document (for a customer the
// user just changed). Its byte slices are copies: the item outlives no buffer.
func ListItemOf(c *Customer) *CustomerListItem {
	it := &CustomerListItem{
		ID: c.ID, Name: []byte(c.Name), TaxID: []byte(c.TaxID), Email: []byte(c.Email), Segment: []byte(c.Segment),
		City: []byte(c.Address.City), Country: []byte(c.Address.Country), CPQIDs: c.CPQIDs, UpdatedAt: c.UpdatedAt,
	}
	for _, o := range c.Owners {
		it.Owners = append(it.Owners, CustomerListOwner{OwnerID: o.OwnerID, Name: []byte(o.Name), Email: []byte(o.Email)})
	}
	return it
}

// listReadBuffer is the decoder's read buffer: large enough that the reads from the
// connection are few, small enough to stay in the CPU's cache.
const listReadBuffer = 64 << 10

// ListItems is ListEach decoding only the fields of a CustomerListItem: a
// streaming scanner reads the array as it arrives, copies the few fields the
// list keeps and skips (while checking) everything else, allocating nothing
// per customer. About a fifth of each document is kept; encoding/json would
// build all of it (docs/performance.md).
//
// It accepts the documents encoding/json accepts, with the same answer for
// the fields it reads (names matched ignoring ASCII case, null leaves a field
// empty, a wrong type or a malformed text is ErrMalformedResponse); a field it
// does not read is only checked to be valid JSON, not of its type.
func (s *CustomersService) ListItems(ctx context.Context, etag string, fn func(*CustomerListItem) error) (newETag string, notModified bool, err error) {
	resp, req, newETag, err := s.openList(ctx, etag)
	if resp == nil || err != nil {
		return newETag, err == nil, err
	}
	defer closeBody(resp.Body)
	lr := &limitedReader{r: resp.Body, remaining: s.client.maxResponseBytes}
	dec := &listDecoder{sc: jsonscan.New(lr, listReadBuffer)}
	if err := dec.decodeArray(fn); err != nil {
		var cbErr callbackError
		if errors.As(err, &cbErr) {
			err = cbErr.err
		} else {
			err = lr.wrap(err)
		}
		return "", false, fmt.Errorf("apiclient: %s %s (%s): %w", req.Method, req.URL.EscapedPath(), EndpointCustomerList, err)
	}
	return resp.Header.Get("ETag"), false, nil
}

// span is a field's place in listDecoder.arena.
type span struct{ start, end int }

type ownerSpans struct {
	id          int64
	name, email span
}

// listDecoder decodes the customer list array. The kept fields of the customer
// being read are copied into arena (the scanner's slices do not outlive the
// next token), then handed to the callback as slices of it.
type listDecoder struct {
	sc     *jsonscan.Scanner
	arena  []byte
	item   CustomerListItem
	owners []ownerSpans
	cpqIDs []int32
	fields struct{ name, taxID, email, segment, city, country span }
}

func (d *listDecoder) decodeArray(fn func(*CustomerListItem) error) error {
	c, err := d.sc.Peek()
	if err == io.EOF {
		return io.EOF // an empty body
	}
	if err != nil {
		return err
	}
	if c != '[' {
		return fmt.Errorf("%w: want a JSON array, got %q", ErrMalformedResponse, c)
	}
	if err := d.sc.Enter('['); err != nil {
		return err
	}
	for first := true; ; first = false {
		more, err := d.sc.More(']', first)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		if err := d.decodeCustomer(); err != nil {
			return err
		}
		if err := fn(&d.item); err != nil {
			return callbackError{err}
		}
	}
	if _, err := d.sc.Peek(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("%w: data after the JSON array", ErrMalformedResponse)
		}
		return err
	}
	return nil
}

// keep copies a string value into the arena.
func (d *listDecoder) keep(dst *span) error {
	v, err := d.stringValue()
	if err != nil || v == nil {
		return err
	}
	*dst = span{len(d.arena), len(d.arena) + len(v)}
	d.arena = append(d.arena, v...)
	return nil
}

// stringValue reads a string or null (nil, as encoding/json leaves the field as it was).
func (d *listDecoder) stringValue() ([]byte, error) {
	c, err := d.sc.Peek()
	if err != nil {
		return nil, err
	}
	switch c {
	case '"':
		v, err := d.sc.String()
		if v == nil && err == nil {
			v = []byte{}
		}
		return v, err
	case 'n':
		_, err := d.sc.Null()
		return nil, err
	}
	return nil, d.typeError(c, "a string")
}

// typeError reports a value of the wrong kind (after checking it is valid JSON,
// so a malformed text is reported as such).
func (d *listDecoder) typeError(c byte, want string) error {
	err := d.sc.TypeError(c, want)
	if skipErr := d.sc.Skip(); skipErr != nil {
		return skipErr
	}
	return err
}

// intValue reads an integer of bits bits; null leaves *dst as it is.
func (d *listDecoder) intValue(dst *int64, bits int) error {
	c, err := d.sc.Peek()
	if err != nil {
		return err
	}
	switch {
	case c == 'n':
		_, err := d.sc.Null()
		return err
	case c == '-' || ('0' <= c && c <= '9'):
		n, err := d.sc.Int(bits)
		if err != nil {
			return err
		}
		*dst = n
		return nil
	}
	return d.typeError(c, "a number")
}

// object walks an object (null: nothing), calling member for each key.
func (d *listDecoder) object(member func(key []byte) error) error {
	c, err := d.sc.Peek()
	if err != nil {
		return err
	}
	if c == 'n' {
		_, err := d.sc.Null()
		return err
	}
	if c != '{' {
		return d.typeError(c, "an object")
	}
	if err := d.sc.Enter('{'); err != nil {
		return err
	}
	for first := true; ; first = false {
		more, err := d.sc.More('}', first)
		if err != nil || !more {
			return err
		}
		key, err := d.sc.Key()
		if err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
	}
}

// array walks an array (null: nothing), calling elem for each element.
func (d *listDecoder) array(elem func() error) error {
	c, err := d.sc.Peek()
	if err != nil {
		return err
	}
	if c == 'n' {
		_, err := d.sc.Null()
		return err
	}
	if c != '[' {
		return d.typeError(c, "an array")
	}
	if err := d.sc.Enter('['); err != nil {
		return err
	}
	for first := true; ; first = false {
		more, err := d.sc.More(']', first)
		if err != nil || !more {
			return err
		}
		if err := elem(); err != nil {
			return err
		}
	}
}

// is matches a JSON key against a field name ignoring ASCII case, as
// encoding/json matches (it also folds a few non-ASCII letters, such as the
// Kelvin sign for k, which no v2 field name needs).
func is(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range len(key) {
		a, b := key[i], name[i]
		if a == b {
			continue
		}
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// decodeCustomer reads one element of the array into d.item.
func (d *listDecoder) decodeCustomer() error {
	d.arena = d.arena[:0]
	d.owners = d.owners[:0]
	d.cpqIDs = d.cpqIDs[:0]
	d.fields = struct{ name, taxID, email, segment, city, country span }{}
	var id int64
	var updatedAt time.Time
	f := &d.fields
	err := d.object(func(key []byte) error {
		switch {
		case is(key, "id"):
			return d.intValue(&id, 32)
		case is(key, "name"):
			return d.keep(&f.name)
		case is(key, "taxId"):
			return d.keep(&f.taxID)
		case is(key, "email"):
			return d.keep(&f.email)
		case is(key, "segment"):
			return d.keep(&f.segment)
		case is(key, "address"):
			return d.object(func(key []byte) error {
				switch {
				case is(key, "city"):
					return d.keep(&f.city)
				case is(key, "country"):
					return d.keep(&f.country)
				case is(key, "street"), is(key, "postalCode"):
					_, err := d.stringValue()
					return err
				}
				return d.sc.Skip()
			})
		case is(key, "owners"):
			// encoding/json decodes a new array into a fresh slice.
			d.owners = d.owners[:0]
			return d.array(func() error {
				var o ownerSpans
				err := d.object(func(key []byte) error {
					switch {
					case is(key, "ownerId"):
						return d.intValue(&o.id, 64)
					case is(key, "name"):
						return d.keep(&o.name)
					case is(key, "email"):
						return d.keep(&o.email)
					}
					return d.sc.Skip()
				})
				d.owners = append(d.owners, o)
				return err
			})
		case is(key, "cpqIds"):
			d.cpqIDs = d.cpqIDs[:0]
			return d.array(func() error {
				var n int64
				err := d.intValue(&n, 32)
				d.cpqIDs = append(d.cpqIDs, int32(n))
				return err
			})
		case is(key, "updatedAt"):
			v, err := d.stringValue()
			if err != nil || v == nil {
				return err
			}
			if err := updatedAt.UnmarshalText(v); err != nil {
				return fmt.Errorf("%w: updatedAt: %w", jsonscan.ErrType, err)
			}
			return nil
		}
		return d.sc.Skip()
	})
	if err != nil {
		return err
	}
	it := &d.item
	str := func(s span) []byte { return d.arena[s.start:s.end:s.end] }
	*it = CustomerListItem{
		ID: int32(id), Name: str(f.name), TaxID: str(f.taxID), Email: str(f.email), Segment: str(f.segment),
		City: str(f.city), Country: str(f.country), Owners: it.Owners[:0], CPQIDs: d.cpqIDs, UpdatedAt: updatedAt,
	}
	if len(d.cpqIDs) == 0 {
		it.CPQIDs = nil
	}
	for _, o := range d.owners {
		it.Owners = append(it.Owners, CustomerListOwner{OwnerID: o.id, Name: str(o.name), Email: str(o.email)})
	}
	return nil
}
