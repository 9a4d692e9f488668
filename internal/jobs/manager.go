package jobs

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/lease"
	"github.com/cpqportal/portal/internal/statedb"
)

// Archiver is what a job needs of the v2 API, with the owner's token per call.
type Archiver interface {
	// Archive archives the contract and returns its archive id and when the v2 API says it was
	// archived (zero when its answer does not say). An error wrapping ErrTokenRejected pauses the
	// job; any other error fails the item with err's message.
	Archive(ctx context.Context, token, number string) (archiveID string, archivedAt time.Time, err error)
	// ArchiveID tells whether the contract is archived already (for items that were in flight
	// when a runner stopped), and its archive id.
	ArchiveID(ctx context.Context, token, number string) (archiveID string, archived bool, err error)
}

const (
	// tokenContext binds a sealed token to its job (the sealer's context is this plus the id).
	tokenContext = "job/"
	// keep is how long an ended job (or a draft) is kept after its last change.
	keep = 30 * 24 * time.Hour
	// defaultLeaseTerm is how long a lease lasts without renewal; every progress write renews it.
	defaultLeaseTerm = 15 * time.Second
	// flushInterval is how often a runner writes its progress (and reads cancel and token).
	flushInterval = 250 * time.Millisecond
	// scanInterval is how often a replica asks the database for jobs to pick up: one indexed
	// query of the active jobs, so replicas do not load the database while idle.
	scanInterval = 2 * time.Second
	// retentionEvery: every so many scans, a replica deletes the jobs past retention.
	retentionEvery = 150
	// scanLimit bounds the jobs one scan picks up.
	scanLimit = 100
	// defaultCallTimeout bounds one archive call when Options.CallTimeout is zero.
	defaultCallTimeout = 30 * time.Second
)

// Options configure a Manager.
type Options struct {
	// DB is the state database that holds the jobs and their lines.
	DB *statedb.DB
	// Archiver runs the archive kind's lines (KindArchive); nil: this manager runs no archive.
	Archiver Archiver
	// Kinds are the other kinds this manager runs, by name (kind.go). A replica picks up only
	// the jobs of the kinds it has.
	Kinds map[string]Kind
	// Concurrency is how many archive calls one job makes at a time (at least 1).
	Concurrency int
	Logger      *slog.Logger
	// Now is the clock of the times shown (created, started, ended); time.Now when nil. Leases
	// never use it: they are compared on the database's clock.
	Now func() time.Time
	// LeaseTerm is how long a runner's lease lasts without a successful progress write (15 s
	// when zero). A runner sends no call after LeaseTerm minus a fifth of it since its last
	// successful write began (its fence, measured on this process's monotonic clock), so another
	// replica taking over after LeaseTerm by the database's clock never races it.
	LeaseTerm time.Duration
	// CallTimeout is the v2 timeout (30 s when zero): it bounds one archive call, and a line taken
	// over from a runner that did not release its lease is read back only after that lease's end
	// plus CallTimeout (that runner's last call can no longer be answered).
	CallTimeout time.Duration
	// ScanInterval is how often the replica looks for jobs to pick up (2 s when zero).
	ScanInterval time.Duration
	// Sealer encrypts the owner's access token in the job's row (session.Sealer, keyed by the
	// session keys); nil keeps it as is (tests only: the portal always sets one).
	Sealer TokenSealer
	// MaxDrafts is how many batches not started one user may keep (DefaultMaxDrafts when zero);
	// MaxActive how many of theirs may be queued or running at once (DefaultMaxActive when zero).
	MaxDrafts, MaxActive int
	// OnChange, when set, is called with a job's id after each change of it is stored (progress,
	// end, cancel), so a page waiting on the job can show it at once (issue 27). It must not block.
	OnChange func(id string)
	// OnEnd, when set, is called once a job's end (finished, cancelled, stopped) is stored, with
	// the job as it ended (its lines, Counts): the inbox tells its owner (internal/inbox). It runs
	// on the runner's goroutine after the lease is released; a process that dies in between does
	// not call it. It should not block for long.
	OnEnd func(ctx context.Context, j *Job)
	// Effects, when set, is told of every line whose call took effect (kind.go, Effects): the one
	// way a kind's change reaches the rest of the portal (the work index follows a batch archive).
	Effects Effects
}

