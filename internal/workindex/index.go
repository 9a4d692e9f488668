package workindex

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/textfold"
)

// Kind says whether a row is a quote or a contract.
type Kind string

// The kinds of rows.
const (
	KindQuote    Kind = "quote"
	KindContract Kind = "contract"
)

// ErrUnavailable is returned by List when the database cannot be read: the lists say "lists
// unavailable right now", every other action goes on.
var ErrUnavailable = errors.New("workindex: lists unavailable")

// seenWriteEvery: opening a row the viewer already owns writes again only after this long (so
// reading a page twice costs no write).
const seenWriteEvery = time.Minute

// Options tune the index; zero values take the defaults.
type Options struct {
	// WriteTimeout bounds each write, so a slow database never holds an action up (default 2 s).
	WriteTimeout time.Duration
	// Retention: rows not seen for this long leave the index (Purge); 0 keeps every row.
	Retention time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// OnAnswer, when set, is told of every contract a sighting took out of "out for signature"
	// (a signer's answer, an expiry, a removal, an archive: Change.Answered), once, after the
	// sighting's transaction committed, whoever read it (a page, a list's re-read, the signature
	// watcher): the inboxes of who created and who sent it (cmd/portal). It must not block for long.
	OnAnswer func(ctx context.Context, s ContractSighting, ch Change)
}

// Viewer is the person a row is recorded for or listed to.
type Viewer struct {
	// Subject is the user's OpenID subject; only a hash of it is stored.
	Subject string
	// Name is the display name recorded as creator or last changer.
	Name string
	// Team: the viewer has a role that lists every row (PORTAL_TEAM_ROLES).
	Team bool
}

// Key is the stored form of the viewer's subject (a hash: any subject is safe and none is kept).
func (v Viewer) Key() string { return PersonKey(v.Subject) }

// PersonKey is the stored form of a subject.
func PersonKey(subject string) string {
	if subject == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(subject))
	return hex.EncodeToString(sum[:12])
}

// Act says what the viewer did when a row was seen.
type Act int

// The acts.
const (
	// ActOpened: the viewer read it (a page, a list refresh): they own the row from now on.
	ActOpened Act = iota
	// ActChanged: the viewer changed it through the portal.
	ActChanged
	// ActCreated: the viewer created it through the portal.
	ActCreated
	// ActRefreshed: a re-read in the background or for a list (a stale row, a batch result): the
	// facts are updated and the reader's token is noted as having read it; owners are not.
	ActRefreshed
	// actFollowed: a quote's row follows the stage of its contract, which the viewer just read:
	// the viewer's record of the quote moves along only when they had the quote's facts before
	// (they now know every fact of it); nobody else's does.
	actFollowed
)

// Row is one quote or contract as last seen. Quotes are keyed by quote id, contracts by contract id.
type Row struct {
	Kind           Kind
	QuoteID        int64
	CPQID          int32
	CustomerID     int32
	Customer       string
	Configurator   string
	ContractID     int32
	ContractNumber string
	Stage          Stage
	// OneOffCents and MonthlyCents are the net totals as last seen.
	OneOffCents  int64
	MonthlyCents int64
	// CreatedBy and ChangedBy are person keys (PersonKey); the names are as they signed in.
	CreatedBy     string
	CreatedByName string
	ChangedBy     string
	ChangedByName string
	// ChangedAt is the last change known (through the portal, or the v2 document's own time).
	ChangedAt time.Time
	// SeenAt is when the portal last read it from the v2 API: the row's "as of".
	SeenAt time.Time
	// SignedAt is when the contract was signed (the v2 signature's signedAt when a document gave
	// it, else when the portal first saw it signed); zero when never seen signed. It stays when the
	// contract is archived: wins and "signed this month" count it (migration 00021). Quotes have none.
	SignedAt time.Time
	// SentAt is when the contract was sent for signature (the v2 request's sentAt, of the signed
	// request when signed, else of the latest; else when the portal first saw it out for
	// signature); zero when never seen sent (migration 00026). With SignedAt it gives the days to
	// signature of the team figures.
	SentAt time.Time
	// DeclineReason is the signer's reason while the contract is declined (DeclineReasonText: at
	// most 200 characters, whitespace collapsed; "" when none or not declined).
	DeclineReason string
	// FactsAt is when the facts above last changed in the index (a read that changed nothing
	// leaves it): a viewer whose own token read the row before it has not seen them.
	FactsAt time.Time
	// ViewerSeenAt is when the viewer's own token last read it (zero: never, or refused since).
	ViewerSeenAt time.Time
}

// Revealed is the visibility rule (docs/work-index.md "Visibility rule") for a row read with the
// viewer's own record (List, Walk, Lookup): their token read it, and nothing in it changed since.
// It is the Go form of the SQL predicate every list, count and sum of the index applies
// (revealedSQL); the v2 API refusing them deletes their record, so a refused row is never revealed.
func (r *Row) Revealed() bool {
	return !r.ViewerSeenAt.IsZero() && !r.ViewerSeenAt.Before(r.FactsAt)
}

