package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/store"
)

// Archiver is what a job needs of the v2 API, with the owner's token per call.
type Archiver interface {
	// Archive archives the contract and returns its archive id. An error wrapping
	// ErrTokenRejected pauses the job; any other error fails the item with err's message.
	Archive(ctx context.Context, token, number string) (archiveID string, err error)
	// ArchiveID tells whether the contract is archived already (for items that were in flight
	// when a runner stopped), and its archive id.
	ArchiveID(ctx context.Context, token, number string) (archiveID string, archived bool, err error)
}

const (
	keyPrefix = "job/"
	// keep is how long a job is kept after its last change.
	keep = 30 * 24 * time.Hour
	// leaseTerm is how long a lease lasts without renewal; flushes renew it.
	leaseTerm = 15 * time.Second
	// flushInterval is how often a runner writes its progress (and reads cancel and token).
	flushInterval = 250 * time.Millisecond
	// scanInterval is how often a replica looks for jobs to pick up.
	scanInterval = 2 * time.Second
	// callTimeout bounds one archive call made while stopping (the in-flight items finish).
	callTimeout = 30 * time.Second
)

// Options configure a Manager.
type Options struct {
	Store    store.Store
	Archiver Archiver
	// Concurrency is how many archive calls one job makes at a time (at least 1).
	Concurrency int
	Logger      *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// OnChange, when set, is called with a job's id after each change of it is stored (progress,
	// end, cancel), so a page waiting on the job can show it at once (issue 27). It must not block.
	OnChange func(id string)
}

// Manager creates jobs, runs the ones it holds the lease of, and answers their state.
type Manager struct {
	opts      Options
	replicaID string
	now       func() time.Time

	mu      sync.Mutex
	running map[string]context.CancelFunc
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// NewManager returns a Manager; call Run to pick up and run jobs, Close to stop.
func NewManager(opts Options) *Manager {
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Manager{opts: opts, replicaID: randomID(), now: now, running: map[string]context.CancelFunc{}, stop: make(chan struct{})}
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ValidID reports whether id looks like a job id (32 lower-case hex digits), so handlers refuse
// anything else before the store is asked.
func ValidID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, r := range id {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// Run scans for jobs to pick up (new ones, and ones whose runner stopped) until Close.
func (m *Manager) Run() {
	m.wg.Go(func() {
		ticker := time.NewTicker(scanInterval)
		defer ticker.Stop()
		for {
			m.scan()
			select {
			case <-m.stop:
				return
			case <-ticker.C:
			}
		}
	})
}

// Close stops every runner after its items in flight, writes their state and releases their
// leases (so another replica, or this one after a restart, resumes them at once).
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.stop)
	for _, cancel := range m.running {
		cancel()
	}
	m.mu.Unlock()
	m.wg.Wait()
}

func (m *Manager) load(ctx context.Context, id string) (*Job, error) {
	raw, err := m.opts.Store.Get(ctx, keyPrefix+id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: load %s: %w", id, err)
	}
	var j Job
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("jobs: decode %s: %w", id, err)
	}
	return &j, nil
}

// update changes a job atomically; fn returns ErrSkip-like errors to abort.
func (m *Manager) update(ctx context.Context, id string, fn func(j *Job) error) (*Job, error) {
	var out *Job
	err := m.opts.Store.Update(ctx, keyPrefix+id, keep, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, ErrNotFound
		}
		var j Job
		if err := json.Unmarshal(old, &j); err != nil {
			return nil, fmt.Errorf("jobs: decode %s: %w", id, err)
		}
		if err := fn(&j); err != nil {
			return nil, err
		}
		j.UpdatedAt = m.now().UTC()
		out = &j
		return json.Marshal(&j)
	})
	if err != nil {
		return nil, err
	}
	if m.opts.OnChange != nil {
		m.opts.OnChange(id)
	}
	return out, nil
}

// Create stores a draft job of items (already validated: rejected items carry their problem).
func (m *Manager) Create(ctx context.Context, owner, ownerName string, items []Item) (*Job, error) {
	now := m.now().UTC()
	j := &Job{ID: randomID(), Owner: owner, OwnerName: ownerName, CreatedAt: now, UpdatedAt: now, Status: StatusDraft, Items: items}
	raw, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	if err := m.opts.Store.Put(ctx, keyPrefix+j.ID, raw, keep); err != nil {
		return nil, fmt.Errorf("jobs: create: %w", err)
	}
	return j, nil
}

