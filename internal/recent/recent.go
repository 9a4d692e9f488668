// Package recent keeps each user's recent quotes and contracts: the last 50 they opened or
// changed, with the customer, the total and when, most recent first. The list lives in the
// portal's store (internal/store: the bbolt file by default, Redis with several replicas), keyed
// by the user's subject, so it outlives a sign-out and a restart. It holds only what the pages
// show (no tokens, no v2 documents).
package recent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/cpqportal/portal/internal/store"
)

// Kind says what an item is.
type Kind string

// The kinds of recent items.
const (
	KindQuote    Kind = "quote"
	KindContract Kind = "contract"
)

// Limit is how many items a user keeps (per kind).
const Limit = 50

// keep is how long a list lives after its last change (a user gone for a quarter starts anew).
const keep = 90 * 24 * time.Hour

// Item is one quote or contract the user opened or changed.
type Item struct {
	Kind Kind `json:"kind"`
	// ID is the quote id or the contract id.
	ID int64 `json:"id"`
	// Number is the contract number (contracts only).
	Number string `json:"number,omitempty"`
	// QuoteID is the quote (for a contract: the quote it was generated from).
	QuoteID int64 `json:"quoteId"`
	// CPQID and CustomerID complete a quote's address.
	CPQID      int32 `json:"cpqId"`
	CustomerID int32 `json:"customerId"`
	// Customer is the customer's name when it was known.
	Customer string `json:"customer,omitempty"`
	// Total is the total as shown to people ("€1,234.00 one-off, €56.00 monthly"), in English:
	// the list shows Totals in the reader's language when the item has them.
	Total string `json:"total,omitempty"`
	// Totals are the amounts of Total (items recorded before they were kept have none).
	Totals *Totals `json:"totals,omitempty"`
	// Status is the contract's or quote's status when last seen.
	Status string `json:"status,omitempty"`
	// At is when the user last opened or changed it.
	At time.Time `json:"at"`
}

// Totals are a quote's or contract's net totals in cents.
type Totals struct {
	OneOffCents  int64 `json:"oneOff"`
	MonthlyCents int64 `json:"monthly"`
}

// list is what is stored per user.
type list struct {
	Items []Item `json:"items"`
}

// Recent records and lists recent items.
type Recent struct {
	store store.Store
	now   func() time.Time
}

// New returns the recent items kept in st; now is the clock (time.Now when nil).
func New(st store.Store, now func() time.Time) *Recent {
	if now == nil {
		now = time.Now
	}
	return &Recent{store: st, now: now}
}

// key is the store key of a user's list: a hash of the subject, so any subject is a safe key.
func key(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return "recent/" + hex.EncodeToString(sum[:16])
}

// Touch puts item at the top of the user's list (replacing the same quote or contract), keeping
// the newest Limit items of its kind. Fields left empty in item keep what was known before.
func (r *Recent) Touch(ctx context.Context, subject string, item Item) error {
	if subject == "" {
		return fmt.Errorf("recent: no user")
	}
	item.At = r.now().UTC()
	err := r.store.Update(ctx, key(subject), keep, func(old []byte) ([]byte, error) {
		var l list
		if old != nil {
			if err := json.Unmarshal(old, &l); err != nil {
				l = list{} // a damaged list starts anew rather than blocking the user
			}
		}
		if i := slices.IndexFunc(l.Items, func(it Item) bool { return it.Kind == item.Kind && it.ID == item.ID }); i >= 0 {
			item = merge(l.Items[i], item)
			l.Items = slices.Delete(l.Items, i, i+1)
		}
		l.Items = slices.Insert(l.Items, 0, item)
		count := 0
		l.Items = slices.DeleteFunc(l.Items, func(it Item) bool {
			if it.Kind != item.Kind {
				return false
			}
			count++
			return count > Limit
		})
		return json.Marshal(l)
	})
	if err != nil {
		return fmt.Errorf("recent: touch %s %d: %w", item.Kind, item.ID, err)
	}
	return nil
}

// merge keeps what was known of an item when the new sighting leaves a field empty.
func merge(old, item Item) Item {
	if item.Number == "" {
		item.Number = old.Number
	}
	if item.Customer == "" {
		item.Customer = old.Customer
	}
	if item.Total == "" {
		item.Total = old.Total
	}
	if item.Status == "" {
		item.Status = old.Status
	}
	if item.QuoteID == 0 {
		item.QuoteID = old.QuoteID
	}
	if item.CPQID == 0 {
		item.CPQID = old.CPQID
	}
	if item.CustomerID == 0 {
		item.CustomerID = old.CustomerID
	}
	return item
}

// List returns the user's items of kind (all kinds when kind is ""), most recent first.
func (r *Recent) List(ctx context.Context, subject string, kind Kind) ([]Item, error) {
	raw, err := r.store.Get(ctx, key(subject))
	if err == store.ErrNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recent: list: %w", err)
	}
	var l list
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, nil
	}
	if kind == "" {
		return l.Items, nil
	}
	return slices.DeleteFunc(l.Items, func(it Item) bool { return it.Kind != kind }), nil
}
