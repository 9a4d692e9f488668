// Package inbox is what the portal tells each person (issue 40, docs/inbox.md): an item per event
// (a signer signed or declined, an offer about to expire, a signature or an archive that waited,
// a job of theirs that ended), read and unread, each linking to its page; an unread count the
// header polls; and each person's preference: in the portal only, by e-mail too (one mail per
// item, through internal/outbox), or a daily digest.
//
// Producers call (*Store).Deliver with an Item; an item's Dedupe key makes an event one item
// however often it is reported (a reminder scan run again after a crash, a job's end reported
// twice). Deliver writes the item, the person's unread count and, when they chose e-mail, the
// item's mail in one transaction: a mail is written once per item, and the outbox sends it at
// most once (docs/mail.md).
//
// Storage: tables inbox_items, inbox_unread, inbox_people and inbox_schedule of the state
// database (migration 00019). The header's count is one primary-key read (inbox_unread), kept in
// the transactions that add an item or mark one read.
package inbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/workindex"
)

// Kind is what an item reports; each has its text in the catalogue (Text).
type Kind string

// The kinds of items and the parameters each carries (Item.Params; all strings).
const (
	// KindSigned: a signer signed a contract. Params: ParamNumber, ParamCustomer, ParamAt.
	KindSigned Kind = "signed"
	// KindDeclined: a signer declined. Params: ParamNumber, ParamCustomer, ParamReason, ParamAt.
	KindDeclined Kind = "declined"
	// KindOfferExpires: an offer sent by e-mail expires soon. Params: ParamQuote, ParamCustomer,
	// ParamDays (days left), ParamUntil (the valid-until day, RFC 3339 date).
	KindOfferExpires Kind = "offer_expires"
	// KindSignatureWaiting: a contract has waited for its signature. Params: ParamNumber,
	// ParamCustomer, ParamDays.
	KindSignatureWaiting Kind = "signature_waiting"
	// KindArchiveWaiting: a signed contract has waited for the archive (back office). Params:
	// ParamNumber, ParamCustomer, ParamDays.
	KindArchiveWaiting Kind = "archive_waiting"
	// The jobs of a person that ended (internal/jobs): finished without a failed line, or ended
	// with failed lines or stopped. Params: ParamDone, ParamFailed.
	KindArchiveFinished  Kind = "archive_finished"
	KindArchiveFailed    Kind = "archive_failed"
	KindHandoverFinished Kind = "handover_finished"
	KindHandoverFailed   Kind = "handover_failed"
	KindImportFinished   Kind = "import_finished"
	KindImportFailed     Kind = "import_failed"
	// KindHandoverReceived: a handover someone ran made you the owner of customers. Params: ParamBy
	// (who ran it), ParamDone (how many customers).
	KindHandoverReceived Kind = "handover_received"
	// KindMailBounced: an offer sent by e-mail bounced (the recipient's server reported it could
	// not be delivered). Params: ParamQuote, ParamCustomer, ParamRecipient, ParamReason (the
	// status and the server's words).
	KindMailBounced Kind = "mail_bounced"
)

// The parameters' names.
const (
	ParamNumber   = "number"
	ParamCustomer = "customer"
	ParamReason   = "reason"
	ParamAt       = "at"
	ParamQuote    = "quote"
	ParamDays     = "days"
	ParamUntil    = "until"
	ParamDone     = "done"
	ParamFailed   = "failed"
	ParamBy       = "by"
	// ParamRecipient is an e-mail address a mail went to.
	ParamRecipient = "recipient"
)

// texts are each kind's catalogue key and the parameters its message takes, in order.
var texts = map[Kind]struct {
	key    string
	params []string
}{
	KindSigned:           {"inbox.item.signed", []string{ParamNumber, ParamCustomer}},
	KindDeclined:         {"inbox.item.declined", []string{ParamNumber, ParamCustomer, ParamReason}},
	KindOfferExpires:     {"inbox.item.offer_expires", []string{ParamQuote, ParamCustomer, ParamDays}},
	KindSignatureWaiting: {"inbox.item.signature_waiting", []string{ParamNumber, ParamCustomer, ParamDays}},
	KindArchiveWaiting:   {"inbox.item.archive_waiting", []string{ParamNumber, ParamCustomer, ParamDays}},
	KindArchiveFinished:  {"inbox.item.archive_finished", []string{ParamDone, ParamFailed}},
	KindArchiveFailed:    {"inbox.item.archive_failed", []string{ParamDone, ParamFailed}},
	KindHandoverFinished: {"inbox.item.handover_finished", []string{ParamDone, ParamFailed}},
	KindHandoverFailed:   {"inbox.item.handover_failed", []string{ParamDone, ParamFailed}},
	KindImportFinished:   {"inbox.item.import_finished", []string{ParamDone, ParamFailed}},
	KindImportFailed:     {"inbox.item.import_failed", []string{ParamDone, ParamFailed}},
	KindHandoverReceived: {"inbox.item.handover_received", []string{ParamBy, ParamDone}},
	KindMailBounced:      {"inbox.item.mail_bounced", []string{ParamQuote, ParamCustomer, ParamRecipient, ParamReason}},
}