// ID is the row's id: the quote id or the contract id.
func (r *Row) ID() int64 {
	if r.Kind == KindContract {
		return int64(r.ContractID)
	}
	return r.QuoteID
}

// Mine: the viewer created it or changed it last ("My quotes").
func (r *Row) Mine(v Viewer) bool {
	key := v.Key()
	return key != "" && (r.CreatedBy == key || r.ChangedBy == key)
}

// ValueCents orders rows by value: the one-off total plus a year of the monthly total.
func (r *Row) ValueCents() int64 { return r.OneOffCents + 12*r.MonthlyCents }

// Index records sightings and answers lists, in the state database.
type Index struct {
	db   *statedb.DB
	opts Options
	// customerSQL holds CustomerWork's statement text by its shape (customerShape): the text
	// holds placeholders only, never a value, so it is the same for every customer and viewer of
	// one shape; building it was 5 % of the customer page's allocations (docs/performance.md).
	customerSQL sync.Map
	// customers holds CustomerWork's answers (customerCache), shared by every Index on db.
	customers *customerCache
}

// New returns the index kept in db.
func New(db *statedb.DB, opts Options) *Index {
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Index{db: db, opts: opts, customers: customerCacheFor(db)}
}

// QuoteSighting is what a v2 quote document (call 10 and the answers of every quote action) says.
type QuoteSighting struct {
	QuoteID      int64
	CPQID        int32
	CustomerID   int32
	Customer     string // the customer's name, when known (never a placeholder)
	Configurator string // the configurator's name, when known
	// ContractID and ContractNumber are the quote's contract (0 and "" when it has none).
	ContractID     int32
	ContractNumber string
	OneOffCents    int64
	MonthlyCents   int64
	// UpdatedAt is the quote document's updatedAt, when it has one.
	UpdatedAt time.Time
}

// ContractSighting is what a v2 contract document (GET /v2/contract, the signature and archive
// answers, batch results) says.
type ContractSighting struct {
	ContractID   int32
	Number       string
	QuoteID      int64
	CPQID        int32
	CustomerID   int32
	Customer     string
	Facts        ContractFacts
	OneOffCents  int64
	MonthlyCents int64
	CreatedAt    time.Time
	// AnsweredAt and DeclineReason are the latest signature request's answer, as the document
	// says it (zero and "" when it has none): for whom the answer is news (the signature watcher's
	// inbox items), not stored.
	AnsweredAt    time.Time
	DeclineReason string
	// SignedAt is the signed request's signedAt (zero: none, or the document does not say): the
	// row's SignedAt when the index first learns the contract was signed.
	SignedAt time.Time
	// SentAt is the sentAt of the request that decides the stage (the signed one, else the
	// latest; zero: none, or the document does not say): the row's SentAt. DeclineReason above is
	// stored too, while the contract is declined (Row.DeclineReason).
	SentAt time.Time
	// ChangedAt is when the change the document shows happened, as the v2 API says it: the
	// signer's answer (signed, declined, expired) or the archive's time. It dates a change of
	// stage this sighting makes instead of the moment of the read (zero: the read's moment).
	ChangedAt time.Time
}

// Change is a stage change a contract's sighting recorded: the row's stage before (From, "" for a
// new row) and after, learnt inside the sighting's transaction, so Options.OnAnswer tells who needs
// to know (a signer's answer for the inboxes) without reading the row again.
type Change struct {
	// Known: the index had the row before this sighting.
	Known    bool
	From, To Stage
	// CreatedBy and ChangedBy are the row's creator and last changer before the sighting (person
	// keys): who sent it, for an answer.
	CreatedBy, ChangedBy string
}

// Answered: the contract was out for signature until this sighting and is no longer (a signer's
// answer, an expiry, a removal, an archive the portal learnt).
func (c Change) Answered() bool { return c.Known && c.From == StageSignature && c.To != StageSignature }

// ObserveQuote records a quote the viewer saw (act says how).
func (ix *Index) ObserveQuote(ctx context.Context, v Viewer, s QuoteSighting, act Act) error {
	if s.QuoteID <= 0 {
		return fmt.Errorf("workindex: quote without id")
	}
	ctx, cancel := ix.writeContext(ctx)
	defer cancel()
	return ix.tx(ctx, func(tx *sql.Tx, _ *bool) error {
		contractStage := Stage("")
		if s.ContractID > 0 {
			old, ok, err := ix.readRow(ctx, tx, KindContract, int64(s.ContractID), "")
			if err != nil {
				return err
			}
			if ok {
				contractStage = old.Stage
			}
		}
		stage := StageOfQuote(s.ContractID > 0 || s.ContractNumber != "", contractStage)
		return ix.write(ctx, tx, KindQuote, s.QuoteID, v, act, true, time.Time{}, func(r *Row) {
			r.QuoteID, r.CPQID, r.CustomerID = s.QuoteID, s.CPQID, s.CustomerID
			r.Customer = firstNonEmpty(s.Customer, r.Customer)
			r.Configurator = firstNonEmpty(s.Configurator, r.Configurator)
			if s.ContractID > 0 {
				r.ContractID = s.ContractID
			}
			r.ContractNumber = firstNonEmpty(s.ContractNumber, r.ContractNumber)
			r.Stage, r.OneOffCents, r.MonthlyCents = stage, s.OneOffCents, s.MonthlyCents
			if s.UpdatedAt.After(r.ChangedAt) {
				r.ChangedAt = s.UpdatedAt.UTC()
			}
		})
	})
}