// TokenSealer encrypts a job's token at rest, bound to the job's id.
type TokenSealer interface {
	Seal(plain, context string) (string, error)
	Open(sealed, context string) (string, error)
}

// sealToken is the token as stored in job id's row, and its fingerprint (to tell the same token
// handed over again without opening the stored one).
func (m *Manager) sealToken(id, token string) (sealed, fingerprint string, err error) {
	if token == "" {
		return "", "", nil
	}
	sum := sha256.Sum256([]byte(token))
	fingerprint = hex.EncodeToString(sum[:12])
	if m.opts.Sealer == nil {
		return token, fingerprint, nil
	}
	sealed, err = m.opts.Sealer.Seal(token, tokenContext+id)
	if err != nil {
		return "", "", fmt.Errorf("jobs: seal token: %w", err)
	}
	return sealed, fingerprint, nil
}

// openToken is the token of job id's row, ready for a call.
func (m *Manager) openToken(id, stored string) (string, error) {
	if m.opts.Sealer == nil || stored == "" {
		return stored, nil
	}
	return m.opts.Sealer.Open(stored, tokenContext+id)
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

// Manager creates jobs, runs the ones it holds the lease of, and answers their state.
type Manager struct {
	opts      Options
	db        *statedb.DB
	kinds     map[string]Kind
	replicaID string
	now       func() time.Time

	mu      sync.Mutex
	running map[string]context.CancelFunc
	closed  bool
	loop    lease.Loop
	wg      sync.WaitGroup
	scans   int

	// lineWrites and jobWrites count the rows a runner wrote (tests check they grow linearly).
	lineWrites, jobWrites atomic.Int64
	// beforeWrite, when set (tests), runs before each runner write: a replica that stalls.
	beforeWrite func()
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
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = defaultCallTimeout
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
	return &Manager{opts: opts, db: opts.DB, kinds: kindsOf(opts), replicaID: statedb.NewID(), now: now, running: map[string]context.CancelFunc{}}
}

// Run scans for jobs to pick up (new ones, and ones whose runner stopped) until Close.
func (m *Manager) Run() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed { // under mu: a Close that comes later stops the loop
		m.loop.Start(m.opts.ScanInterval, func(context.Context) { m.scan() })
	}
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
	for _, cancel := range m.running {
		cancel()
	}
	m.mu.Unlock()
	m.loop.Close() // after the scan in flight, whose claims find the manager closed
	m.wg.Wait()
}

func (m *Manager) changed(id string) {
	if m.opts.OnChange != nil {
		m.opts.OnChange(id)
	}
}

func (m *Manager) nowMicros() int64 { return statedb.Micros(m.now().UTC()) }

// count runs a COUNT query.
func count(ctx context.Context, q queryer, query string, args ...any) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("jobs: count: %w", err)
	}
	return n, nil
}

// Create stores a draft batch archive of items (already validated: rejected items carry their
// problem). It refuses a list with no line to archive (ErrNothingToArchive) and a user with
// MaxDrafts drafts (*QuotaError).
func (m *Manager) Create(ctx context.Context, owner, ownerName string, items []Item) (*Job, error) {
	return m.CreateKind(ctx, KindArchive, owner, ownerName, items)
}

