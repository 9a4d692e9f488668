// Package signwatch learns the signers' answers without anyone looking (issue 39): the v2 API
// has no callbacks (spec section 6), so every contract out for signature is read again on a
// schedule, and what the v2 API answers is recorded in the work index like any other read.
//
// Whose token. A contract is read with the token of a person whose own token read it before
// (workindex.AwaitingAnswer: its sender first), never with anyone else's: against a v2 API that
// restricts each person to their own customers nothing is learnt that the reader could not read,
// and the read is recorded as theirs (workindex.ActRefreshed), so it reveals the answer to them
// and to nobody else (every other viewer's page reads it again with their own token). Tokens are
// handed over by people's requests when they change (Keep: sign-in, refresh), sealed at rest,
// and deleted when the person's sessions end (Drop) or the v2 API refuses them (401). A contract
// none of whose readers holds a live token waits until one of them signs in again.
//
// One watcher across replicas. The replica holding the lease (internal/lease: a row of
// watch_leases, by the database's clock) watches; the others only hand tokens over. A new holder
// starts afresh and spreads its first reads over one interval.
//
// The budget. Each watched contract is read about once per Interval, and never more than
// min(MaxCallsPerMinute, watched × 1 min / Interval) reads a minute: the budget grows with the
// number watched and has a ceiling. An answer the v2 API could not give (5xx, 429, a time-out, no
// connection) pauses every read, 5 s doubling to 5 min, so an outage costs a handful of calls.
// A contract leaves the watch once its stage is no longer "out for signature".
package signwatch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cpqportal/portal/internal/lease"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/workindex"
)

// Reader reads one contract with a person's token (V2Reader on the v2 API).
type Reader interface {
	Read(ctx context.Context, token string, contractID int32) (workindex.ContractSighting, error)
}

// The errors a Reader wraps, by what the watcher does about them.
var (
	// ErrTokenRefused: the token is no longer accepted (401): it is deleted.
	ErrTokenRefused = errors.New("signwatch: token refused")
	// ErrNotReadable: the person may not read the contract, or it is gone (403, 404): the row
	// leaves their lists and the watcher asks the next reader.
	ErrNotReadable = errors.New("signwatch: contract not readable with this token")
)

// Defaults (docs/operations.md).
const (
	DefaultInterval          = time.Minute
	DefaultMaxCallsPerMinute = 600
	DefaultConcurrency       = 4
	DefaultLease             = 15 * time.Second
	firstBackoff             = 5 * time.Second
	maxBackoff               = 5 * time.Minute
)

// Options configure a Watcher; DB, Work, Reader and Sealer are required.
type Options struct {
	DB     *statedb.DB
	Work   *workindex.Index
	Reader Reader
	Sealer Sealer
	// Interval: each watched contract is read about this often (DefaultInterval when 0).
	Interval time.Duration
	// MaxCallsPerMinute is the budget's ceiling (DefaultMaxCallsPerMinute when 0).
	MaxCallsPerMinute int
	// Concurrency is how many reads run at a time (DefaultConcurrency when 0).
	Concurrency int
	// Holder names this replica in the lease (random when empty).
	Holder string
	// Lease is how long the lease lasts unless renewed (every third of it; DefaultLease when 0).
	Lease time.Duration
	// OnAnswer is told of each contract that left "out for signature", after it was recorded:
	// reader is the person whose token read it.
	OnAnswer func(ctx context.Context, reader workindex.Viewer, s workindex.ContractSighting, stage workindex.Stage)
	Logger   *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Watcher watches contracts out for signature; build one per process with New.
type Watcher struct {
	opts Options

	keptMu sync.Mutex
	kept   map[string]kept // person key -> the token this process last kept for them

	reads   atomic.Int64
	watched atomic.Int64
	holding atomic.Bool
	sched   *schedule // only Run's goroutine touches it
	lease   *lease.Lease
}

// New returns a Watcher; Run starts it.
func New(opts Options) *Watcher {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.MaxCallsPerMinute <= 0 {
		opts.MaxCallsPerMinute = DefaultMaxCallsPerMinute
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Holder == "" {
		opts.Holder = randomHolder()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Watcher{opts: opts, kept: map[string]kept{}, sched: newSchedule(opts.Interval, opts.MaxCallsPerMinute),
		lease: lease.New(opts.DB, lease.Options{Columns: leaseColumns, Key: leaseName, Holder: opts.Holder, Term: opts.Lease,
			Logger: opts.Logger.With(slog.String("of", "signature watcher"))})}
}

// Reads counts the v2 reads this process made (the bench's calls a minute).
func (w *Watcher) Reads() int64 { return w.reads.Load() }

// Holding reports whether this replica watches now.
func (w *Watcher) Holding() bool { return w.holding.Load() }

// Watched is how many contracts this replica watches (0 when it does not hold the lease).
func (w *Watcher) Watched() int { return int(w.watched.Load()) }

// tick is how often Run looks for due reads.
func (w *Watcher) tick() time.Duration {
	return min(max(w.opts.Interval/20, 100*time.Millisecond), time.Second)
}

// scanEvery is how often the holder lists the contracts to watch and the tokens to read them with.
func (w *Watcher) scanEvery() time.Duration {
	return min(max(w.opts.Interval/2, time.Second), 15*time.Second)
}

// Run watches while this replica holds the lease (internal/lease: taken when free, renewed every
// third of Options.Lease, the watch stopped when it is lost), until ctx ends; then it gives the
// lease up, so another replica takes over at once.
func (w *Watcher) Run(ctx context.Context) {
	w.lease.Hold(ctx, w.watch)
}

// watch reads the contracts due until ctx ends (the lease was lost, or Run's context ended). A
// new holder starts afresh and spreads its first reads over one interval.
func (w *Watcher) watch(ctx context.Context) error {
	w.opts.Logger.Info("signature watcher: this replica watches the contracts out for signature")
	w.sched = newSchedule(w.opts.Interval, w.opts.MaxCallsPerMinute)
	w.holding.Store(true)
	defer w.holding.Store(false)
	ticker := time.NewTicker(w.tick())
	defer ticker.Stop()
	var scannedAt time.Time
	var tokens map[string]liveToken
	for {
		now := w.opts.Now()
		if now.Sub(scannedAt) >= w.scanEvery() {
			var err error
			if tokens, err = w.scan(ctx, now); err != nil && ctx.Err() == nil {
				w.opts.Logger.Warn("signature watcher: the contracts to watch could not be listed", slog.Any("err", err))
			}
			scannedAt = now
		}
		w.readDue(ctx, now, tokens)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// scan lists the live tokens and the contracts their people read that are out for signature.
func (w *Watcher) scan(ctx context.Context, now time.Time) (map[string]liveToken, error) {
	tokens, err := w.liveTokens(ctx)
	if err != nil {
		return nil, err
	}
	persons := make([]string, 0, len(tokens))
	for key := range tokens {
		persons = append(persons, key)
	}
	list, err := w.opts.Work.AwaitingAnswer(ctx, persons)
	if err != nil {
		return tokens, err
	}
	w.sched.sync(now, list)
	w.watched.Store(int64(len(w.sched.entries)))
	return tokens, nil
}