// ObserveContract records a contract the viewer saw, and carries its stage to its quote's row
// when the index has that quote (a quote row is never made from a contract: the viewer did not
// read the quote). A stage change out of "out for signature" that it learns inside its
// transaction is told to Options.OnAnswer once committed.
func (ix *Index) ObserveContract(ctx context.Context, v Viewer, s ContractSighting, act Act) error {
	if s.ContractID <= 0 {
		return fmt.Errorf("workindex: contract without id")
	}
	ctx, cancel := ix.writeContext(ctx)
	defer cancel()
	var ch Change
	err := ix.tx(ctx, func(tx *sql.Tx, _ *bool) error {
		var err error
		ch, err = ix.observeContract(ctx, tx, v, s, act)
		return err
	})
	if err != nil {
		return err
	}
	if ch.Answered() && ix.opts.OnAnswer != nil {
		ix.opts.OnAnswer(ctx, s, ch)
	}
	return nil
}

func (ix *Index) observeContract(ctx context.Context, tx *sql.Tx, v Viewer, s ContractSighting, act Act) (Change, error) {
	stage := StageOfContract(s.Facts)
	ch := Change{To: stage}
	if act == ActChanged && (stage == StageSigned || stage == StageDeclined || stage == StageExpired) {
		// A signer's answer is nobody's change through the portal: whoever's action read it
		// (a signature action's answer) read it, and the sender stays who changed it last.
		act = ActOpened
	}
	err := ix.write(ctx, tx, KindContract, int64(s.ContractID), v, act, true, s.ChangedAt, func(r *Row) {
		ch.Known, ch.From, ch.CreatedBy, ch.ChangedBy = r.Stage != "", r.Stage, r.CreatedBy, r.ChangedBy
		r.ContractID, r.QuoteID, r.CPQID, r.CustomerID = s.ContractID, s.QuoteID, s.CPQID, s.CustomerID
		r.ContractNumber = firstNonEmpty(s.Number, r.ContractNumber)
		r.Customer = firstNonEmpty(s.Customer, r.Customer)
		r.Stage, r.OneOffCents, r.MonthlyCents = stage, s.OneOffCents, s.MonthlyCents
		if r.ChangedAt.IsZero() && !s.CreatedAt.IsZero() {
			r.ChangedAt = s.CreatedAt.UTC()
		}
		// A signature is a fact the contract keeps (archived, it stays a win): the first time the
		// index learns it, dated by the v2 signature's own time when the document gives it.
		if r.SignedAt.IsZero() && !s.SignedAt.IsZero() && (stage == StageSigned || stage == StageArchived) {
			r.SignedAt = s.SignedAt.UTC().Truncate(time.Microsecond)
		}
		// When it was sent, as the v2 request dates it (a document without it, the batch archive's,
		// leaves what the index knows).
		if !s.SentAt.IsZero() {
			r.SentAt = s.SentAt.UTC().Truncate(time.Microsecond)
		}
		r.DeclineReason = ""
		if stage == StageDeclined {
			r.DeclineReason = DeclineReasonText(s.DeclineReason)
		}
	})
	if err != nil || s.QuoteID <= 0 {
		return ch, err
	}
	// The quote's row follows its contract's stage; the viewer's act concerns the contract, so
	// nobody is recorded on the quote, and a quote that already follows is left alone.
	quote, ok, err := ix.readRow(ctx, tx, KindQuote, s.QuoteID, "")
	if err != nil || !ok || (quote.Stage == stage && quote.ContractID == s.ContractID) {
		return ch, err
	}
	// The quote's change is dated as its contract's.
	return ch, ix.write(ctx, tx, KindQuote, s.QuoteID, v, actFollowed, false, s.ChangedAt, func(r *Row) {
		r.ContractID = s.ContractID
		r.ContractNumber = firstNonEmpty(s.Number, r.ContractNumber)
		r.Stage = stage
		if r.Configurator == "" && s.CPQID != 0 {
			r.CPQID = s.CPQID
		}
	})
}