// CreateKind stores a draft job of the kind with items (each with the kind's Payload; rejected
// items carry their problem). It refuses a list with no pending line (ErrNothingToArchive) and a
// user with MaxDrafts drafts of any kind (*QuotaError). The quotas count every kind together.
func (m *Manager) CreateKind(ctx context.Context, kind, owner, ownerName string, items []Item) (*Job, error) {
	if !slices.ContainsFunc(items, func(it Item) bool { return it.Status == ItemPending }) {
		return nil, ErrNothingToArchive
	}
	now := m.now().UTC()
	j := &Job{ID: statedb.NewID(), Kind: kind, Owner: owner, OwnerName: ownerName, CreatedAt: now, UpdatedAt: now, Status: StatusDraft, Items: items}
	err := m.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := m.db.LockKey(ctx, tx, "jobs-owner:"+owner); err != nil {
			return err
		}
		drafts, err := count(ctx, tx, `SELECT COUNT(*) FROM jobs WHERE owner = $1 AND status = $2`, owner, string(StatusDraft))
		if err != nil {
			return err
		}
		if drafts >= m.opts.MaxDrafts {
			return &QuotaError{i18n.M("batch.quota.drafts", strconv.Itoa(m.opts.MaxDrafts))}
		}
		if err := insertJob(ctx, tx, j); err != nil {
			return err
		}
		return insertLines(ctx, tx, j.ID, items)
	})
	if err != nil {
		var quota *QuotaError
		if errors.As(err, &quota) {
			return nil, err
		}
		return nil, fmt.Errorf("jobs: create: %w", err)
	}
	return j, nil
}

// checkActiveQuota refuses to queue one more of the owner's jobs when MaxActive of theirs are
// queued or running.
func (m *Manager) checkActiveQuota(ctx context.Context, tx *sql.Tx, owner string) error {
	if err := m.db.LockKey(ctx, tx, "jobs-owner:"+owner); err != nil {
		return err
	}
	active, err := count(ctx, tx, `SELECT COUNT(*) FROM jobs WHERE owner = $1 AND status IN ('queued', 'running')`, owner)
	if err != nil {
		return err
	}
	if active >= m.opts.MaxActive {
		return &QuotaError{i18n.M("batch.quota.running", strconv.Itoa(m.opts.MaxActive))}
	}
	return nil
}

// GetKind returns the owner's job of the kind with its lines (ErrNotFound for someone else's, and
// for a job of another kind).
func (m *Manager) GetKind(ctx context.Context, kind, id, owner string) (*Job, error) {
	j, err := m.Get(ctx, id, owner)
	if err != nil {
		return nil, err
	}
	if kindOf(j) != kind {
		return nil, ErrNotFound
	}
	return j, nil
}

// Get returns the owner's job of any kind with its lines (ErrNotFound for someone else's).
func (m *Manager) Get(ctx context.Context, id, owner string) (*Job, error) {
	var j *Job
	// One transaction: the lines are those of the job row read (no runner write in between).
	err := m.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		if j, err = loadJob(ctx, tx, id, owner); err != nil {
			return err
		}
		j.Items, err = loadLines(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return j, nil
}

// readTx runs fn in one consistent read (statedb.DB.ReadTx).
func (m *Manager) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return m.db.ReadTx(ctx, fn)
}

// List returns the owner's batch archives, newest first, without their lines (Counts is set).
func (m *Manager) List(ctx context.Context, owner string) ([]*Job, error) {
	out, _, err := m.Overview(ctx, owner)
	return out, err
}

// Overview returns the owner's batch archives as List does. The second result named, when jobs
// were one record each in a key-value store, the ids whose record the store had lost; rows of a
// database are not lost one by one, so it is always empty now (kept for the page that lists them).
func (m *Manager) Overview(ctx context.Context, owner string) ([]*Job, []string, error) {
	out, err := m.OverviewKind(ctx, KindArchive, owner)
	return out, nil, err
}

