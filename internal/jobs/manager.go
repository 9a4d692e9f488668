package jobs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
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
	// activePrefix indexes the jobs that have work to do (queued or running): replicas look for
	// work there instead of decoding every job record.
	activePrefix = "jobs-active/"
	// ownerPrefix indexes each user's jobs (jobs-owner/<hash of the subject>/<id>): a user's list
	// and quotas read their own records only.
	ownerPrefix = "jobs-owner/"
	// keep is how long a job is kept after its last change.
	keep = 30 * 24 * time.Hour
	// defaultLeaseTerm is how long a lease lasts without renewal; every progress write renews it.
	defaultLeaseTerm = 15 * time.Second
	// flushInterval is how often a runner writes its progress (and reads cancel and token).
	flushInterval = 250 * time.Millisecond
	// scanInterval is how often a replica looks for jobs to pick up in the index.
	scanInterval = 2 * time.Second
	// sweepEvery: every so many scans, a replica decodes every job record to repair the index
	// (an index entry can be lost to a race between a retry and the clean-up of a finished job).
	sweepEvery = 30
	// callTimeout bounds one archive call (the lease's fence may end it sooner).
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
	// LeaseTerm is how long a runner's lease lasts without a successful progress write (15 s
	// when zero). A runner sends no call after LeaseTerm minus a fifth of it since its last
	// successful write (its fence), so another replica taking over after LeaseTerm never races it.
	LeaseTerm time.Duration
	// ScanInterval is how often the replica looks for jobs to pick up (2 s when zero).
	ScanInterval time.Duration
	// Sealer encrypts the owner's access token in the job record (session.Sealer, keyed by the
	// session keys); nil keeps it as is (tests only: the portal always sets one).
	Sealer TokenSealer
	// MaxDrafts is how many batches not started one user may keep (DefaultMaxDrafts when zero);
	// MaxActive how many of theirs may be queued or running at once (DefaultMaxActive when zero).
	MaxDrafts, MaxActive int
	// OnChange, when set, is called with a job's id after each change of it is stored (progress,
	// end, cancel), so a page waiting on the job can show it at once (issue 27). It must not block.
	OnChange func(id string)
}

// TokenSealer encrypts a job's token at rest, bound to the job's id.
type TokenSealer interface {
	Seal(plain, context string) (string, error)
	Open(sealed, context string) (string, error)
}

// sealToken is the token as stored in job id's record, and its fingerprint (to tell the same
// token handed over again without opening the stored one).
func (m *Manager) sealToken(id, token string) (sealed, fingerprint string, err error) {
	if token == "" {
		return "", "", nil
	}
	sum := sha256.Sum256([]byte(token))
	fingerprint = hex.EncodeToString(sum[:12])
	if m.opts.Sealer == nil {
		return token, fingerprint, nil
	}
	sealed, err = m.opts.Sealer.Seal(token, keyPrefix+id)
	if err != nil {
		return "", "", fmt.Errorf("jobs: seal token: %w", err)
	}
	return sealed, fingerprint, nil
}

// openToken is the token of job id's record, ready for a call.
func (m *Manager) openToken(id, stored string) (string, error) {
	if m.opts.Sealer == nil || stored == "" {
		return stored, nil
	}
	return m.opts.Sealer.Open(stored, keyPrefix+id)
}

// Default per-user quotas (docs/backoffice.md).
const (
	DefaultMaxDrafts = 20
	DefaultMaxActive = 3
)

// QuotaError is a user's quota reached; Message tells them, translated where shown.
type QuotaError struct{ Message i18n.Message }

func (e *QuotaError) Error() string {
	return fmt.Sprintf("jobs: quota reached: %s %v", e.Message.Key, e.Message.Args)
}

// ownerKey is the index entry of the owner's job.
func ownerKey(owner, id string) string { return ownerPrefix + ownerHash(owner) + "/" + id }

func ownerHash(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:16])
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
	scans   int
}