// Forget takes a row out of the viewer's lists: the v2 API answered 403 or 404 for it, read with
// their token. A later successful read by them gives it back.
func (ix *Index) Forget(ctx context.Context, v Viewer, kind Kind, id int64) error {
	key := v.Key()
	if key == "" {
		return nil
	}
	ctx, cancel := ix.writeContext(ctx)
	defer cancel()
	err := ix.tx(ctx, func(tx *sql.Tx, hides *bool) error {
		// A row revealed to them leaves their totals (the row locked, as a write locks it).
		row, exists, err := ix.readRow(ctx, tx, kind, id, "")
		if err != nil {
			return err
		}
		if exists {
			var owner int
			err := tx.QueryRowContext(ctx, `SELECT o.owner FROM work_viewers o WHERE o.person = $1 AND o.kind = $2 AND o.id = $3
				AND o.seen_at >= $4 AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)`,
				key, string(kind), id, statedb.Micros(row.FactsAt)).Scan(&owner)
			switch {
			case err == nil:
				var sums viewerSums
				sums.add(key, owner == 1, &row, -1)
				if err := sums.apply(ctx, tx, kind); err != nil {
					return err
				}
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM work_viewers WHERE person = $1 AND kind = $2 AND id = $3`, key, string(kind), id)
		if err != nil {
			return err
		}
		// Their read gone, the row leaves their answers (without a read it was in none).
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			*hides = true
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO work_denied (person, kind, id) VALUES ($1, $2, $3) ON CONFLICT (person, kind, id) DO NOTHING`,
			key, string(kind), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("workindex: forget %s %d: %w", kind, id, err)
	}
	return nil
}

// ForgetContractNumber is Forget for the contract of this number (work_rows_number), for a v2
// answer about a contract asked by its number (the batch check): nothing when the index does not
// know the number.
func (ix *Index) ForgetContractNumber(ctx context.Context, v Viewer, number string) error {
	if v.Key() == "" || number == "" {
		return nil
	}
	rows, err := ix.db.SQL.QueryContext(ctx, `SELECT id FROM work_rows WHERE contract_number = $1 AND kind = $2`, number, string(KindContract))
	if err != nil {
		return fmt.Errorf("workindex: forget contract %q: %w", number, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("workindex: forget contract %q: %w", number, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("workindex: forget contract %q: %w", number, err)
	}
	for _, id := range ids {
		if err := ix.Forget(ctx, v, KindContract, id); err != nil {
			return err
		}
	}
	return nil
}

// writeContext bounds a write and detaches it from the request's cancellation: a sighting is
// recorded even when the person moved on (a list filter typed over), and never waits long.
func (ix *Index) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), ix.opts.WriteTimeout)
}

// viewerEntry is a viewer's record of one row: their token's last successful read (a row the
// v2 API refused them has none, and a row in work_denied instead).
type viewerEntry struct {
	found, owner bool
	seenAt       time.Time
}

// write applies a sighting to a row inside tx: fill sets the facts; act decides who is recorded.
// create: the row is made when absent (a quote row followed from its contract is not). at is
// when the change happened as the v2 API says it (a signer's answer, an archive): it dates a
// change of stage instead of the moment of the write (zero: that moment).
func (ix *Index) write(ctx context.Context, tx *sql.Tx, kind Kind, id int64, v Viewer, act Act, create bool, at time.Time, fill func(r *Row)) error {
	now := ix.opts.Now().UTC().Truncate(time.Microsecond)
	key := v.Key()
	old, exists, err := ix.readRow(ctx, tx, kind, id, "")
	if err != nil {
		return err
	}
	if !exists && !create {
		return nil
	}
	entry := viewerEntry{}
	if key != "" {
		if entry, err = readViewer(ctx, tx, key, kind, id); err != nil {
			return err
		}
	}
	r := old
	if !exists {
		r = Row{Kind: kind}
		switch kind {
		case KindQuote:
			r.QuoteID = id
		case KindContract:
			r.ContractID = int32(id)
		}
	}
	fill(&r)
	// A contract seen signed keeps when (the v2 signature's time set by fill, else now).
	if kind == KindContract && r.Stage == StageSigned && r.SignedAt.IsZero() {
		r.SignedAt = firstTime(at, now)
	}
	// A contract seen out for signature without the v2 request's time was sent when first seen so.
	if kind == KindContract && r.Stage == StageSignature && r.SentAt.IsZero() {
		r.SentAt = now
	}
	// A change worth dating: a new row, another stage or other totals (as the v2 document says).
	dated := !exists || r.Stage != old.Stage || r.OneOffCents != old.OneOffCents || r.MonthlyCents != old.MonthlyCents ||
		r.ContractID != old.ContractID
	factsChanged := dated || r.Customer != old.Customer || r.Configurator != old.Configurator || r.ContractNumber != old.ContractNumber ||
		r.CPQID != old.CPQID || r.CustomerID != old.CustomerID || !r.ChangedAt.Equal(old.ChangedAt) || !r.SignedAt.Equal(old.SignedAt) ||
		!r.SentAt.Equal(old.SentAt) || r.DeclineReason != old.DeclineReason
	// Nothing new: the facts are the same, the row was seen a moment ago and so was the viewer's read.
	// (A read that would reveal the row to them again, after someone's read changed it, is written.)
	viewerFresh := key == "" || (entry.found && now.Sub(entry.seenAt) < seenWriteEvery && (entry.owner || act == ActRefreshed) &&
		!entry.seenAt.Before(old.FactsAt))
	if (act == ActOpened || act == ActRefreshed) && !factsChanged && now.Sub(old.SeenAt) < seenWriteEvery && viewerFresh {
		return nil
	}
	if dated || act == ActChanged || act == ActCreated {
		r.ChangedAt = now
		// A new stage the v2 API dates (the signer's answer, the archive) is dated by it, not by
		// the moment someone happened to read it.
		if !at.IsZero() && (!exists || r.Stage != old.Stage) {
			r.ChangedAt = at.UTC().Truncate(time.Microsecond)
		}
	}
	switch act {
	case ActCreated:
		if r.CreatedBy == "" {
			r.CreatedBy, r.CreatedByName = key, v.Name
		}
		r.ChangedBy, r.ChangedByName = key, v.Name
	case ActChanged:
		r.ChangedBy, r.ChangedByName = key, v.Name
	}
	// The facts changed: every viewer's earlier read is now older than them (strictly: the stamp
	// passes the row's last read, which is the latest of its viewers' reads, even on one clock tick),
	// so the row's share leaves the totals of everyone it was revealed to.
	var sums viewerSums
	if exists && !sameFacts(&old, &r) {
		readers, err := revealedTo(ctx, tx, kind, id, old.FactsAt)
		if err != nil {
			return err
		}
		// Revealed to them until now, the row leaves what they may see until they read it again:
		// their read is older than the new facts. The write does not wait for other replicas'
		// caches (customerCache): for a moment they may still show the facts these readers did
		// read, never the new ones.
		for _, p := range readers {
			sums.add(p.person, p.owner, &old, -1)
		}
	}
	if !exists || !sameFacts(&old, &r) {
		if exists && !now.After(old.SeenAt) {
			now = old.SeenAt.Add(time.Microsecond)
		}
		r.FactsAt = now
	}
	r.SeenAt = now
	if err := upsertRow(ctx, tx, &r); err != nil {
		return err
	}
	if err := updateTotals(ctx, tx, exists, &old, &r); err != nil {
		return err
	}
	if r.Customer != "" && r.CustomerID != 0 && (r.Customer != old.Customer || r.CustomerID != old.CustomerID) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO work_customers (customer_id, folded) VALUES ($1, $2)
			ON CONFLICT (customer_id) DO UPDATE SET folded = excluded.folded`, r.CustomerID, textfold.Fold(r.Customer)); err != nil {
			return fmt.Errorf("workindex: write customer %d: %w", r.CustomerID, err)
		}
	}
	if r.Configurator != "" && r.CPQID != 0 && r.Configurator != old.Configurator {
		if _, err := tx.ExecContext(ctx, `INSERT INTO work_configurators (cpq_id, name) VALUES ($1, $2)
			ON CONFLICT (cpq_id) DO UPDATE SET name = excluded.name`, r.CPQID, r.Configurator); err != nil {
			return fmt.Errorf("workindex: write configurator %d: %w", r.CPQID, err)
		}
	}
	if key == "" || (act == actFollowed && (!entry.found || entry.seenAt.Before(old.FactsAt))) {
		// Nobody's read (a batch result), or they had not read the quote as it was: they do not
		// know it now.
		return sums.apply(ctx, tx, kind)
	}
	owner := 0
	if (act != ActRefreshed && act != actFollowed) || (entry.found && entry.owner) {
		owner = 1
	}
	if exists && sameFacts(&old, &r) && entry.found && !entry.seenAt.Before(old.FactsAt) {
		sums.add(key, entry.owner, &old, -1) // revealed to them before: their share moves (owner)
	}
	// Their read, with the row's stage and times as it leaves them (the copy a revealed read
	// carries: work_viewers_stage_*).
	if _, err := tx.ExecContext(ctx, `INSERT INTO work_viewers (person, kind, id, owner, seen_at, stage, changed_at, stage_since)
		SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS BIGINT), CAST($4 AS INTEGER), CAST($5 AS BIGINT), r.stage, r.changed_at, r.stage_since
		FROM work_rows r WHERE r.kind = $2 AND r.id = $3
		ON CONFLICT (person, kind, id) DO UPDATE SET owner = excluded.owner, seen_at = excluded.seen_at, stage = excluded.stage,
		changed_at = excluded.changed_at, stage_since = excluded.stage_since`,
		key, string(kind), id, owner, statedb.Micros(now)); err != nil {
		return fmt.Errorf("workindex: write viewer of %s %d: %w", kind, id, err)
	}
	if !now.Before(r.FactsAt) {
		sums.add(key, owner == 1, &r, 1) // revealed to them now
	}
	// Read with their token just now: whatever the v2 API refused them before, it gives now.
	if !entry.found && act != actFollowed {
		if _, err := tx.ExecContext(ctx, `DELETE FROM work_denied WHERE person = $1 AND kind = $2 AND id = $3`, key, string(kind), id); err != nil {
			return fmt.Errorf("workindex: write viewer of %s %d: %w", kind, id, err)
		}
	}
	return sums.apply(ctx, tx, kind)
}

const rowColumns = `r.kind, r.quote_id, r.cpq_id, r.customer_id, r.customer, r.configurator, r.contract_id, r.contract_number,
	r.stage, r.one_off_cents, r.monthly_cents, r.created_by, r.created_by_name, r.changed_by, r.changed_by_name, r.changed_at, r.seen_at,
	r.facts_at, r.signed_at, r.sent_at, r.decline_reason`

// scanRow reads rowColumns and, when withViewer, the viewer's seen_at after them.
func scanRow(sc interface{ Scan(...any) error }, withViewer bool) (Row, error) {
	var r Row
	var kind, stage string
	var changedAt, seenAt, factsAt, signedAt, sentAt, viewerSeen int64
	dest := []any{&kind, &r.QuoteID, &r.CPQID, &r.CustomerID, &r.Customer, &r.Configurator, &r.ContractID, &r.ContractNumber,
		&stage, &r.OneOffCents, &r.MonthlyCents, &r.CreatedBy, &r.CreatedByName, &r.ChangedBy, &r.ChangedByName, &changedAt, &seenAt, &factsAt,
		&signedAt, &sentAt, &r.DeclineReason}
	if withViewer {
		dest = append(dest, &viewerSeen)
	}
	if err := sc.Scan(dest...); err != nil {
		return Row{}, err
	}
	r.Kind, r.Stage = Kind(kind), Stage(stage)
	r.ChangedAt, r.SeenAt, r.FactsAt, r.ViewerSeenAt = statedb.Time(changedAt), statedb.Time(seenAt), statedb.Time(factsAt), statedb.Time(viewerSeen)
	r.SignedAt, r.SentAt = statedb.Time(signedAt), statedb.Time(sentAt)
	return r, nil
}

// readRow reads one row (locked for the transaction on PostgreSQL; SQLite's transactions hold
// the write lock from their start). suffix is appended to the query.
func (ix *Index) readRow(ctx context.Context, q querier, kind Kind, id int64, suffix string) (Row, bool, error) {
	lock := ""
	if _, ok := q.(*sql.Tx); ok {
		lock = ix.db.ForUpdate()
	}
	r, err := scanRow(q.QueryRowContext(ctx, `SELECT `+rowColumns+` FROM work_rows r WHERE r.kind = $1 AND r.id = $2`+suffix+lock, string(kind), id), false)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Row{}, false, nil
	case err != nil:
		return Row{}, false, fmt.Errorf("workindex: read %s %d: %w", kind, id, err)
	}
	return r, true, nil
}

// sameFacts: a and b say the same of the quote or contract (what a viewer may be shown); the
// times of reads are not facts.
func sameFacts(a, b *Row) bool {
	return a.QuoteID == b.QuoteID && a.CPQID == b.CPQID && a.CustomerID == b.CustomerID && a.Customer == b.Customer &&
		a.Configurator == b.Configurator && a.ContractID == b.ContractID && a.ContractNumber == b.ContractNumber &&
		a.Stage == b.Stage && a.OneOffCents == b.OneOffCents && a.MonthlyCents == b.MonthlyCents &&
		a.CreatedBy == b.CreatedBy && a.CreatedByName == b.CreatedByName && a.ChangedBy == b.ChangedBy &&
		a.ChangedByName == b.ChangedByName && a.ChangedAt.Equal(b.ChangedAt) && a.SignedAt.Equal(b.SignedAt) &&
		a.SentAt.Equal(b.SentAt) && a.DeclineReason == b.DeclineReason
}

func readViewer(ctx context.Context, tx *sql.Tx, key string, kind Kind, id int64) (viewerEntry, error) {
	var owner int
	var seen int64
	err := tx.QueryRowContext(ctx, `SELECT owner, seen_at FROM work_viewers WHERE person = $1 AND kind = $2 AND id = $3`,
		key, string(kind), id).Scan(&owner, &seen)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return viewerEntry{}, nil
	case err != nil:
		return viewerEntry{}, fmt.Errorf("workindex: read viewer of %s %d: %w", kind, id, err)
	}
	return viewerEntry{found: true, owner: owner == 1, seenAt: statedb.Time(seen)}, nil
}

func upsertRow(ctx context.Context, tx *sql.Tx, r *Row) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO work_rows (kind, id, quote_id, cpq_id, customer_id, customer, customer_folded, configurator,
		contract_id, contract_number, stage, one_off_cents, monthly_cents, value_cents, created_by, created_by_name, changed_by,
		changed_by_name, changed_at, seen_at, stage_since, facts_at, signed_at, signed_month, sent_at, decline_reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $20, $21, $22, $23, $24, $25)
		ON CONFLICT (kind, id) DO UPDATE SET quote_id = excluded.quote_id, cpq_id = excluded.cpq_id, customer_id = excluded.customer_id,
		customer = excluded.customer, customer_folded = excluded.customer_folded, configurator = excluded.configurator,
		contract_id = excluded.contract_id, contract_number = excluded.contract_number, stage = excluded.stage,
		one_off_cents = excluded.one_off_cents, monthly_cents = excluded.monthly_cents, value_cents = excluded.value_cents,
		created_by = excluded.created_by, created_by_name = excluded.created_by_name, changed_by = excluded.changed_by,
		changed_by_name = excluded.changed_by_name, changed_at = excluded.changed_at, seen_at = excluded.seen_at,
		facts_at = excluded.facts_at, signed_at = excluded.signed_at, signed_month = excluded.signed_month,
		sent_at = excluded.sent_at, decline_reason = excluded.decline_reason,
		stage_since = CASE WHEN work_rows.stage = excluded.stage THEN work_rows.stage_since ELSE excluded.stage_since END`,
		string(r.Kind), r.ID(), r.QuoteID, r.CPQID, r.CustomerID, r.Customer, textfold.Fold(r.Customer), r.Configurator,
		r.ContractID, r.ContractNumber, string(r.Stage), r.OneOffCents, r.MonthlyCents, r.ValueCents(), r.CreatedBy, r.CreatedByName,
		r.ChangedBy, r.ChangedByName, statedb.Micros(r.ChangedAt), statedb.Micros(r.SeenAt), statedb.Micros(r.FactsAt),
		statedb.Micros(r.SignedAt), SignedMonth(r.SignedAt), statedb.Micros(r.SentAt), r.DeclineReason)
	if err != nil {
		return fmt.Errorf("workindex: write %s %d: %w", r.Kind, r.ID(), err)
	}
	return nil
}