// OverviewKind returns the owner's jobs of the kind, newest first, without their lines (Counts
// is set).
func (m *Manager) OverviewKind(ctx context.Context, kind, owner string) ([]*Job, error) {
	var out []*Job
	err := m.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE owner = $1 AND kind = $2 ORDER BY created_at DESC, id`, owner, kind)
		if err != nil {
			return fmt.Errorf("jobs: list: %w", err)
		}
		byID := map[string]*Job{}
		for rows.Next() {
			j, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("jobs: list: %w", err)
			}
			j.summary = &Counts{}
			out = append(out, j)
			byID[j.ID] = j
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("jobs: list: %w", err)
		}
		if len(out) == 0 {
			return nil
		}
		counts, err := tx.QueryContext(ctx, `SELECT l.job_id, l.status, COUNT(*) FROM job_lines l
			JOIN jobs j ON j.id = l.job_id WHERE j.owner = $1 AND j.kind = $2 GROUP BY l.job_id, l.status`, owner, kind)
		if err != nil {
			return fmt.Errorf("jobs: count lines: %w", err)
		}
		defer counts.Close()
		for counts.Next() {
			var id, status string
			var n int
			if err := counts.Scan(&id, &status, &n); err != nil {
				return fmt.Errorf("jobs: count lines: %w", err)
			}
			c := byID[id]
			if c == nil {
				continue
			}
			s := c.summary
			s.Total += n
			switch ItemStatus(status) {
			case ItemDone:
				s.Done += n
			case ItemFailed:
				s.Failed += n
			case ItemRejected:
				s.Rejected += n
			case ItemRunning:
				s.Running += n
				s.Left += n
			default:
				s.Left += n
			}
		}
		return counts.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ownedTx runs fn on the owner's job row, read and locked in a transaction (ErrNotFound for
// someone else's job), and returns the job as it is after.
func (m *Manager) ownedTx(ctx context.Context, id, owner string, fn func(tx *sql.Tx, j *Job, dbNow int64) error) (*Job, error) {
	err := m.db.Tx(ctx, func(tx *sql.Tx) error {
		var dbNow int64
		j, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobColumns+`, `+m.db.NowMicros()+` FROM jobs WHERE id = $1 AND owner = $2`+m.db.ForUpdate(), id, owner), &dbNow)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("jobs: load %s: %w", id, err)
		}
		return fn(tx, j, dbNow)
	})
	var quota *QuotaError
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrState), errors.As(err, &quota):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("jobs: %s: %w", id, err)
	}
	m.changed(id)
	return m.Get(ctx, id, owner)
}

// Start queues a draft job with the owner's token; this replica tries to run it at once. A user
// with MaxActive jobs queued or running gets a *QuotaError.
func (m *Manager) Start(ctx context.Context, id, owner, token string, expiry time.Time) (*Job, error) {
	sealed, fingerprint, err := m.sealToken(id, token)
	if err != nil {
		return nil, err
	}
	j, err := m.ownedTx(ctx, id, owner, func(tx *sql.Tx, j *Job, _ int64) error {
		if j.Status != StatusDraft {
			return ErrState
		}
		if err := m.checkActiveQuota(ctx, tx, owner); err != nil {
			return err
		}
		now := m.nowMicros()
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET status = 'queued', started_at = $2, updated_at = $2, token = $3,
			token_id = $4, token_expiry = $5 WHERE id = $1`, id, now, tokenBytes(sealed), fingerprint, statedb.Micros(expiry))
		return err
	})
	if err != nil {
		return nil, err
	}
	m.claim(id)
	return j, nil
}

// takeOverSQL is the part of an UPDATE of a job row that takes the job from a runner whose lease
// ran out: its lease version goes up (its writes fail from now on) and the lines it may have sent
// are read back only after its lease's end plus the v2 timeout (param: the placeholder of that
// timeout in µs).
func takeOverSQL(param string) string {
	return `lease_version = lease_version + 1, check_after = CASE WHEN lease_holder <> '' AND lease_expires + ` + param +
		` > check_after THEN lease_expires + ` + param + ` ELSE check_after END`
}