// Get returns the owner's job (ErrNotFound for someone else's).
func (m *Manager) Get(ctx context.Context, id, owner string) (*Job, error) {
	j, err := m.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if j.Owner != owner {
		return nil, ErrNotFound
	}
	return j, nil
}

// List returns the owner's jobs, newest first.
func (m *Manager) List(ctx context.Context, owner string) ([]*Job, error) {
	keys, err := m.opts.Store.Keys(ctx, keyPrefix)
	if err != nil {
		return nil, err
	}
	var out []*Job
	for _, k := range keys {
		j, err := m.load(ctx, k[len(keyPrefix):])
		if err != nil || j.Owner != owner {
			continue
		}
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].CreatedAt.After(out[b].CreatedAt) })
	return out, nil
}

// owned applies fn to the owner's job.
func (m *Manager) owned(ctx context.Context, id, owner string, fn func(j *Job) error) (*Job, error) {
	j, err := m.update(ctx, id, func(j *Job) error {
		if j.Owner != owner {
			return ErrNotFound
		}
		return fn(j)
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrState) {
		return nil, fmt.Errorf("jobs: %s: %w", id, err)
	}
	return j, err
}

// Start queues a draft job with the owner's token; this replica tries to run it at once.
func (m *Manager) Start(ctx context.Context, id, owner, token string, expiry time.Time) (*Job, error) {
	j, err := m.owned(ctx, id, owner, func(j *Job) error {
		if j.Status != StatusDraft {
			return ErrState
		}
		j.Status, j.StartedAt, j.Token, j.TokenExpiry = StatusQueued, m.now().UTC(), token, expiry
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.claim(id)
	return j, nil
}

// Cancel asks the job to stop after the items in flight. A job no runner holds stops at once.
func (m *Manager) Cancel(ctx context.Context, id, owner string) (*Job, error) {
	return m.owned(ctx, id, owner, func(j *Job) error {
		if !j.Active() {
			return ErrState
		}
		j.CancelRequested = true
		if j.Lease == "" || m.now().After(j.LeaseUntil) {
			j.Status, j.EndedAt = StatusCancelled, m.now().UTC()
			resetRunning(j)
		}
		return nil
	})
}

// RetryFailed queues the failed items again (only those), with the owner's fresh token.
func (m *Manager) RetryFailed(ctx context.Context, id, owner, token string, expiry time.Time) (*Job, error) {
	j, err := m.owned(ctx, id, owner, func(j *Job) error {
		if j.Active() || j.Status == StatusDraft || j.Counts().Failed == 0 {
			return ErrState
		}
		for i := range j.Items {
			if j.Items[i].Status == ItemFailed {
				j.Items[i].Status, j.Items[i].Error, j.Items[i].Problem = ItemPending, "", i18n.Message{}
			}
		}
		j.Status, j.CancelRequested, j.EndedAt, j.Token, j.TokenExpiry = StatusQueued, false, time.Time{}, token, expiry
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.claim(id)
	return j, nil
}

// HandOverToken gives the owner's fresh access token to their job (called on each of the
// owner's requests to the job), which resumes it when it waits for a sign-in.
func (m *Manager) HandOverToken(ctx context.Context, id, owner, token string, expiry time.Time) error {
	_, err := m.owned(ctx, id, owner, func(j *Job) error {
		// The same token again changes nothing (a refused token stays refused: the job waits).
		if !j.Active() || token == "" || j.Token == token {
			return store.ErrSkip
		}
		j.Token, j.TokenExpiry, j.WaitingForSignIn = token, expiry, false
		return nil
	})
	if errors.Is(err, ErrState) {
		return nil
	}
	return err
}

// resetRunning puts items that were in flight back to pending (their outcome is checked when
// the job runs again).
func resetRunning(j *Job) {
	for i := range j.Items {
		if j.Items[i].Status == ItemRunning {
			j.Items[i].Status = ItemPending
		}
	}
}

// scan picks up every job that is active and held by no live runner.
func (m *Manager) scan() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys, err := m.opts.Store.Keys(ctx, keyPrefix)
	if err != nil {
		m.opts.Logger.Warn("jobs: scan failed", slog.Any("err", err))
		return
	}
	for _, k := range keys {
		j, err := m.load(ctx, k[len(keyPrefix):])
		if err != nil || !j.Active() || (j.Lease != "" && m.now().Before(j.LeaseUntil)) {
			continue
		}
		m.claim(j.ID)
	}
}

// claim takes the job's lease when it is free and starts its runner on this replica.
func (m *Manager) claim(id string) {
	m.mu.Lock()
	if m.closed || m.running[id] != nil {
		m.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.running[id] = cancel
	m.mu.Unlock()
	release := func() {
		m.mu.Lock()
		delete(m.running, id)
		m.mu.Unlock()
		cancel()
	}
	j, err := m.update(ctx, id, func(j *Job) error {
		if !j.Active() || (j.Lease != "" && j.Lease != m.replicaID && m.now().Before(j.LeaseUntil)) {
			return ErrState
		}
		if j.Lease != "" || j.Status == StatusRunning || j.Interrupted {
			j.Resumes++ // another runner (or this process before a restart) had it
		}
		j.Interrupted = false
		j.Lease, j.LeaseUntil, j.Status = m.replicaID, m.now().Add(leaseTerm), StatusRunning
		return nil
	})
	if err != nil {
		release()
		if !errors.Is(err, ErrState) && !errors.Is(err, ErrNotFound) {
			m.opts.Logger.Warn("jobs: claim failed", slog.String("job", id), slog.Any("err", err))
		}
		return
	}
	m.wg.Go(func() {
		defer release()
		r := &runner{m: m, job: j, stopping: ctx}
		r.run()
	})
}

// runner runs one job on this replica.
type runner struct {
	m        *Manager
	stopping context.Context // cancelled by Close: stop after the items in flight

	mu        sync.Mutex
	job       *Job
	dirty     bool
	lostLease bool
}

// run dispatches pending items to Concurrency workers and flushes progress until the job ends,
// is cancelled, loses its lease or the manager closes.
func (r *runner) run() {
	log := r.m.opts.Logger.With(slog.String("job", r.job.ID))
	log.Info("batch archive job running", slog.Int("items", len(r.job.Items)), slog.Int("resumes", r.job.Resumes))
	// Items in flight when the job last stopped: verified before archiving again.
	verify := map[int]bool{}
	for i, it := range r.job.Items {
		if it.Status == ItemRunning {
			verify[i] = true
			r.job.Items[i].Status = ItemPending
		}
	}

	work := make(chan int)
	var workers sync.WaitGroup
	for range r.m.opts.Concurrency {
		workers.Go(func() {
			for i := range work {
				r.process(i, verify[i])
			}
		})
	}

	flushTicker := time.NewTicker(flushInterval)
	defer flushTicker.Stop()
	next := 0
	stopped := false
dispatch:
	for {
		r.mu.Lock()
		pause := r.job.CancelRequested || r.job.WaitingForSignIn || r.lostLease
		idx := -1
		if !pause {
			for ; next < len(r.job.Items); next++ {
				if r.job.Items[next].Status == ItemPending {
					idx = next
					break
				}
			}
		}
		if idx >= 0 {
			r.job.Items[idx].Status = ItemRunning
			r.dirty = true
		}
		cancelled, lost := r.job.CancelRequested, r.lostLease
		r.mu.Unlock()
		if cancelled || lost {
			break
		}
		if idx < 0 && !pause {
			break // everything dispatched
		}
		if idx >= 0 {
			// Wait for a free worker, writing progress (and reading a cancel) meanwhile.
			for sent := false; !sent; {
				select {
				case work <- idx:
					sent = true
					next++
				case <-flushTicker.C:
					r.flush(false)
					r.mu.Lock()
					halt := r.job.CancelRequested || r.lostLease
					if halt {
						r.job.Items[idx].Status = ItemPending
					}
					r.mu.Unlock()
					if halt {
						break dispatch
					}
				case <-r.stopping.Done():
					r.mu.Lock()
					r.job.Items[idx].Status = ItemPending
					r.mu.Unlock()
					stopped = true
					break dispatch
				}
			}
			continue
		}
		// Paused (waiting for a token): flush and look again.
		select {
		case <-flushTicker.C:
			r.flush(false)
			if r.waitingAgain() {
				next = 0
			}
		case <-r.stopping.Done():
			stopped = true
			break dispatch
		}
	}
	close(work)
	// Keep the store current while the items in flight finish.
	done := make(chan struct{})
	go func() { workers.Wait(); close(done) }()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-flushTicker.C:
			r.flush(false)
		}
	}
	r.mu.Lock()
	switch {
	case r.lostLease:
	case stopped && !r.job.CancelRequested:
		// Shutting down: the job stays active and is resumed by the next runner.
		r.job.Status, r.job.Interrupted = StatusQueued, true
	case r.job.CancelRequested:
		r.job.Status, r.job.EndedAt = StatusCancelled, r.m.now().UTC()
	default:
		r.job.Status, r.job.EndedAt = StatusFinished, r.m.now().UTC()
	}
	r.dirty = true
	r.mu.Unlock()
	r.flush(true)
	c := r.job.Counts()
	log.Info("batch archive job stopped", slog.String("status", string(r.job.Status)),
		slog.Int("done", c.Done), slog.Int("failed", c.Failed), slog.Int("left", c.Left))
}

// waitingAgain restarts the dispatch scan once a paused job got a new token.
func (r *runner) waitingAgain() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.job.WaitingForSignIn
}

// process archives item i (after checking, for an item that was in flight, whether it is archived).
func (r *runner) process(i int, verify bool) {
	r.mu.Lock()
	number, token := r.job.Items[i].Number, r.job.Token
	r.mu.Unlock()
	// The call finishes even when the manager closes (in-flight items end normally).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.stopping), callTimeout)
	defer cancel()
	var archiveID, note string
	var err error
	if verify {
		var archived bool
		archiveID, archived, err = r.m.opts.Archiver.ArchiveID(ctx, token, number)
		if err == nil && archived {
			note = NoteArchivedBeforeInterruption
		}
	}
	attempted := false
	if err == nil && note == "" {
		attempted = true
		archiveID, err = r.m.opts.Archiver.Archive(ctx, token, number)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	it := &r.job.Items[i]
	if attempted {
		it.Attempts++
	}
	switch {
	case errors.Is(err, ErrTokenRejected):
		it.Status = ItemPending
		if r.job.Token == token {
			r.job.WaitingForSignIn = true
		}
	case err != nil:
		it.Status, it.Error, it.Problem = ItemFailed, err.Error(), problemOf(err)
	default:
		it.Status, it.ArchiveID, it.Error, it.Problem = ItemDone, archiveID, "", i18n.Message{}
		if note != "" {
			it.Note = note
		}
	}
	r.dirty = true
}

// flush writes the runner's items and status, and reads what others changed (cancel, token).
// final releases the lease.
func (r *runner) flush(final bool) {
	r.mu.Lock()
	mine := *r.job
	mine.Items = slices.Clone(r.job.Items)
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stored, err := r.m.update(ctx, mine.ID, func(j *Job) error {
		if j.Lease != r.m.replicaID {
			return ErrState // another runner took over
		}
		cancelRequested, token, expiry, waiting := j.CancelRequested, j.Token, j.TokenExpiry, j.WaitingForSignIn
		tokenChanged := token != mine.Token
		*j = mine
		j.CancelRequested = cancelRequested || mine.CancelRequested
		if tokenChanged {
			j.Token, j.TokenExpiry = token, expiry
			j.WaitingForSignIn = false
		} else {
			j.WaitingForSignIn = mine.WaitingForSignIn || waiting
		}
		if final {
			j.Lease, j.LeaseUntil = "", time.Time{}
		} else {
			j.LeaseUntil = r.m.now().Add(leaseTerm)
		}
		return nil
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case errors.Is(err, ErrState) || errors.Is(err, ErrNotFound):
		r.lostLease = true
	case err != nil:
		r.m.opts.Logger.Warn("jobs: writing progress failed", slog.String("job", mine.ID), slog.Any("err", err))
	default:
		r.job.CancelRequested = stored.CancelRequested
		if stored.Token != r.job.Token {
			r.job.Token, r.job.TokenExpiry, r.job.WaitingForSignIn = stored.Token, stored.TokenExpiry, false
		}
		r.dirty = false
	}
}