// Delivery is a person's preference.
type Delivery string

// The preferences.
const (
	DeliverPortal Delivery = "portal" // in the portal only (the default)
	DeliverEmail  Delivery = "email"  // in the portal, and one e-mail per item
	DeliverDigest Delivery = "digest" // in the portal, and one e-mail a day listing the new items
)

// ParseDelivery is the preference named s, or false.
func ParseDelivery(s string) (Delivery, bool) {
	switch d := Delivery(s); d {
	case DeliverPortal, DeliverEmail, DeliverDigest:
		return d, true
	}
	return "", false
}

// Item is one thing the portal tells one person.
type Item struct {
	ID string
	// Person is the recipient's key (PersonKey of their subject, as the work index stores people).
	// A producer that knows the subject sets Subject instead and Deliver keys it.
	Person  string
	Subject string
	// Dedupe names the event: a second Deliver with the same person and Dedupe writes nothing.
	Dedupe string
	Kind   Kind
	Params map[string]string
	// Link is the item's page: a path of the portal ("/contracts/42").
	Link      string
	CreatedAt time.Time
	// ReadAt is when the person opened it or marked it read (zero: unread).
	ReadAt time.Time
	// RowKind and RowID name the work-index row the item tells about (a contract, a quote), when
	// it names one: the item is then delivered only to a person who has a read of that row and
	// whom the v2 API has not refused it since (workindex.MayTell). Not stored.
	RowKind workindex.Kind
	RowID   int64
}

// Unread reports whether the person has not read it.
func (it Item) Unread() bool { return it.ReadAt.IsZero() }

// PersonKey is the stored form of a subject (workindex.PersonKey).
func PersonKey(subject string) string { return workindex.PersonKey(subject) }

// Text is the item's words in tr's language.
func Text(tr *i18n.Translator, it Item) string {
	t, ok := texts[it.Kind]
	if !ok {
		return string(it.Kind)
	}
	args := make([]any, len(t.params))
	for i, p := range t.params {
		v := it.Params[p]
		if p == ParamReason && v == "" {
			v = tr.T("inbox.item.no_reason")
		}
		args[i] = v
	}
	return tr.T(t.key, args...)
}