// Cancel asks the job to stop after the items in flight. A job no runner holds stops at once,
// unless lines of it may have been sent: a runner checks those first (no line is called "not
// archived" without that check).
func (m *Manager) Cancel(ctx context.Context, id, owner string) (*Job, error) {
	return m.ownedTx(ctx, id, owner, func(tx *sql.Tx, j *Job, dbNow int64) error {
		if !j.Active() {
			return ErrState
		}
		if j.Lease != "" && statedb.Micros(j.LeaseUntil) >= dbNow {
			// A runner holds it: it reads the request at its next write.
			_, err := tx.ExecContext(ctx, `UPDATE jobs SET cancel_requested = 1, updated_at = $2 WHERE id = $1`, id, m.nowMicros())
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE job_lines SET status = 'pending', maybe_sent = 1 WHERE job_id = $1 AND status = 'running'`, id); err != nil {
			return err
		}
		unverified, err := count(ctx, tx, `SELECT COUNT(*) FROM job_lines WHERE job_id = $1 AND maybe_sent = 1
			AND status IN ('pending', 'running', 'failed')`, id)
		if err != nil {
			return err
		}
		status, ended, token := string(j.Status), int64(0), tokenBytes(j.Token)
		tokenID, expiry := j.TokenID, statedb.Micros(j.TokenExpiry)
		if unverified == 0 {
			status, ended, token, tokenID, expiry = string(StatusCancelled), m.nowMicros(), nil, "", 0
		}
		_, err = tx.ExecContext(ctx, `UPDATE jobs SET cancel_requested = 1, status = $2, ended_at = $3, token = $4,
			token_id = $5, token_expiry = $6, updated_at = $7, `+takeOverSQL("$8")+`, lease_holder = '', lease_expires = 0
			WHERE id = $1`, id, status, ended, token, tokenID, expiry, m.nowMicros(), m.opts.CallTimeout.Microseconds())
		return err
	})
}

// RetryFailed queues the failed items again (only those; items that may have been sent are
// checked first), with the owner's fresh token. A stopped job (its row was lost) resumes its
// pending items too.
func (m *Manager) RetryFailed(ctx context.Context, id, owner, token string, expiry time.Time) (*Job, error) {
	sealed, fingerprint, err := m.sealToken(id, token)
	if err != nil {
		return nil, err
	}
	j, err := m.ownedTx(ctx, id, owner, func(tx *sql.Tx, j *Job, _ int64) error {
		if j.Active() || j.Status == StatusDraft {
			return ErrState
		}
		failed, err := count(ctx, tx, `SELECT COUNT(*) FROM job_lines WHERE job_id = $1 AND status = 'failed'`, id)
		if err != nil {
			return err
		}
		if failed == 0 && j.Status != StatusStopped {
			return ErrState
		}
		if err := m.checkActiveQuota(ctx, tx, owner); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE job_lines SET status = 'pending', maybe_sent = 1 WHERE job_id = $1 AND status = 'running'`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE job_lines SET status = 'pending', error = '', problem = '' WHERE job_id = $1 AND status = 'failed'`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE jobs SET status = 'queued', stop_reason = '', cancel_requested = 0, ended_at = 0,
			waiting_for_sign_in = 0, token = $2, token_id = $3, token_expiry = $4, updated_at = $5 WHERE id = $1`,
			id, tokenBytes(sealed), fingerprint, statedb.Micros(expiry), m.nowMicros())
		return err
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
	if token == "" {
		return nil
	}
	sealed, fingerprint, err := m.sealToken(id, token)
	if err != nil {
		return err
	}
	// The same token again changes nothing (a refused token stays refused: the job waits).
	res, err := m.db.SQL.ExecContext(ctx, `UPDATE jobs SET token = $3, token_id = $4, token_expiry = $5,
		waiting_for_sign_in = 0, updated_at = $6
		WHERE id = $1 AND owner = $2 AND status IN ('queued', 'running') AND token_id <> $4`,
		id, owner, tokenBytes(sealed), fingerprint, statedb.Micros(expiry), m.nowMicros())
	if err != nil {
		return fmt.Errorf("jobs: hand over a token to %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		m.changed(id)
		return nil
	}
	if _, err := loadJob(ctx, m.db.SQL, id, owner); err != nil {
		return err
	}
	return nil
}

// PauseOwner takes the owner's token away from every batch of theirs that still has one (their
// sessions ended: sign-out, back-channel logout, "sign out everywhere", a revoked session): the
// batches pause, waiting for a sign-in, until the owner opens one again with a fresh token.
func (m *Manager) PauseOwner(ctx context.Context, owner string) error {
	var ids []string
	err := m.db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM jobs WHERE owner = $1 AND token IS NOT NULL`, owner)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE jobs SET token = NULL, token_id = '', token_expiry = 0, updated_at = $2,
			waiting_for_sign_in = CASE WHEN status IN ('queued', 'running') THEN 1 ELSE 0 END
			WHERE owner = $1 AND token IS NOT NULL`, owner, m.nowMicros())
		return err
	})
	if err != nil {
		return fmt.Errorf("jobs: pause the batches of a signed-out user: %w", err)
	}
	for _, id := range ids {
		m.changed(id)
	}
	return nil
}