// querier is what reads run on: the pool or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Lookup returns the row of a quote or contract for the viewer; false when absent, not listed
// for them, not revealed to them (Row.Revealed) or the database cannot be read.
func (ix *Index) Lookup(ctx context.Context, v Viewer, kind Kind, id int64) (Row, bool) {
	key := v.Key()
	if key == "" {
		return Row{}, false
	}
	r, err := scanRow(ix.db.SQL.QueryRowContext(ctx, `SELECT `+rowColumns+`, COALESCE(w.seen_at, 0) FROM work_rows r
		LEFT JOIN work_viewers w ON w.person = $3 AND w.kind = r.kind AND w.id = r.id
		WHERE r.kind = $1 AND r.id = $2 AND ($4 = 1 OR w.owner = 1) AND w.seen_at >= r.facts_at
		AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = $3 AND d.kind = r.kind AND d.id = r.id)`,
		string(kind), id, key, boolInt(v.Team)), true)
	if err != nil {
		return Row{}, false
	}
	return r, true
}

// Peek returns a row without a visibility check: for labels of an object the viewer has just
// read from the v2 API themselves (the customer's name on a quote they have open) and for hints
// of where to read, never for lists.
func (ix *Index) Peek(ctx context.Context, kind Kind, id int64) (Row, bool) {
	r, ok, err := ix.readRow(ctx, ix.db.SQL, kind, id, "")
	if err != nil {
		return Row{}, false
	}
	return r, ok
}

