package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/lease"
	"github.com/cpqportal/portal/internal/offer"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/workindex"
)

// The scheduled scans (table inbox_schedule).
const (
	ScanReminders = "reminders"
	ScanDigest    = "digest"
	ScanRetention = "retention"
)

// Defaults of ReminderOptions.
const (
	DefaultEvery         = time.Hour
	DefaultDigestEvery   = 24 * time.Hour
	DefaultSignatureDays = 14
	DefaultArchiveDays   = 7
	DefaultOfferDays     = 5
	// scanLease is how long a replica holds a scan unless it renews it (every third of it while
	// the scan runs): one that vanished mid-scan leaves it to another after this (which runs it
	// again; its items are deduplicated).
	scanLease = 5 * time.Minute
)

// ReminderOptions configure the reminders.
type ReminderOptions struct {
	Store *Store
	// Work is the work index (the contracts waiting for a signature or the archive); nil: none.
	Work *workindex.Index
	// Mail is the outbox (the offers sent by e-mail, whose valid-until the portal knows); nil: none.
	Mail *outbox.Outbox
	// Every is how often the reminders are looked for; DigestEvery how often the digest goes.
	Every, DigestEvery time.Duration
	// SignatureDays: a contract out for signature this many days reminds its person; ArchiveDays:
	// a signed contract not archived this many days reminds the back office (BackofficeRoles);
	// OfferDays: an offer sent by e-mail reminds its sender this many days before its valid-until.
	// Negative: that reminder is off.
	SignatureDays, ArchiveDays, OfferDays int
	BackofficeRoles                       []string
	// ReadRetention: items read and older than this are deleted; UnreadRetention: unread ones
	// older than this (Store.Purge, run as the scan ScanRetention every Every). 0 keeps them.
	ReadRetention, UnreadRetention time.Duration
	Logger                         *slog.Logger
	// Now is the clock of the days counted (time.Now when nil); leases use the database's.
	Now func() time.Time
}

// Reminders runs the scheduled scans: one run at a time across replicas, by a lease in the state
// database; a run's schedule moves on only when it completed.
type Reminders struct {
	opts   ReminderOptions
	db     *statedb.DB
	holder string
	loop   lease.Loop
}

