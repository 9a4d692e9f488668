// Package recent keeps each user's recent quotes and contracts: the last 50 of each kind they
// opened or changed, with the customer, the total and when, most recent first. The items are rows
// of the state database (internal/statedb, table recent_items, migration 00004), keyed by a hash
// of the user's subject, so they outlive a sign-out, a restart and the replica that wrote them.
// A touch is one transaction: the item's upsert and the deletion of what falls past the newest
// Limit. An item not opened for 90 days leaves the list. It holds only what the pages show (no
// tokens, no v2 documents).
package recent

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
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

// keep is how long an item stays after it was last opened or changed.
const keep = 90 * 24 * time.Hour

// purgeEvery is how often a touch deletes every user's items past keep (each user's own go at
// their every touch).
const purgeEvery = time.Hour

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

// Recent records and lists recent items.
type Recent struct {
	db  *statedb.DB
	now func() time.Time

	mu       sync.Mutex
	purgedAt time.Time
}

// New returns the recent items kept in db; now is the clock (time.Now when nil).
func New(db *statedb.DB, now func() time.Time) *Recent {
	if now == nil {
		now = time.Now
	}
	return &Recent{db: db, now: now}
}

// userKey is a user's key in the table: a hash of the subject, so any subject is a safe key and
// the subject itself is not kept.
func userKey(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return hex.EncodeToString(sum[:16])
}

// Touch puts item at the top of the user's list (replacing the same quote or contract), keeping
// the newest Limit items of its kind. Fields left empty in item keep what was known before
// (Totals excepted: a sighting without them says they are not known).
func (r *Recent) Touch(ctx context.Context, subject string, item Item) error {
	if subject == "" {
		return errors.New("recent: no user")
	}
	now := r.now().UTC()
	user := userKey(subject)
	var totals Totals
	if item.Totals != nil {
		totals = *item.Totals
	}
	hasTotals := 0
	if item.Totals != nil {
		hasTotals = 1
	}
	err := r.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
INSERT INTO recent_items (user_key, kind, item_id, number, quote_id, cpq_id, customer_id, customer, total,
    has_totals, oneoff_cents, monthly_cents, status, at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (user_key, kind, item_id) DO UPDATE SET
    number = CASE WHEN excluded.number <> '' THEN excluded.number ELSE recent_items.number END,
    quote_id = CASE WHEN excluded.quote_id <> 0 THEN excluded.quote_id ELSE recent_items.quote_id END,
    cpq_id = CASE WHEN excluded.cpq_id <> 0 THEN excluded.cpq_id ELSE recent_items.cpq_id END,
    customer_id = CASE WHEN excluded.customer_id <> 0 THEN excluded.customer_id ELSE recent_items.customer_id END,
    customer = CASE WHEN excluded.customer <> '' THEN excluded.customer ELSE recent_items.customer END,
    total = CASE WHEN excluded.total <> '' THEN excluded.total ELSE recent_items.total END,
    has_totals = excluded.has_totals, oneoff_cents = excluded.oneoff_cents, monthly_cents = excluded.monthly_cents,
    status = CASE WHEN excluded.status <> '' THEN excluded.status ELSE recent_items.status END,
    at = excluded.at`,
			user, string(item.Kind), item.ID, item.Number, item.QuoteID, item.CPQID, item.CustomerID, item.Customer,
			item.Total, hasTotals, totals.OneOffCents, totals.MonthlyCents, item.Status, statedb.Micros(now))
		if err != nil {
			return err
		}
		// The newest Limit of the kind stay; the user's items past keep go.
		_, err = tx.ExecContext(ctx, `
DELETE FROM recent_items WHERE user_key = $1 AND kind = $2 AND item_id NOT IN (
    SELECT item_id FROM recent_items WHERE user_key = $1 AND kind = $2 ORDER BY at DESC, item_id DESC LIMIT $3)`,
			user, string(item.Kind), Limit)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM recent_items WHERE user_key = $1 AND at < $2", user, statedb.Micros(now.Add(-keep)))
		return err
	})
	if err != nil {
		return fmt.Errorf("recent: touch %s %d: %w", item.Kind, item.ID, err)
	}
	r.purge(ctx, now)
	return nil
}

// purge deletes every user's items past keep, at most once per purgeEvery (a user who never
// comes back leaves no rows behind). A failure waits for the next time.
func (r *Recent) purge(ctx context.Context, now time.Time) {
	r.mu.Lock()
	due := now.Sub(r.purgedAt) >= purgeEvery
	if due {
		r.purgedAt = now
	}
	r.mu.Unlock()
	if due {
		_, _ = r.db.SQL.ExecContext(ctx, "DELETE FROM recent_items WHERE at < $1", statedb.Micros(now.Add(-keep)))
	}
}

// List returns the user's items of kind (all kinds when kind is ""), most recent first.
func (r *Recent) List(ctx context.Context, subject string, kind Kind) ([]Item, error) {
	query := `SELECT kind, item_id, number, quote_id, cpq_id, customer_id, customer, total, has_totals,
    oneoff_cents, monthly_cents, status, at FROM recent_items WHERE user_key = $1 AND at >= $2`
	args := []any{userKey(subject), statedb.Micros(r.now().Add(-keep))}
	if kind != "" {
		query += " AND kind = $3"
		args = append(args, string(kind))
	}
	rows, err := r.db.SQL.QueryContext(ctx, query+" ORDER BY at DESC, item_id DESC", args...)
	if err != nil {
		return nil, fmt.Errorf("recent: list: %w", err)
	}
	defer rows.Close()
	var items []Item
	for rows.Next() {
		var (
			it        Item
			kind      string
			hasTotals int
			totals    Totals
			at        int64
		)
		if err := rows.Scan(&kind, &it.ID, &it.Number, &it.QuoteID, &it.CPQID, &it.CustomerID, &it.Customer, &it.Total,
			&hasTotals, &totals.OneOffCents, &totals.MonthlyCents, &it.Status, &at); err != nil {
			return nil, fmt.Errorf("recent: list: %w", err)
		}
		it.Kind, it.At = Kind(kind), statedb.Time(at)
		if hasTotals != 0 {
			it.Totals = &totals
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recent: list: %w", err)
	}
	return items, nil
}

// Forget removes an item from the user's list: the v2 API refused them the quote or contract
// (403) or says it is gone (404), so the list never shows it again (issue 38).
func (r *Recent) Forget(ctx context.Context, subject string, kind Kind, id int64) error {
	if _, err := r.db.SQL.ExecContext(ctx, `DELETE FROM recent_items WHERE user_key = $1 AND kind = $2 AND item_id = $3`,
		userKey(subject), string(kind), id); err != nil {
		return fmt.Errorf("recent: forget %s %d: %w", kind, id, err)
	}
	return nil
}

// ForgetCustomer removes every item of a customer from the user's list: the v2 API refused them
// the customer, and with it its quotes and contracts.
func (r *Recent) ForgetCustomer(ctx context.Context, subject string, customerID int32) error {
	if _, err := r.db.SQL.ExecContext(ctx, `DELETE FROM recent_items WHERE user_key = $1 AND customer_id = $2`,
		userKey(subject), customerID); err != nil {
		return fmt.Errorf("recent: forget customer %d: %w", customerID, err)
	}
	return nil
}