// Options configure a Store.
type Options struct {
	DB *statedb.DB
	// Mail is the outbox (nil or disabled: nobody is mailed; the preference still shows).
	Mail *outbox.Outbox
	// I18n writes the mails in each person's language; PublicURL is the portal's address the
	// mails link to; Domain the Message-ID's domain.
	I18n      *i18n.Bundle
	PublicURL string
	Domain    string
	Logger    *slog.Logger
	// OnDeliver, when set, is called with the person's key after an item was added (it must not
	// block).
	OnDeliver func(person string)
	// NewOwner, when set, names whom an ended job gave customers to (handover.NewOwner: the new
	// owner's e-mail address as the v2 API names them, and how many customers): the person who
	// signs in with that verified address is told (JobEnded).
	NewOwner func(j *jobs.Job) (email string, customers int)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Store keeps the inboxes.
type Store struct {
	opts Options
	db   *statedb.DB

	mu         sync.Mutex
	remembered map[string]remembered // Remember's writes, so a person is written once a while
}

type remembered struct {
	fingerprint string
	at          time.Time
}

// New returns the store in opts.DB.
func New(opts Options) *Store {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Domain == "" {
		opts.Domain = "portal.invalid"
	}
	return &Store{opts: opts, db: opts.DB, remembered: map[string]remembered{}}
}

// ErrNotFound: no item of this id in the person's inbox.
var ErrNotFound = errors.New("inbox: no such item")

// validLink: a path of the portal, never another site ("//host", "https:").
func validLink(link string) bool {
	return link == "" || (strings.HasPrefix(link, "/") && !strings.HasPrefix(link, "//") && !strings.ContainsAny(link, "\\\r\n"))
}

// Deliver adds it to its person's inbox unless an item with its Dedupe is there already (then it
// does nothing and returns nil). With the person's preference "email" its mail is written in the
// same transaction; with "digest" it waits for the digest.
func (s *Store) Deliver(ctx context.Context, it Item) error {
	_, err := s.deliver(ctx, it)
	return err
}

// deliver is Deliver that tells whether it added the item (false: delivered before, or the
// person may not read the row it names).
func (s *Store) deliver(ctx context.Context, it Item) (bool, error) {
	if it.Person == "" {
		it.Person = PersonKey(it.Subject)
	}
	switch {
	case it.Person == "":
		return false, errors.New("inbox: an item needs its person")
	case it.Dedupe == "":
		return false, errors.New("inbox: an item needs its dedupe key")
	case !validLink(it.Link):
		return false, fmt.Errorf("inbox: %q is not a path of the portal", it.Link)
	}
	if _, ok := texts[it.Kind]; !ok {
		return false, fmt.Errorf("inbox: unknown kind %q", it.Kind)
	}
	params, err := json.Marshal(it.Params)
	if err != nil {
		return false, fmt.Errorf("inbox: %w", err)
	}
	if it.CreatedAt.IsZero() {
		it.CreatedAt = s.opts.Now()
	}
	it.ID = statedb.NewID()
	var added, mailed bool
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if it.RowKind != "" {
			// In the item's transaction: a refusal recorded before it commits is seen.
			ok, err := workindex.MayTell(ctx, tx, it.Person, it.RowKind, it.RowID)
			if err != nil || !ok {
				return err
			}
		}
		p, err := readPerson(ctx, tx, it.Person)
		if err != nil {
			return err
		}
		mail := ""
		switch {
		case p.Delivery == DeliverEmail && p.Email != "" && s.opts.Mail.Enabled():
			mail = "queued"
		case p.Delivery == DeliverDigest && p.Email != "" && s.opts.Mail.Enabled():
			mail = "digest"
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO inbox_items (id, person, dedupe, kind, params, link, created_at, mail)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (person, dedupe) DO NOTHING`,
			it.ID, it.Person, it.Dedupe, string(it.Kind), string(params), it.Link, statedb.Micros(it.CreatedAt), mail)
		if err != nil {
			return fmt.Errorf("inbox: add an item: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // delivered before
		}
		added = true
		if _, err := tx.ExecContext(ctx, `INSERT INTO inbox_unread (person, n) VALUES ($1, 1)
			ON CONFLICT (person) DO UPDATE SET n = inbox_unread.n + 1`, it.Person); err != nil {
			return fmt.Errorf("inbox: count an item: %w", err)
		}
		if mail == "queued" {
			mailed = true
			return s.enqueueItem(ctx, tx, p, it)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if mailed {
		s.opts.Mail.Wake()
	}
	if added && s.opts.OnDeliver != nil {
		s.opts.OnDeliver(it.Person)
	}
	return added, nil
}

// Unread is the person's unread count: one primary-key read.
func (s *Store) Unread(ctx context.Context, person string) (int, error) {
	var n int
	err := s.db.SQL.QueryRowContext(ctx, `SELECT n FROM inbox_unread WHERE person = $1`, person).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("inbox: count: %w", err)
	}
	return max(n, 0), nil
}

// List is the person's newest items, at most limit.
func (s *Store) List(ctx context.Context, person string, limit int) ([]Item, error) {
	rows, err := s.db.SQL.QueryContext(ctx, `SELECT id, person, dedupe, kind, params, link, created_at, read_at FROM inbox_items
		WHERE person = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, person, limit)
	if err != nil {
		return nil, fmt.Errorf("inbox: list: %w", err)
	}
	defer rows.Close()
	var out []Item
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

func scanItem(sc interface{ Scan(...any) error }) (Item, error) {
	var it Item
	var kind, params string
	var created, read int64
	if err := sc.Scan(&it.ID, &it.Person, &it.Dedupe, &kind, &params, &it.Link, &created, &read); err != nil {
		return Item{}, fmt.Errorf("inbox: read an item: %w", err)
	}
	it.Kind = Kind(kind)
	_ = json.Unmarshal([]byte(params), &it.Params) // written by Deliver: a map of strings
	it.CreatedAt, it.ReadAt = statedb.Time(created), statedb.Time(read)
	return it, nil
}

// MarkRead marks the person's item read (nothing when it was) and returns it (ErrNotFound for
// anyone else's).
func (s *Store) MarkRead(ctx context.Context, person, id string) (Item, error) {
	var it Item
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		it, err = scanItem(tx.QueryRowContext(ctx, `SELECT id, person, dedupe, kind, params, link, created_at, read_at
			FROM inbox_items WHERE id = $1 AND person = $2`, id, person))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE inbox_items SET read_at = $1 WHERE id = $2 AND person = $3 AND read_at = 0`,
			statedb.Micros(s.opts.Now()), id, person)
		if err != nil {
			return fmt.Errorf("inbox: mark read: %w", err)
		}
		n, _ := res.RowsAffected()
		return s.uncount(ctx, tx, person, n)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Item{}, ErrNotFound
	}
	return it, err
}

// MarkAllRead marks every item of the person read.
func (s *Store) MarkAllRead(ctx context.Context, person string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE inbox_items SET read_at = $1 WHERE person = $2 AND read_at = 0`,
			statedb.Micros(s.opts.Now()), person)
		if err != nil {
			return fmt.Errorf("inbox: mark all read: %w", err)
		}
		n, _ := res.RowsAffected()
		return s.uncount(ctx, tx, person, n)
	})
}

// uncount takes n read items off the person's count.
func (s *Store) uncount(ctx context.Context, tx *sql.Tx, person string, n int64) error {
	if n == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE inbox_unread SET n = CASE WHEN n > $2 THEN n - $2 ELSE 0 END WHERE person = $1`, person, n); err != nil {
		return fmt.Errorf("inbox: count: %w", err)
	}
	return nil
}