// Archive records that the contract with this number was archived by v (a batch archive's
// line: the v2 archive call succeeded with v's token) at the archive's time as the v2 API answered
// it (at; zero: now). Only a contract the index already has is changed: its stage becomes
// archived, credited to v (who changed it last), and its signature, if any, stays (SignedAt).
// v's read of it is recorded too (their token archived it, and the batch check read it).
func (ix *Index) Archive(ctx context.Context, v Viewer, number string, at time.Time) error {
	ctx, cancel := ix.writeContext(ctx)
	defer cancel()
	return ix.tx(ctx, func(tx *sql.Tx, _ *bool) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM work_rows WHERE contract_number = $1 AND kind = $2`, number, string(KindContract)).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return fmt.Errorf("workindex: find contract %q: %w", number, err)
		}
		found, ok, err := ix.readRow(ctx, tx, KindContract, id, "")
		if err != nil || !ok {
			return err
		}
		act := ActChanged
		if v.Key() == "" {
			act = ActRefreshed // nobody to credit: the facts only
		}
		_, err = ix.observeContract(ctx, tx, v, ContractSighting{ContractID: found.ContractID, Number: number, QuoteID: found.QuoteID,
			CPQID: found.CPQID, CustomerID: found.CustomerID, Facts: ContractFacts{Status: v2StatusArchived, Archived: true},
			OneOffCents: found.OneOffCents, MonthlyCents: found.MonthlyCents, ChangedAt: at}, act)
		return err
	})
}

// ContractStages returns the stage of each of these contract numbers that the viewer's own token
// read within fresh and that nobody's read changed since, for a page that lists contracts the viewer has just checked themselves:
// nothing about a contract the v2 API refused them or they never read.
func (ix *Index) ContractStages(ctx context.Context, v Viewer, numbers []string, fresh time.Duration) (map[string]Stage, error) {
	out := make(map[string]Stage, len(numbers))
	key := v.Key()
	if key == "" || len(numbers) == 0 {
		return out, nil
	}
	since := statedb.Micros(ix.opts.Now().Add(-fresh))
	for chunk := range chunks(numbers, 200) {
		args := []any{string(KindContract), key, since}
		query := `SELECT r.contract_number, r.stage FROM work_rows r JOIN work_viewers w ON w.person = $2 AND w.kind = r.kind AND w.id = r.id
			WHERE r.kind = $1 AND w.seen_at >= $3 AND w.seen_at >= r.facts_at AND r.contract_number IN (` + placeholders(&args, chunk) + `)`
		rows, err := ix.db.SQL.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, fmt.Errorf("workindex: contract stages: %w", err)
		}
		for rows.Next() {
			var number, stage string
			if err := rows.Scan(&number, &stage); err != nil {
				rows.Close()
				return nil, fmt.Errorf("workindex: contract stages: %w", err)
			}
			out[number] = Stage(stage)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("workindex: contract stages: %w", err)
		}
	}
	return out, nil
}

// Purge removes the rows not seen for Options.Retention (none when it is 0: rows are kept) and
// the viewers' records of them; it returns how many rows left.
func (ix *Index) Purge(ctx context.Context) (int64, error) {
	if ix.opts.Retention <= 0 {
		return 0, nil
	}
	before := statedb.Micros(ix.opts.Now().Add(-ix.opts.Retention))
	var n int64
	err := ix.tx(ctx, func(tx *sql.Tx, hides *bool) error {
		// The rows leaving take their shares out of their viewers' totals first.
		if err := addViewerSums(ctx, tx, "r.seen_at < $1", "-", before); err != nil {
			return err
		}
		for _, table := range []string{"work_viewers", "work_denied"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE EXISTS (SELECT 1 FROM work_rows r
				WHERE r.kind = `+table+`.kind AND r.id = `+table+`.id AND r.seen_at < $1)`, before); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM work_rows WHERE seen_at < $1`, before)
		if err != nil {
			return err
		}
		if n, _ = res.RowsAffected(); n > 0 {
			*hides = true
			return rebuildEveryonesTotals(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("workindex: purge: %w", err)
	}
	return n, nil
}

// placeholders appends values to args and returns their placeholders, "$4, $5, ...".
func placeholders[T any](args *[]any, values []T) string {
	b := make([]byte, 0, len(values)*5)
	for i, v := range values {
		if i > 0 {
			b = append(b, ", "...)
		}
		*args = append(*args, v)
		b = fmt.Appendf(b, "$%d", len(*args))
	}
	return string(b)
}

func chunks[T any](s []T, n int) func(yield func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SignedMonth is t's UTC month as yyyymm (0 for the zero time): work_rows.signed_month, the key
// of the per-viewer sums of signatures by month (work_viewer_signed, SignedByMonth).
func SignedMonth(t time.Time) int {
	if t.IsZero() {
		return 0
	}
	t = t.UTC()
	return t.Year()*100 + int(t.Month())
}

// maxDeclineReason is how many characters of a signer's reason the index keeps.
const maxDeclineReason = 200

// DeclineReasonText is a signer's decline reason as the index stores, groups and filters it:
// whitespace collapsed, control characters dropped, at most maxDeclineReason characters.
func DeclineReasonText(s string) string {
	fields := strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
	out := strings.Join(fields, " ")
	if utf8.RuneCountInString(out) > maxDeclineReason {
		out = strings.TrimSpace(string([]rune(out)[:maxDeclineReason]))
	}
	return out
}

// DaysToSign are the whole days from r's send to its signature (at most MaxDaysToSign); false
// when either is not known (the days bucket -1 of work_viewer_rep_signed).
func (r *Row) DaysToSign() (int, bool) {
	if r.SentAt.IsZero() || r.SignedAt.IsZero() || r.SignedAt.Before(r.SentAt) {
		return -1, false
	}
	days := (statedb.Micros(r.SignedAt) - statedb.Micros(r.SentAt)) / (24 * 3600 * 1_000_000)
	return int(min(days, MaxDaysToSign)), true
}

// MaxDaysToSign caps the days to signature kept per rep (a longer wait counts as this many).
const MaxDaysToSign = 366

func firstTime(values ...time.Time) time.Time {
	for _, t := range values {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
