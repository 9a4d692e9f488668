// Package lease runs work on one replica at a time. A lease is one row of a table its user owns
// (the inbox's scheduled scans, the bounce mailbox's poll, the signature watcher): the lease
// reads and writes only the row's holder and lease end, and on a schedule when the work is due
// and how often it ran; every other column stays its user's. Lease ends are on the database's
// clock (statedb.DB.NowMicros), so replicas whose clocks disagree still agree on who holds one.
//
// What an interruption does:
//   - a holder that vanished (SIGKILL, a crash) leaves the row held until its term runs out; then
//     any replica takes it (on a schedule the run was not counted, so it runs again);
//   - a holder that stops gives the lease up at once (Release), so another takes it at once;
//   - while its work runs the holder renews the lease every third of its term; a holder that
//     cannot renew it (the database stopped, or another took the lease over) ends its work's
//     context (cause ErrLost) a fifth of the term before the last term it renewed runs out, so
//     two holders never work at once.
package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// ErrLost is the cause of a work's context ending because its lease was lost (taken over, or
// not renewed in time).
var ErrLost = errors.New("lease: lost")

// Columns name a lease's table and the columns the lease reads and writes. The table's other
// columns need defaults (the first claim inserts the row).
type Columns struct {
	// Table is the table; Key is its primary key column (one row per lease).
	Table, Key string
	// Holder is the holder's id ('' when free); Until the lease's end, in unix microseconds by the
	// database's clock (0 when free).
	Holder, Until string
	// NextRun, when set, makes the lease a schedule's: it is taken only when the row is due
	// (NextRun at or before now), and a run that succeeded moves NextRun on by Options.Every, adds
	// one to Runs and sets LastRun (both required with NextRun).
	NextRun, LastRun, Runs string
}

// Options configure a Lease.
type Options struct {
	Columns
	// Key is the lease's row (the value of Columns.Key).
	Key string
	// Holder names this holder (statedb.NewID when empty); Term is how long a claim or a renewal
	// lasts (DefaultTerm when 0).
	Holder string
	Term   time.Duration
	// Every is a schedule's interval (Columns.NextRun).
	Every time.Duration
	// Logger receives Hold's failures to take or keep the lease (dropped when nil).
	Logger *slog.Logger
}

// DefaultTerm is a lease's term unless Options.Term says otherwise.
const DefaultTerm = time.Minute

// endTimeout bounds the write that gives a lease up after its work (whose context may have ended).
const endTimeout = 5 * time.Second

// Lease is one lease row as one holder sees it.
type Lease struct {
	db   *statedb.DB
	opts Options
	name string // for messages: table and key

	claim, renew, release, done string // the statements
}