// scan picks up the jobs no live runner holds: queued ones, and running ones whose lease ran out
// by the database's clock (one query on the index of active jobs); now and then it deletes the
// jobs past retention.
func (m *Manager) scan() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.scans++
	if m.scans%retentionEvery == 1 {
		if _, err := m.db.SQL.ExecContext(ctx, `DELETE FROM jobs WHERE updated_at < $1 AND status NOT IN ('queued', 'running')`,
			statedb.Micros(m.now().Add(-keep))); err != nil {
			m.opts.Logger.Warn("jobs: deleting the jobs past retention failed", slog.Any("err", err))
		}
	}
	names := m.kindNames()
	if len(names) == 0 {
		return // this replica runs no kind (a manager that only stores and reads jobs)
	}
	args := []any{m.replicaID}
	in := ""
	for i, name := range names {
		if i > 0 {
			in += ", "
		}
		args = append(args, name)
		in += "$" + strconv.Itoa(len(args))
	}
	rows, err := m.db.SQL.QueryContext(ctx, `SELECT id FROM jobs WHERE status IN ('queued', 'running')
		AND (lease_holder = '' OR lease_holder = $1 OR lease_expires < `+m.db.NowMicros()+`) AND kind IN (`+in+`)
		ORDER BY lease_expires, id LIMIT `+strconv.Itoa(scanLimit), args...)
	if err != nil {
		m.opts.Logger.Warn("jobs: scan failed", slog.Any("err", err))
		return
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err == nil {
			ids = append(ids, id)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		m.opts.Logger.Warn("jobs: scan failed", slog.Any("err", err))
	}
	for _, id := range ids {
		m.claim(id)
	}
}

// Import stores a job as it is, with its lines (a test's, or one carried over from an earlier
// portal); an id that is stored already is refused (ErrState).
func (m *Manager) Import(ctx context.Context, j *Job) error {
	var stored bool
	err := m.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		stored, err = ImportTx(ctx, tx, j)
		return err
	})
	if err != nil {
		return fmt.Errorf("jobs: import %s: %w", j.ID, err)
	}
	if !stored {
		return fmt.Errorf("jobs: import %s: %w", j.ID, ErrState)
	}
	return nil
}

// ImportTx stores a job as it is, with its lines, in tx, unless a job of its id is stored
// already (false: the row the new portal wrote wins): the one-time import of an upgrade
// (internal/stateimport) reads the previous version's job records, which are Job in JSON. Its
// lease, when it names one, is kept: a runner takes the job over only after it, and reads back the
// lines that may have been sent only after it plus the v2 timeout, as from any holder that did
// not release its lease. The sealed token stays valid: it is bound to the job's id the same way.
func ImportTx(ctx context.Context, tx *sql.Tx, j *Job) (bool, error) {
	if !statedb.ValidID(j.ID) || j.Owner == "" {
		return false, fmt.Errorf("jobs: import: a job needs an id and an owner")
	}
	if _, err := loadJob(ctx, tx, j.ID, ""); !errors.Is(err, ErrNotFound) {
		return false, err
	}
	if err := insertJob(ctx, tx, j); err != nil {
		return false, err
	}
	if err := insertLines(ctx, tx, j.ID, j.Items); err != nil {
		return false, err
	}
	return true, nil
}

// UpdatedAt is when the owner's job last changed (any write, a lease renewal included): a page
// waiting for a change reads this one value and loads the job's lines only when it moved.
func (m *Manager) UpdatedAt(ctx context.Context, id, owner string) (time.Time, error) {
	var updated int64
	err := m.db.SQL.QueryRowContext(ctx, `SELECT updated_at FROM jobs WHERE id = $1 AND owner = $2`, id, owner).Scan(&updated)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, ErrNotFound
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("jobs: %s: %w", id, err)
	}
	return statedb.Time(updated), nil
}