// NewManager returns a Manager; call Run to pick up and run jobs, Close to stop.
func NewManager(opts Options) *Manager {
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.LeaseTerm <= 0 {
		opts.LeaseTerm = defaultLeaseTerm
	}
	if opts.ScanInterval <= 0 {
		opts.ScanInterval = scanInterval
	}
	if opts.MaxDrafts <= 0 {
		opts.MaxDrafts = DefaultMaxDrafts
	}
	if opts.MaxActive <= 0 {
		opts.MaxActive = DefaultMaxActive
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
		ticker := time.NewTicker(m.opts.ScanInterval)
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

// Create stores a draft job of items (already validated: rejected items carry their problem). It
// refuses a list with no line to archive (ErrNothingToArchive) and a user with MaxDrafts drafts
// (*QuotaError).
func (m *Manager) Create(ctx context.Context, owner, ownerName string, items []Item) (*Job, error) {
	if !slices.ContainsFunc(items, func(it Item) bool { return it.Status == ItemPending }) {
		return nil, ErrNothingToArchive
	}
	mine, err := m.List(ctx, owner)
	if err != nil {
		return nil, err
	}
	drafts := 0
	for _, j := range mine {
		if j.Status == StatusDraft {
			drafts++
		}
	}
	if drafts >= m.opts.MaxDrafts {
		return nil, &QuotaError{i18n.M("batch.quota.drafts", strconv.Itoa(m.opts.MaxDrafts))}
	}
	now := m.now().UTC()
	j := &Job{ID: randomID(), Owner: owner, OwnerName: ownerName, CreatedAt: now, UpdatedAt: now, Status: StatusDraft, Items: items}
	raw, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	if err := m.opts.Store.Put(ctx, ownerKey(owner, j.ID), []byte{'1'}, keep); err != nil {
		return nil, fmt.Errorf("jobs: create: %w", err)
	}
	if err := m.opts.Store.Put(ctx, keyPrefix+j.ID, raw, keep); err != nil {
		return nil, fmt.Errorf("jobs: create: %w", err)
	}
	return j, nil
}

// checkActiveQuota refuses to queue one more of the owner's jobs when MaxActive of theirs are
// queued or running.
func (m *Manager) checkActiveQuota(ctx context.Context, owner string) error {
	mine, err := m.List(ctx, owner)
	if err != nil {
		return err
	}
	active := 0
	for _, j := range mine {
		if j.Active() {
			active++
		}
	}
	if active >= m.opts.MaxActive {
		return &QuotaError{i18n.M("batch.quota.running", strconv.Itoa(m.opts.MaxActive))}
	}
	return nil
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

// List returns the owner's jobs, newest first (through the owner's index: other users' records
// are not read).
func (m *Manager) List(ctx context.Context, owner string) ([]*Job, error) {
	out, _, err := m.Overview(ctx, owner)
	return out, err
}

// Overview returns the owner's jobs as List does, and the ids their own index still names whose
// record is gone (sorted). The index entry is written before the record and, but for the sweep
// that repairs the index, expires no later than it, so such an id is a batch whose record the
// store lost (or, rarely, one that just expired): its owner sees it listed as no longer known
// instead of losing it silently. The entry is left to expire on its own.
func (m *Manager) Overview(ctx context.Context, owner string) ([]*Job, []string, error) {
	prefix := ownerPrefix + ownerHash(owner) + "/"
	keys, err := m.opts.Store.Keys(ctx, prefix)
	if err != nil {
		return nil, nil, err
	}
	var out []*Job
	var lost []string
	for _, k := range keys {
		id := k[len(prefix):]
		j, err := m.load(ctx, id)
		if errors.Is(err, ErrNotFound) {
			if ValidID(id) {
				lost = append(lost, id)
			}
			continue
		}
		if err != nil || j.Owner != owner {
			continue
		}
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].CreatedAt.After(out[b].CreatedAt) })
	sort.Strings(lost)
	return out, lost, nil
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

// Start queues a draft job with the owner's token; this replica tries to run it at once. A user
// with MaxActive jobs queued or running gets a *QuotaError.
func (m *Manager) Start(ctx context.Context, id, owner, token string, expiry time.Time) (*Job, error) {
	if err := m.checkActiveQuota(ctx, owner); err != nil {
		return nil, err
	}
	sealed, fingerprint, err := m.sealToken(id, token)
	if err != nil {
		return nil, err
	}
	j, err := m.owned(ctx, id, owner, func(j *Job) error {
		if j.Status != StatusDraft {
			return ErrState
		}
		j.Status, j.StartedAt, j.Token, j.TokenID, j.TokenExpiry = StatusQueued, m.now().UTC(), sealed, fingerprint, expiry
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.markActive(ctx, id)
	m.claim(id)
	return j, nil
}

// Cancel asks the job to stop after the items in flight. A job no runner holds stops at once,
// unless lines of it may have been sent: a runner checks those first (no line is called "not
// archived" without that check).
func (m *Manager) Cancel(ctx context.Context, id, owner string) (*Job, error) {
	return m.owned(ctx, id, owner, func(j *Job) error {
		if !j.Active() {
			return ErrState
		}
		j.CancelRequested = true
		if j.Lease == "" || m.now().After(j.LeaseUntil) {
			resetRunning(j)
			if j.Unverified() == 0 {
				j.Status, j.EndedAt, j.Token, j.TokenID, j.TokenExpiry = StatusCancelled, m.now().UTC(), "", "", time.Time{}
			}
		}
		return nil
	})
}

// RetryFailed queues the failed items again (only those; items that may have been sent are
// checked first), with the owner's fresh token. A stopped job (its record was lost) resumes its
// pending items too.
func (m *Manager) RetryFailed(ctx context.Context, id, owner, token string, expiry time.Time) (*Job, error) {
	if err := m.checkActiveQuota(ctx, owner); err != nil {
		return nil, err
	}
	sealed, fingerprint, err := m.sealToken(id, token)
	if err != nil {
		return nil, err
	}
	j, err := m.owned(ctx, id, owner, func(j *Job) error {
		if j.Active() || j.Status == StatusDraft || (j.Counts().Failed == 0 && j.Status != StatusStopped) {
			return ErrState
		}
		resetRunning(j)
		j.StopReason = ""
		for i := range j.Items {
			if j.Items[i].Status == ItemFailed {
				j.Items[i].Status, j.Items[i].Error, j.Items[i].Problem = ItemPending, "", i18n.Message{}
			}
		}
		j.Status, j.CancelRequested, j.EndedAt, j.Token, j.TokenID, j.TokenExpiry = StatusQueued, false, time.Time{}, sealed, fingerprint, expiry
		j.WaitingForSignIn = false
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.markActive(ctx, id)
	m.claim(id)
	return j, nil
}

// HandOverToken gives the owner's fresh access token to their job (called on each of the
// owner's requests to the job), which resumes it when it waits for a sign-in.
func (m *Manager) HandOverToken(ctx context.Context, id, owner, token string, expiry time.Time) error {
	if token == "" {
		return nil
	}
	sealed, fingerprint, err := m.sealToken(id, token)
	if err != nil {
		return err
	}
	_, err = m.owned(ctx, id, owner, func(j *Job) error {
		// The same token again changes nothing (a refused token stays refused: the job waits).
		if !j.Active() || j.TokenID == fingerprint {
			return store.ErrSkip
		}
		j.Token, j.TokenID, j.TokenExpiry, j.WaitingForSignIn = sealed, fingerprint, expiry, false
		return nil
	})
	if errors.Is(err, ErrState) {
		return nil
	}
	return err
}

// PauseOwner takes the owner's token away from every batch of theirs that still has work (their
// sessions ended: sign-out, back-channel logout, "sign out everywhere", a revoked session): the
// batches pause, waiting for a sign-in, until the owner opens one again with a fresh token.
func (m *Manager) PauseOwner(ctx context.Context, owner string) error {
	mine, err := m.List(ctx, owner)
	if err != nil {
		return fmt.Errorf("jobs: pause the batches of a signed-out user: %w", err)
	}
	var errs []error
	for _, j := range mine {
		if !j.Active() && j.Token == "" {
			continue
		}
		_, err := m.update(ctx, j.ID, func(j *Job) error {
			if j.Owner != owner || j.Token == "" {
				return store.ErrSkip
			}
			j.Token, j.TokenID, j.TokenExpiry = "", "", time.Time{}
			j.WaitingForSignIn = j.Active()
			return nil
		})
		if err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resetRunning puts items that were claimed (in flight, or about to be) back to pending; they
// keep MaybeSent, so their outcome is checked before they are archived again.
func resetRunning(j *Job) {
	for i := range j.Items {
		if j.Items[i].Status == ItemRunning {
			j.Items[i].Status, j.Items[i].MaybeSent = ItemPending, true
		}
	}
}

// markActive adds the job to the index of active jobs (a failure is repaired by the sweep).
func (m *Manager) markActive(ctx context.Context, id string) {
	if err := m.opts.Store.Put(ctx, activePrefix+id, []byte{'1'}, keep); err != nil {
		m.opts.Logger.Warn("jobs: indexing an active job failed", slog.String("job", id), slog.Any("err", err))
	}
}

// scan picks up every job of the active index that no live runner holds; every sweepEvery scans
// it decodes every job record instead, to repair the index.
func (m *Manager) scan() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.scans++
	sweep := m.scans%sweepEvery == 1
	prefix := activePrefix
	if sweep {
		prefix = keyPrefix
	}
	keys, err := m.opts.Store.Keys(ctx, prefix)
	if err != nil {
		m.opts.Logger.Warn("jobs: scan failed", slog.Any("err", err))
		return
	}
	for _, k := range keys {
		id := k[len(prefix):]
		j, err := m.load(ctx, id)
		if sweep && err == nil {
			// Jobs stored before the owner index existed join it (read first: a sweep writes
			// only what is missing).
			if _, err := m.opts.Store.Get(ctx, ownerKey(j.Owner, id)); errors.Is(err, store.ErrNotFound) {
				_ = m.opts.Store.Put(ctx, ownerKey(j.Owner, id), []byte{'1'}, keep)
			}
		}
		switch {
		case errors.Is(err, ErrNotFound) || (err == nil && !j.Active()):
			if !sweep {
				_ = m.opts.Store.Delete(ctx, k) // ended (or expired): out of the index
			}
			continue
		case err != nil:
			continue
		}
		if sweep {
			m.markActive(ctx, id)
		}
		if j.Lease != "" && m.now().Before(j.LeaseUntil) {
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
	written := m.now()
	j, err := m.update(ctx, id, func(j *Job) error {
		if !j.Active() || (j.Lease != "" && j.Lease != m.replicaID && m.now().Before(j.LeaseUntil)) {
			return ErrState
		}
		if j.Lease != "" || j.Status == StatusRunning || j.Interrupted {
			j.Resumes++ // another runner (or this process before a restart) had it
		}
		// Lines claimed by the runner before: they may have been sent.
		resetRunning(j)
		j.Interrupted = false
		j.Lease, j.LeaseUntil, j.Status = m.replicaID, m.now().Add(m.opts.LeaseTerm), StatusRunning
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
		r := &runner{m: m, job: j, stopping: ctx, fence: m.fenceAfter(written)}
		r.run()
	})
}

// fenceAfter is the moment until which a runner whose lease was written at written may send
// calls: a fifth of the lease before anyone else may take it over.
func (m *Manager) fenceAfter(written time.Time) time.Time {
	return written.Add(m.opts.LeaseTerm - m.opts.LeaseTerm/5)
}

// halt is why a runner stopped dispatching.
type halt int

const (
	running       halt = iota
	haltStopping       // the manager closes: the job is resumed by the next runner
	haltLostLease      // another runner took the job over: this one writes nothing more
	haltStoreDown      // a progress write failed: send nothing until the record is current again
	haltVanished       // the job's record is gone from the store
)

// runner runs one job on this replica.
type runner struct {
	m        *Manager
	stopping context.Context // cancelled by Close: stop after the items in flight

	mu    sync.Mutex
	job   *Job
	fence time.Time // no call is sent from this moment (the lease may be someone else's)
	// unchecked are lines of a cancelled job whose check failed in this run: not tried again
	// (they stay pending and MaybeSent, shown as not verified).
	unchecked map[int]bool
}

// run claims the next lines in one store write (write-ahead: status running, MaybeSent) before
// sending their calls, at most Concurrency at a time, until no line is pending, the job is
// cancelled, the lease is lost, a write fails or the manager closes. Lines that may have been
// sent before are checked with the contract read first; a cancelled job still checks them.
func (r *runner) run() {
	log := r.m.opts.Logger.With(slog.String("job", r.job.ID))
	log.Info("batch archive job running", slog.Int("items", len(r.job.Items)), slog.Int("resumes", r.job.Resumes))
	concurrency := r.m.opts.Concurrency
	var ready []claimed // claimed in the store, not yet sent
	inFlight := 0
	done := make(chan struct{}, concurrency)
	flushTicker := time.NewTicker(flushInterval)
	defer flushTicker.Stop()
	state := running
	for {
		r.mu.Lock()
		cancelled, waiting := r.job.CancelRequested, r.job.WaitingForSignIn
		r.mu.Unlock()
		if state == running && r.stopping.Err() != nil {
			state = haltStopping
		}
		if state != running || waiting {
			// Claimed lines not sent go back to pending (still MaybeSent in the store: checked
			// before any call, which is harmless).
			r.unclaim(ready)
			ready = nil
		}
		if state == running && !waiting && len(ready) == 0 && inFlight < concurrency {
			picked := r.pick(concurrency, cancelled)
			if len(picked) > 0 {
				if err := r.flush(false); err != nil {
					r.unclaim(picked)
					state = r.haltFor(err, log)
				} else {
					ready = picked
				}
			}
		}
		for state == running && len(ready) > 0 && inFlight < concurrency {
			next := ready[0]
			ready = ready[1:]
			inFlight++
			go func() {
				r.process(next, cancelled)
				done <- struct{}{}
			}()
		}
		if inFlight == 0 && len(ready) == 0 && (state != running || !r.hasWork(cancelled)) {
			break
		}
		select {
		case <-done:
			inFlight--
		case <-flushTicker.C:
			if state == running || state == haltStopping {
				if err := r.flush(false); err != nil && state == running {
					state = r.haltFor(err, log)
				}
			}
		case <-r.stopping.Done():
			if state == running {
				state = haltStopping
			}
		}
	}
	r.finish(state, log)
}

// haltFor is the halt a failed write calls for.
func (r *runner) haltFor(err error, log *slog.Logger) halt {
	switch {
	case errors.Is(err, ErrNotFound):
		log.Error("batch archive job: its record vanished from the store; stopping", slog.Any("err", err))
		return haltVanished
	case errors.Is(err, ErrState):
		log.Warn("batch archive job: another runner holds it now; stopping")
		return haltLostLease
	default:
		log.Error("batch archive job: writing progress failed; sending nothing more", slog.Any("err", err))
		return haltStoreDown
	}
}

// claimed is a line claimed for sending; check tells whether it may have been sent before (so
// it is checked first).
type claimed struct {
	index int
	check bool
}

// pick marks up to n pending lines as claimed (running, MaybeSent) in memory; the caller writes
// them before sending. A cancelled job picks only lines that may have been sent (to check them).
func (r *runner) pick(n int, cancelled bool) []claimed {
	r.mu.Lock()
	defer r.mu.Unlock()
	var picked []claimed
	for i := range r.job.Items {
		if len(picked) == n {
			break
		}
		it := &r.job.Items[i]
		if it.Status != ItemPending || (cancelled && (!it.MaybeSent || r.unchecked[i])) {
			continue
		}
		picked = append(picked, claimed{index: i, check: it.MaybeSent})
		it.Status, it.MaybeSent = ItemRunning, true
	}
	return picked
}

// unclaim puts claimed lines that were not sent back to pending, as they were.
func (r *runner) unclaim(lines []claimed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range lines {
		if it := &r.job.Items[c.index]; it.Status == ItemRunning {
			it.Status, it.MaybeSent = ItemPending, c.check
		}
	}
}

// hasWork reports whether a line is left to send (to check, when cancelled).
func (r *runner) hasWork(cancelled bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, it := range r.job.Items {
		if it.Status == ItemPending && (!cancelled || (it.MaybeSent && !r.unchecked[i])) {
			return true
		}
	}
	return false
}

// finish writes the job's end state (or its state for the next runner) and releases the lease.
func (r *runner) finish(state halt, log *slog.Logger) {
	r.mu.Lock()
	resetRunning(r.job)
	now := r.m.now().UTC()
	switch {
	case state == haltLostLease:
	case state == haltVanished:
		r.job.Status, r.job.StopReason, r.job.EndedAt = StatusStopped, StopRecordLost, now
	case state == haltStopping || state == haltStoreDown:
		// The job stays active and is resumed by the next runner (after the lease, when this
		// write fails too).
		r.job.Status, r.job.Interrupted = StatusQueued, true
	case r.job.CancelRequested:
		r.job.Status, r.job.EndedAt = StatusCancelled, now
	case r.job.Counts().Left > 0:
		// Waiting for a sign-in with lines left can only end by a halt; never "finished".
		r.job.Status, r.job.Interrupted = StatusQueued, true
	default:
		r.job.Status, r.job.EndedAt = StatusFinished, now
	}
	if !r.job.Active() {
		r.job.Token, r.job.TokenID, r.job.TokenExpiry = "", "", time.Time{} // the batch ended: its token goes
	}
	r.mu.Unlock()
	switch state {
	case haltLostLease:
	case haltVanished:
		r.restore(log)
	default:
		if err := r.flush(true); err != nil {
			log.Warn("batch archive job: its last state could not be written; it resumes after its lease", slog.Any("err", err))
		}
	}
	c := r.job.Counts()
	log.Info("batch archive job stopped", slog.String("status", string(r.job.Status)),
		slog.Int("done", c.Done), slog.Int("failed", c.Failed), slog.Int("left", c.Left), slog.Int("verified", r.job.Verified()))
}

// restore writes the runner's own copy of a job whose record vanished, stopped, so its owner
// sees what happened to every line instead of a missing page.
func (r *runner) restore(log *slog.Logger) {
	r.mu.Lock()
	copyOf := *r.job
	copyOf.Items = slices.Clone(r.job.Items)
	r.mu.Unlock()
	copyOf.Lease, copyOf.LeaseUntil, copyOf.UpdatedAt = "", time.Time{}, r.m.now().UTC()
	raw, err := json.Marshal(&copyOf)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = r.m.opts.Store.Update(ctx, keyPrefix+copyOf.ID, keep, func(old []byte) ([]byte, error) {
			if old != nil {
				return nil, store.ErrSkip // someone wrote it meanwhile: theirs stands
			}
			return raw, nil
		})
	}
	if err != nil {
		log.Error("batch archive job: restoring its vanished record failed", slog.Any("err", err))
	}
}

// process sends the claimed line's call (after checking, for a line that may have been sent
// before, whether the contract is archived now). verifyOnly (a cancelled job) only checks.
func (r *runner) process(c claimed, verifyOnly bool) {
	i := c.index
	r.mu.Lock()
	number, sealed, fence := r.job.Items[i].Number, r.job.Token, r.fence
	r.mu.Unlock()
	token, openErr := r.m.openToken(r.job.ID, sealed)
	if openErr != nil || token == "" {
		// No token (the owner signed out) or one sealed with a key since removed: wait for the
		// owner's next sign-in, send nothing.
		r.mu.Lock()
		r.job.Items[i].Status = ItemPending
		if r.job.Token == sealed {
			r.job.WaitingForSignIn = true
		}
		r.mu.Unlock()
		return
	}
	// The call finishes even when the manager closes (in-flight items end normally), but never
	// after the fence: past it, another runner may own the job.
	ctx, cancel := context.WithDeadline(context.WithoutCancel(r.stopping), minTime(fence, r.m.now().Add(callTimeout)))
	defer cancel()
	fenced := func() bool { return !r.m.now().Before(fence) }
	var archiveID string
	var err error
	verified := false
	if c.check {
		if fenced() {
			r.settle(i, func(it *Item) { it.Status = ItemPending })
			return
		}
		var archived bool
		archiveID, archived, err = r.m.opts.Archiver.ArchiveID(ctx, token, number)
		switch {
		case err == nil && archived:
			r.settle(i, func(it *Item) {
				it.Status, it.ArchiveID, it.Note, it.Verified, it.MaybeSent = ItemDone, archiveID, NoteArchivedBeforeInterruption, true, false
				it.Error, it.Problem = "", i18n.Message{}
			})
			return
		case err == nil:
			verified = true
		}
	}
	sent := false
	switch {
	case err != nil:
	case verifyOnly:
		// Checked and not archived: a cancelled line that was never archived.
		r.settle(i, func(it *Item) { it.Status, it.MaybeSent, it.Verified = ItemPending, false, it.Verified || verified })
		return
	case fenced():
		r.settle(i, func(it *Item) { it.Status, it.Verified = ItemPending, it.Verified || verified })
		return
	default:
		sent = true
		archiveID, err = r.m.opts.Archiver.Archive(ctx, token, number)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	item := &r.job.Items[i]
	item.Verified = item.Verified || verified
	if sent {
		item.Attempts++
	}
	switch {
	case errors.Is(err, ErrTokenRejected):
		item.Status = ItemPending
		if r.job.Token == sealed {
			r.job.WaitingForSignIn = true
		}
	case err != nil && (fenced() || verifyOnly):
		// Cut by the fence, or a check of a cancelled job that failed: the outcome is unknown,
		// the line stays pending and MaybeSent (the next runner, or a retry, checks it).
		item.Status = ItemPending
		if verifyOnly {
			if r.unchecked == nil {
				r.unchecked = map[int]bool{}
			}
			r.unchecked[i] = true
		}
	case err != nil:
		item.Status, item.Error, item.Problem = ItemFailed, err.Error(), problemOf(err)
	default:
		item.Status, item.ArchiveID, item.Error, item.Problem, item.MaybeSent = ItemDone, archiveID, "", i18n.Message{}, false
	}
}

// settle changes item i under the runner's lock.
func (r *runner) settle(i int, fn func(it *Item)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(&r.job.Items[i])
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// flush writes the runner's items and status, and reads what others changed (cancel, token). It
// fails with ErrState when another runner holds the job, ErrNotFound when the record vanished.
// A successful write moves the fence; final releases the lease.
func (r *runner) flush(final bool) error {
	r.mu.Lock()
	mine := *r.job
	mine.Items = slices.Clone(r.job.Items)
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), min(10*time.Second, r.m.opts.LeaseTerm/2))
	defer cancel()
	written := r.m.now()
	stored, err := r.m.update(ctx, mine.ID, func(j *Job) error {
		if j.Lease != r.m.replicaID {
			return ErrState // another runner took over
		}
		cancelRequested, token, tokenID, expiry, waiting := j.CancelRequested, j.Token, j.TokenID, j.TokenExpiry, j.WaitingForSignIn
		tokenChanged := token != mine.Token
		*j = mine
		j.CancelRequested = cancelRequested || mine.CancelRequested
		switch {
		case !j.Active():
			// Ended: the token goes with it.
		case tokenChanged:
			j.Token, j.TokenID, j.TokenExpiry = token, tokenID, expiry
			j.WaitingForSignIn = token == "" // taken away (sign-out): wait for the next sign-in
		default:
			j.WaitingForSignIn = mine.WaitingForSignIn || waiting
		}
		if final {
			j.Lease, j.LeaseUntil = "", time.Time{}
		} else {
			j.LeaseUntil = r.m.now().Add(r.m.opts.LeaseTerm)
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fence = r.m.fenceAfter(written)
	r.job.CancelRequested = stored.CancelRequested
	if stored.Token != r.job.Token && r.job.Active() {
		r.job.Token, r.job.TokenID, r.job.TokenExpiry, r.job.WaitingForSignIn = stored.Token, stored.TokenID, stored.TokenExpiry, stored.WaitingForSignIn
	}
	return nil
}