// New returns the lease of opts on db.
func New(db *statedb.DB, opts Options) *Lease {
	if opts.Holder == "" {
		opts.Holder = statedb.NewID()
	}
	if opts.Term <= 0 {
		opts.Term = DefaultTerm
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c, now := opts.Columns, db.NowMicros()
	free := `(` + c.Table + `.` + c.Holder + ` = '' OR ` + c.Table + `.` + c.Until + ` < ` + now + `)`
	if c.NextRun != "" {
		free += ` AND ` + c.Table + `.` + c.NextRun + ` <= ` + now
	}
	l := &Lease{db: db, opts: opts, name: c.Table + " " + opts.Key}
	// One statement takes a free row or inserts a missing one (its other columns get their
	// defaults): RowsAffected is 1 when this holder holds it, on both engines.
	l.claim = `INSERT INTO ` + c.Table + ` (` + c.Key + `, ` + c.Holder + `, ` + c.Until + `) VALUES ($1, $2, ` + now + ` + $3)
		ON CONFLICT (` + c.Key + `) DO UPDATE SET ` + c.Holder + ` = excluded.` + c.Holder + `, ` + c.Until + ` = excluded.` + c.Until + `
		WHERE ` + free
	l.renew = `UPDATE ` + c.Table + ` SET ` + c.Until + ` = ` + now + ` + $3 WHERE ` + c.Key + ` = $1 AND ` + c.Holder + ` = $2`
	l.release = `UPDATE ` + c.Table + ` SET ` + c.Holder + ` = '', ` + c.Until + ` = 0 WHERE ` + c.Key + ` = $1 AND ` + c.Holder + ` = $2`
	if c.NextRun != "" {
		l.done = `UPDATE ` + c.Table + ` SET ` + c.Holder + ` = '', ` + c.Until + ` = 0, ` + c.NextRun + ` = ` + now + ` + $3, ` +
			c.LastRun + ` = ` + now + `, ` + c.Runs + ` = ` + c.Runs + ` + 1 WHERE ` + c.Key + ` = $1 AND ` + c.Holder + ` = $2`
	}
	return l
}

// Holder is this holder's id, as the row names it while it holds the lease (a user's own writes
// to the row fence on it: "WHERE holder = $n").
func (l *Lease) Holder() string { return l.opts.Holder }

// Claim takes the lease for its term when it is free (nobody holds it, or its holder's term ran
// out) and, on a schedule, due; it reports whether this holder holds it now. A lease this holder
// holds already is not free: it is renewed by Renew, and two claims by one holder never both win.
func (l *Lease) Claim(ctx context.Context) (bool, error) {
	return l.exec(ctx, "claim", l.claim, l.opts.Key, l.opts.Holder, l.opts.Term.Microseconds())
}

// Renew extends the lease by its term from now when this holder holds it; false: another holder
// took it over (or it was released).
func (l *Lease) Renew(ctx context.Context) (bool, error) {
	return l.exec(ctx, "renew", l.renew, l.opts.Key, l.opts.Holder, l.opts.Term.Microseconds())
}

// Release gives the lease up when this holder holds it, so another holder may take it at once;
// on a schedule the run is not counted (it is due again).
func (l *Lease) Release(ctx context.Context) error {
	_, err := l.exec(ctx, "release", l.release, l.opts.Key, l.opts.Holder)
	return err
}

// Done gives up a schedule's lease after a run that succeeded: the run is counted and the work
// is due again after Every. Without a schedule it is Release.
func (l *Lease) Done(ctx context.Context) error {
	if l.done == "" {
		return l.Release(ctx)
	}
	_, err := l.exec(ctx, "record the run of", l.done, l.opts.Key, l.opts.Holder, l.opts.Every.Microseconds())
	return err
}

func (l *Lease) exec(ctx context.Context, what, query string, args ...any) (bool, error) {
	res, err := l.db.SQL.ExecContext(ctx, query, args...)
	if err != nil {
		return false, fmt.Errorf("lease: %s %s: %w", what, l.name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("lease: %s %s: %w", what, l.name, err)
	}
	return n == 1, nil
}

// Do runs fn once when the lease can be taken (Claim), renewing it every third of its term
// while fn runs; fn's context ends with ctx, or with cause ErrLost when the lease was lost.
// After fn the lease is given up: by Done when fn succeeded, by Release otherwise (a schedule's
// run then is due again at once). ran tells whether fn ran; err is fn's error as it is, or the
// lease's (wrapped) when taking, keeping or giving it up failed.
func (l *Lease) Do(ctx context.Context, fn func(ctx context.Context) error) (ran bool, err error) {
	claimed := time.Now() // before the claim: the term counts from a moment no earlier than this
	held, err := l.Claim(ctx)
	if err != nil || !held {
		return false, err
	}
	work, lose := context.WithCancelCause(ctx)
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		l.keep(work, l.fence(claimed), lose)
	}()
	err = fn(work)
	lost := context.Cause(work)
	lose(nil)
	<-kept
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), endTimeout)
	defer cancel()
	switch {
	case errors.Is(lost, ErrLost):
		// Given up all the same: a holder whose renewals failed may still be named in the row.
		_ = l.Release(end)
		if err == nil || errors.Is(err, context.Canceled) {
			return true, fmt.Errorf("lease: %s: %w", l.name, lost)
		}
		return true, errors.Join(err, lost)
	case err != nil:
		if relErr := l.Release(end); relErr != nil {
			return true, errors.Join(err, relErr)
		}
		return true, err
	}
	return true, l.Done(end)
}

// fence is the moment until which a holder whose claim or renewal was sent at sent may work: a
// fifth of the term before the term's end (the database computed that end from a moment no
// earlier than sent).
func (l *Lease) fence(sent time.Time) time.Time {
	return sent.Add(l.opts.Term - l.opts.Term/5)
}

// keep renews the lease every third of its term until ctx ends; it ends the work (lose) when
// another holder took the lease, or when the fence passed without a renewal that succeeded
// (whether the renewals failed or one is still waiting for the database).
func (l *Lease) keep(ctx context.Context, fence time.Time, lose context.CancelCauseFunc) {
	fenced := time.AfterFunc(time.Until(fence), func() {
		lose(fmt.Errorf("%w: not renewed within %v", ErrLost, l.opts.Term-l.opts.Term/5))
	})
	defer fenced.Stop()
	interval := l.opts.Term / 3
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sent := time.Now()
		renewCtx, cancel := context.WithDeadline(ctx, fence)
		held, err := l.Renew(renewCtx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && held:
			fence = l.fence(sent)
			fenced.Reset(time.Until(fence))
		case err == nil:
			lose(ErrLost)
			return
		}
		// After a failed renewal (err), tried again before the fence.
		t.Reset(min(interval, time.Until(fence)/2))
	}
}

// Hold runs fn whenever this holder can take the lease, until ctx ends: it tries every third of
// the term, and after fn (which returns when its context ends: ctx ended, or the lease was lost)
// tries again. The lease is given up when fn returns. Failures are logged (Options.Logger).
func (l *Lease) Hold(ctx context.Context, fn func(ctx context.Context) error) {
	t := time.NewTicker(l.opts.Term / 3)
	defer t.Stop()
	for {
		if _, err := l.Do(ctx, fn); err != nil && ctx.Err() == nil {
			l.opts.Logger.Warn("lease: taking or keeping the lease failed; tried again",
				slog.String("lease", l.name), slog.Any("err", err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