// NewReminders returns the scans of opts.
func NewReminders(opts ReminderOptions) *Reminders {
	if opts.Every <= 0 {
		opts.Every = DefaultEvery
	}
	if opts.DigestEvery <= 0 {
		opts.DigestEvery = DefaultDigestEvery
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Reminders{opts: opts, db: opts.Store.db, holder: statedb.NewID()}
}

// Run starts the scans (Close stops them).
func (r *Reminders) Run() {
	r.loop.Start(min(r.opts.Every, r.opts.DigestEvery, 30*time.Second), func(ctx context.Context) {
		for _, name := range r.scans() {
			if _, err := r.RunDue(ctx, name); err != nil && ctx.Err() == nil {
				r.opts.Logger.Warn("inbox: a scheduled scan failed; it runs again", slog.String("scan", name), slog.Any("err", err))
			}
		}
	})
}

// scans are the scheduled scans this replica runs.
func (r *Reminders) scans() []string {
	if r.opts.ReadRetention > 0 || r.opts.UnreadRetention > 0 {
		return []string{ScanReminders, ScanDigest, ScanRetention}
	}
	return []string{ScanReminders, ScanDigest}
}

// before is the creation time before which a retention deletes items (zero: keep them).
func (r *Reminders) before(retention time.Duration) time.Time {
	if retention <= 0 {
		return time.Time{}
	}
	return r.opts.Now().Add(-retention)
}

// Close stops the scans after the one in flight.
func (r *Reminders) Close() { r.loop.Close() }

// scheduleColumns are inbox_schedule's lease columns (its row per scan is its lease's).
var scheduleColumns = lease.Columns{Table: "inbox_schedule", Key: "name", Holder: "holder", Until: "lease_expires",
	NextRun: "next_run", LastRun: "last_run", Runs: "runs"}

// RunDue runs the scan name when it is due and no other replica holds it; ran tells whether it did.
// A run that failed is not moved on: the next tick (here or elsewhere) runs it again.
func (r *Reminders) RunDue(ctx context.Context, name string) (ran bool, err error) {
	every := r.opts.Every
	if name == ScanDigest {
		every = r.opts.DigestEvery
	}
	scan := lease.New(r.db, lease.Options{Columns: scheduleColumns, Key: name, Holder: r.holder, Term: scanLease, Every: every})
	var n int // items added, or deleted by the retention
	ran, err = scan.Do(ctx, func(ctx context.Context) error {
		var err error
		switch name {
		case ScanDigest:
			n, err = r.opts.Store.Digest(ctx)
		case ScanRetention:
			var purged int64
			purged, err = r.opts.Store.Purge(ctx, r.before(r.opts.ReadRetention), r.before(r.opts.UnreadRetention))
			n = int(purged)
		default:
			n, err = r.Scan(ctx)
		}
		return err
	})
	if err != nil {
		return ran, fmt.Errorf("inbox: scan %s: %w", name, err)
	}
	if !ran {
		return false, nil
	}
	count := "created" // the e2e tests read "created=0" of a reminder scan
	if name == ScanRetention {
		count = "deleted"
	}
	r.opts.Logger.Info("inbox: scheduled scan ran", slog.String("scan", name), slog.Int(count, n))
	return true, nil
}

// Runs is how many times the scan name completed (across replicas).
func (r *Reminders) Runs(ctx context.Context, name string) (int64, error) {
	var n int64
	err := r.db.SQL.QueryRowContext(ctx, `SELECT runs FROM inbox_schedule WHERE name = $1`, name).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// Scan delivers every reminder due now (items already delivered are not delivered again) and
// returns how many items it added.
func (r *Reminders) Scan(ctx context.Context) (int, error) {
	s := r.opts.Store
	now := r.opts.Now()
	added := 0
	deliver := func(it Item) error {
		before, err := s.exists(ctx, it)
		if err != nil || before {
			return err
		}
		ok, err := s.deliver(ctx, it)
		if ok {
			added++
		}
		return err
	}
	if r.opts.Work != nil && r.opts.SignatureDays >= 0 {
		err := r.opts.Work.WaitingSince(ctx, workindex.KindContract, workindex.StageSignature, now.AddDate(0, 0, -r.opts.SignatureDays),
			func(w workindex.Waiting) error {
				for _, person := range distinct(w.CreatedBy, w.ChangedBy) {
					if err := deliver(waitingItem(person, KindSignatureWaiting, w, now)); err != nil {
						return err
					}
				}
				return nil
			})
		if err != nil {
			return added, err
		}
	}
	if r.opts.Work != nil && r.opts.ArchiveDays >= 0 && len(r.opts.BackofficeRoles) > 0 {
		backoffice, err := s.withRoles(ctx, r.opts.BackofficeRoles)
		if err != nil {
			return added, err
		}
		if len(backoffice) > 0 {
			err = r.opts.Work.WaitingSince(ctx, workindex.KindContract, workindex.StageSigned, now.AddDate(0, 0, -r.opts.ArchiveDays),
				func(w workindex.Waiting) error {
					for _, person := range backoffice {
						if err := deliver(waitingItem(person, KindArchiveWaiting, w, now)); err != nil {
							return err
						}
					}
					return nil
				})
			if err != nil {
				return added, err
			}
		}
	}
	if r.opts.Mail != nil && r.opts.OfferDays >= 0 && r.opts.OfferDays <= offer.ValidDays {
		// Offers whose valid-until (sent + ValidDays) is within OfferDays from now and not past.
		from := now.AddDate(0, 0, -offer.ValidDays)
		to := now.AddDate(0, 0, r.opts.OfferDays-offer.ValidDays)
		offers, err := r.opts.Mail.SentBetween(ctx, "quote:", from, to.Add(time.Microsecond))
		if err != nil {
			return added, err
		}
		for _, o := range offers {
			it, ok := r.offerItem(ctx, o, now)
			if !ok {
				continue
			}
			if err := deliver(it); err != nil {
				return added, err
			}
		}
	}
	return added, nil
}

// exists tells whether it was delivered before (a rescan then writes nothing at all).
func (s *Store) exists(ctx context.Context, it Item) (bool, error) {
	if it.Person == "" {
		it.Person = PersonKey(it.Subject)
	}
	var one int
	err := s.db.SQL.QueryRowContext(ctx, `SELECT 1 FROM inbox_items WHERE person = $1 AND dedupe = $2`, it.Person, it.Dedupe).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("inbox: %w", err)
	}
	return true, nil
}

func distinct(keys ...string) []string {
	var out []string
	for _, k := range keys {
		if k != "" && (len(out) == 0 || out[0] != k) {
			out = append(out, k)
		}
	}
	return out
}

// waitingItem reminds person of contract w waiting in its stage; one reminder per stay in the
// stage (a new signature request reminds again).
func waitingItem(person string, kind Kind, w workindex.Waiting, now time.Time) Item {
	days := int(now.Sub(w.StageSince) / (24 * time.Hour))
	id := strconv.FormatInt(int64(w.ContractID), 10)
	number := w.ContractNumber
	if number == "" {
		number = id
	}
	return Item{
		Person: person,
		Dedupe: string(kind) + ":" + id + ":" + strconv.FormatInt(w.StageSince.UnixMicro(), 10),
		Kind:   kind,
		Params: map[string]string{ParamNumber: number, ParamCustomer: w.Customer, ParamDays: strconv.Itoa(days)},
		Link:   "/contracts/" + id,
		// Only to a person who read it and was not refused it since (a handover took it away).
		RowKind: workindex.KindContract,
		RowID:   w.ID,
	}
}

// offerItem reminds the sender of offer o that it expires soon; one reminder per offer sent.
func (r *Reminders) offerItem(ctx context.Context, o outbox.Offer, now time.Time) (Item, bool) {
	idText, ok := strings.CutPrefix(o.Topic, "quote:")
	quoteID, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil || o.Owner == "" {
		return Item{}, false
	}
	until := offer.ValidUntil(o.SentAt)
	days := max(int(until.Sub(now)/(24*time.Hour)), 0)
	link := "/palette/quotes/" + idText
	customer := ""
	if r.opts.Work != nil {
		if row, ok := r.opts.Work.Peek(ctx, workindex.KindQuote, quoteID); ok {
			customer = row.Customer
			if row.CPQID != 0 && row.CustomerID != 0 {
				link = fmt.Sprintf("/quotes/%d/%d/%d", row.CPQID, row.CustomerID, quoteID)
			}
		}
	}
	return Item{
		Subject: o.Owner,
		Dedupe:  "offer_expires:" + idText + ":" + strconv.FormatInt(o.SentAt.UnixMicro(), 10),
		Kind:    KindOfferExpires,
		Params:  map[string]string{ParamQuote: idText, ParamCustomer: customer, ParamDays: strconv.Itoa(days), ParamUntil: until.UTC().Format(time.DateOnly)},
		Link:    link,
		RowKind: workindex.KindQuote,
		RowID:   quoteID,
	}, true
}
