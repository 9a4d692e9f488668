package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/statedb"
)

// claim takes the job's lease when it is free (by the database's clock) and starts its runner on
// this replica. The claim raises the lease version: a runner that held the job before writes
// nothing more from now on.
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
	var j *Job
	var checkAfter time.Time
	written := time.Now()
	writeCtx, writeCancel := context.WithTimeout(ctx, 10*time.Second)
	defer writeCancel()
	err := m.db.Tx(writeCtx, func(tx *sql.Tx) error {
		var dbNow int64
		var err error
		j, err = scanJob(tx.QueryRowContext(writeCtx, `SELECT `+jobColumns+`, `+m.db.NowMicros()+` FROM jobs WHERE id = $1`+m.db.ForUpdate(), id), &dbNow)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		leaseExpires := statedb.Micros(j.LeaseUntil)
		if !j.Active() || (j.Lease != "" && j.Lease != m.replicaID && dbNow <= leaseExpires) {
			return ErrState
		}
		if m.kinds[kindOf(j)] == nil {
			return ErrState // a kind this replica does not run: left to the replicas that do
		}
		if j.Lease != "" || j.Status == StatusRunning || j.Interrupted {
			j.Resumes++ // another runner (or this process before a restart) had it
		}
		// A holder that did not release its lease (another replica, or a runner of this process
		// whose last write failed) may have sent a call the v2 API still answers until its lease's
		// end plus the v2 timeout: the lines it may have sent are read back only after that.
		if j.Lease != "" {
			j.checkAfter = max(j.checkAfter, leaseExpires+m.opts.CallTimeout.Microseconds())
		}
		// Lines claimed by the runner before: they may have been sent.
		if _, err := tx.ExecContext(writeCtx, `UPDATE job_lines SET status = 'pending', maybe_sent = 1 WHERE job_id = $1 AND status = 'running'`, id); err != nil {
			return err
		}
		j.leaseVersion++
		if _, err := tx.ExecContext(writeCtx, `UPDATE jobs SET lease_holder = $2, lease_expires = `+m.db.NowMicros()+` + $3,
			lease_version = $4, status = 'running', interrupted = 0, resumes = $5, check_after = $6, updated_at = $7 WHERE id = $1`,
			id, m.replicaID, m.opts.LeaseTerm.Microseconds(), j.leaseVersion, j.Resumes, j.checkAfter, m.nowMicros()); err != nil {
			return err
		}
		m.jobWrites.Add(1)
		j.Lease, j.Status, j.Interrupted = m.replicaID, StatusRunning, false
		checkAfter = written.Add(time.Duration(j.checkAfter-dbNow) * time.Microsecond)
		j.Items, err = loadLines(writeCtx, tx, id)
		return err
	})
	if err != nil {
		release()
		if !errors.Is(err, ErrState) && !errors.Is(err, ErrNotFound) {
			m.opts.Logger.Warn("jobs: claim failed", slog.String("job", id), slog.Any("err", err))
		}
		return
	}
	m.changed(id)
	m.wg.Go(func() {
		defer release()
		r := &runner{m: m, kind: m.kinds[kindOf(j)], job: j, stopping: ctx, fence: m.fenceAfter(written), lastWrite: written, checkAfter: checkAfter, dirty: map[int]bool{}}
		r.run()
	})
}

// fenceAfter is the moment until which a runner whose lease was written at written (this
// process's monotonic clock, read before the write) may send calls: a fifth of the lease before
// anyone else may take it over by the database's clock.
func (m *Manager) fenceAfter(written time.Time) time.Time {
	return written.Add(m.opts.LeaseTerm - m.opts.LeaseTerm/5)
}

// halt is why a runner stopped dispatching.
type halt int

const (
	running       halt = iota
	haltStopping       // the manager closes: the job is resumed by the next runner
	haltLostLease      // another runner took the job over: this one writes nothing more
	haltStoreDown      // a progress write failed: send nothing; the job resumes once the database answers
	haltVanished       // the job's row is gone from the database
)

// runner runs one job on this replica. It holds the job's lines in memory and writes the ones
// that changed (dirty) with each progress write.
type runner struct {
	m        *Manager
	kind     Kind            // what the job's lines do
	stopping context.Context // cancelled by Close: stop after the items in flight

	mu    sync.Mutex
	job   *Job
	dirty map[int]bool // lines changed since the last successful write
	fence time.Time    // no call is sent from this moment (the lease may be someone else's)
	// lastWrite is when the last successful write began (monotonic).
	lastWrite time.Time
	// checkAfter: lines that may have been sent are read back only from then (monotonic); an
	// archive call this runner cut (fence, timeout) moves it to the v2 timeout after the cut.
	checkAfter time.Time
	// unchecked are lines of a cancelled job whose check failed in this run: not tried again
	// (they stay pending and MaybeSent, shown as not verified).
	unchecked map[int]bool
}

// run claims the next lines in one committed write (write-ahead: status running, MaybeSent)
// before sending their calls, at most Concurrency at a time, until no line is pending, the job is
// cancelled, the lease is lost, a write fails or the manager closes. Lines that may have been
// sent before are checked with the contract read first; a cancelled job still checks them.
func (r *runner) run() {
	log := r.m.opts.Logger.With(slog.String("job", r.job.ID), slog.String("kind", kindOf(r.job)))
	log.Info("job running", slog.Int("items", len(r.job.Items)), slog.Int("resumes", r.job.Resumes))
	concurrency := r.m.opts.Concurrency
	var ready []claimed // claimed in the database, not yet sent
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
			// Claimed lines not sent go back to pending (written with the next write).
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
			if (state == running || state == haltStopping) && r.due() {
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

// idleRenewal is how often a runner with nothing to write (waiting for a sign-in, or for the
// moment it may check lines a replica that died may have sent) still writes: to renew its lease
// and read a cancel or a fresh token. Its lease is 15 s; a runner at work writes every 250 ms.
func (r *runner) idleRenewal() time.Duration { return min(r.m.opts.LeaseTerm/3, 2*time.Second) }

// due reports whether the periodic write is due: lines changed, or the idle renewal is.
func (r *runner) due() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.dirty) > 0 || time.Since(r.lastWrite) >= r.idleRenewal()
}

// haltFor is the halt a failed write calls for.
func (r *runner) haltFor(err error, log *slog.Logger) halt {
	switch {
	case errors.Is(err, ErrNotFound):
		log.Error("job: its row vanished from the database; stopping", slog.Any("err", err))
		return haltVanished
	case errors.Is(err, ErrState):
		log.Warn("job: another runner holds it now; stopping")
		return haltLostLease
	default:
		log.Error("job: writing progress failed; sending nothing more until the database answers", slog.Any("err", err))
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
// Lines that may have been sent by a runner whose lease was taken over wait for checkAfter.
func (r *runner) pick(n int, cancelled bool) []claimed {
	r.mu.Lock()
	defer r.mu.Unlock()
	checkable := !time.Now().Before(r.checkAfter)
	var picked []claimed
	for i := range r.job.Items {
		if len(picked) == n {
			break
		}
		it := &r.job.Items[i]
		if it.Status != ItemPending || (cancelled && (!it.MaybeSent || r.unchecked[i])) || (it.MaybeSent && !checkable) {
			continue
		}
		picked = append(picked, claimed{index: i, check: it.MaybeSent})
		it.Status, it.MaybeSent = ItemRunning, true
		r.dirty[i] = true
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
			r.dirty[c.index] = true
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
	for i := range r.job.Items {
		if r.job.Items[i].Status == ItemRunning {
			r.job.Items[i].Status, r.job.Items[i].MaybeSent = ItemPending, true
			r.dirty[i] = true
		}
	}
	now := r.m.now().UTC()
	switch {
	case state == haltLostLease:
	case state == haltVanished:
		r.job.Status, r.job.StopReason, r.job.EndedAt = StatusStopped, StopRecordLost, now
	case state == haltStopping || state == haltStoreDown:
		// The job stays active and is resumed by the next runner (at once once this write
		// passes; after the lease, when it fails too).
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
			log.Warn("job: its last state could not be written; it resumes after its lease", slog.Any("err", err))
		} else if !r.job.Active() && r.m.opts.OnEnd != nil {
			r.mu.Lock()
			ended := *r.job
			ended.Items = slices.Clone(r.job.Items)
			r.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r.m.opts.OnEnd(ctx, &ended)
			cancel()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.job.Counts()
	log.Info("job stopped", slog.String("status", string(r.job.Status)),
		slog.Int("done", c.Done), slog.Int("failed", c.Failed), slog.Int("left", c.Left), slog.Int("verified", r.job.Verified()))
}

// restore writes the runner's own copy of a job whose row vanished, stopped, so its owner sees
// what happened to every line instead of a missing page.
func (r *runner) restore(log *slog.Logger) {
	r.mu.Lock()
	copyOf := *r.job
	copyOf.Items = slices.Clone(r.job.Items)
	r.mu.Unlock()
	copyOf.Lease, copyOf.LeaseUntil, copyOf.UpdatedAt = "", time.Time{}, r.m.now().UTC()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := r.m.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := loadJob(ctx, tx, copyOf.ID, ""); !errors.Is(err, ErrNotFound) {
			return err // someone wrote it meanwhile: theirs stands
		}
		if err := insertJob(ctx, tx, &copyOf); err != nil {
			return err
		}
		return insertLines(ctx, tx, copyOf.ID, copyOf.Items)
	})
	if err != nil {
		log.Error("job: restoring its vanished row failed", slog.Any("err", err))
		return
	}
	r.m.changed(copyOf.ID)
}

// process sends the claimed line's call (after checking, for a line that may have been sent
// before, whether its call took effect already: Kind.Check). verifyOnly (a cancelled job) only
// checks.
func (r *runner) process(c claimed, verifyOnly bool) {
	i := c.index
	r.mu.Lock()
	line, sealed, fence := r.job.Items[i], r.job.Token, r.fence
	r.mu.Unlock()
	token, openErr := r.m.openToken(r.job.ID, sealed)
	if openErr != nil || token == "" {
		// No token (the owner signed out) or one sealed with a key since removed: wait for the
		// owner's next sign-in, send nothing.
		r.mu.Lock()
		r.job.Items[i].Status, r.dirty[i] = ItemPending, true
		if r.job.Token == sealed {
			r.job.WaitingForSignIn = true
		}
		r.mu.Unlock()
		return
	}
	// The call finishes even when the manager closes (in-flight items end normally), but never
	// after the fence: past it, another runner may own the job.
	ctx, cancel := context.WithDeadline(context.WithoutCancel(r.stopping), minTime(fence, time.Now().Add(r.m.opts.CallTimeout)))
	defer cancel()
	ctx = context.WithValue(ctx, ownerKey{}, r.job.Owner)
	fenced := func() bool { return !time.Now().Before(fence) }
	var out Outcome
	var err error
	verified := false
	if c.check {
		if fenced() {
			r.settle(i, func(it *Item) { it.Status = ItemPending })
			return
		}
		var done bool
		out, done, err = r.kind.Check(ctx, token, line)
		switch {
		case err == nil && done:
			r.tellDone(ctx, line, out)
			r.settle(i, func(it *Item) {
				it.Status, it.ArchiveID, it.Result, it.Note, it.Verified, it.MaybeSent = ItemDone, out.ArchiveID, out.Result, out.Note, true, false
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
		// Checked and not done: a cancelled line whose call never took effect.
		r.settle(i, func(it *Item) { it.Status, it.MaybeSent, it.Verified = ItemPending, false, it.Verified || verified })
		return
	case fenced():
		r.settle(i, func(it *Item) { it.Status, it.Verified = ItemPending, it.Verified || verified })
		return
	default:
		sent = true
		out, err = r.kind.Send(ctx, token, line)
		if err == nil {
			r.tellDone(ctx, line, out)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if sent && err != nil && ctx.Err() != nil {
		// Cut before its answer: the v2 API may still carry it out until the v2 timeout has
		// passed, so its check waits for that (here, and in the next runner: finish writes it).
		r.checkAfter = later(r.checkAfter, time.Now().Add(r.m.opts.CallTimeout))
	}
	r.dirty[i] = true
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
		item.Status, item.ArchiveID, item.Result, item.Error, item.Problem, item.MaybeSent = ItemDone, out.ArchiveID, out.Result, "", i18n.Message{}, false
		if out.Note != "" {
			item.Note = out.Note
		}
	}
}

// tellDone tells Options.Effects of a line whose call took effect.
func (r *runner) tellDone(ctx context.Context, line Item, out Outcome) {
	if r.m.opts.Effects == nil {
		return
	}
	r.mu.Lock()
	done := LineDone{Kind: kindOf(r.job), Owner: r.job.Owner, OwnerName: r.job.OwnerName, Item: line, Outcome: out}
	r.mu.Unlock()
	r.m.opts.Effects.LineDone(ctx, done)
}

// settle changes item i under the runner's lock.
func (r *runner) settle(i int, fn func(it *Item)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(&r.job.Items[i])
	r.dirty[i] = true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// dirtyLine is a line to write.
type dirtyLine struct {
	index int
	item  Item
}

// flush writes, in one transaction, the lines that changed and the job's state, renews the lease
// and reads what the owner changed (cancel, token). Every statement names the lease version this
// runner claimed: it fails with ErrState when another runner took the job over, ErrNotFound when
// the row vanished. A successful write moves the fence; final releases the lease.
func (r *runner) flush(final bool) error {
	r.mu.Lock()
	mine, checkAfter := *r.job, r.checkAfter
	mine.Items = nil
	lines := make([]dirtyLine, 0, len(r.dirty))
	for i := range r.dirty {
		lines = append(lines, dirtyLine{i, r.job.Items[i]})
	}
	clear(r.dirty)
	r.mu.Unlock()
	if r.m.beforeWrite != nil {
		r.m.beforeWrite()
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(10*time.Second, r.m.opts.LeaseTerm/2))
	defer cancel()
	written := time.Now()
	var stored struct {
		cancel, waiting bool
		token           []byte
		tokenID         string
		expiry          int64
	}
	var merged Job
	var jobRows int64
	err := r.m.db.Tx(ctx, func(tx *sql.Tx) error {
		jobRows = 0
		// Renew the lease and lock the row (the owner's changes wait for this transaction).
		err := tx.QueryRowContext(ctx, `UPDATE jobs SET lease_expires = `+r.m.db.NowMicros()+` + $3, updated_at = $4
			WHERE id = $1 AND lease_version = $2 AND lease_holder = $5
			RETURNING cancel_requested, waiting_for_sign_in, token, token_id, token_expiry`,
			mine.ID, mine.leaseVersion, r.m.opts.LeaseTerm.Microseconds(), r.m.nowMicros(), r.m.replicaID).
			Scan(&stored.cancel, &stored.waiting, &stored.token, &stored.tokenID, &stored.expiry)
		if errors.Is(err, sql.ErrNoRows) {
			if _, err := loadJob(ctx, tx, mine.ID, ""); err != nil {
				return err // ErrNotFound: the row vanished
			}
			return ErrState // another runner took over
		}
		if err != nil {
			return err
		}
		jobRows++
		merged = mine
		merged.CancelRequested = stored.cancel || mine.CancelRequested
		tokenChanged := string(stored.token) != mine.Token
		switch {
		case !mine.Active():
			// Ended: the token goes with it.
		case tokenChanged:
			merged.Token, merged.TokenID, merged.TokenExpiry = string(stored.token), stored.tokenID, statedb.Time(stored.expiry)
			merged.WaitingForSignIn = len(stored.token) == 0 // taken away (sign-out): wait for the next sign-in
		default:
			merged.WaitingForSignIn = mine.WaitingForSignIn || stored.waiting
		}
		if final || merged.WaitingForSignIn != stored.waiting {
			query := `UPDATE jobs SET status = $3, waiting_for_sign_in = $4, interrupted = $5, ended_at = $6, stop_reason = $7`
			args := []any{mine.ID, mine.leaseVersion, string(merged.Status), b2i(merged.WaitingForSignIn), b2i(merged.Interrupted),
				statedb.Micros(merged.EndedAt), merged.StopReason}
			if final {
				// A check this runner still had to wait for is waited for by the next one too.
				query += `, lease_holder = '', lease_expires = 0, token = $8, token_id = $9, token_expiry = $10,
					check_after = CASE WHEN ` + r.m.db.NowMicros() + ` + $11 > check_after THEN ` + r.m.db.NowMicros() + ` + $11 ELSE check_after END`
				args = append(args, tokenBytes(merged.Token), merged.TokenID, statedb.Micros(merged.TokenExpiry),
					max(time.Until(checkAfter), 0).Microseconds())
			}
			if _, err := tx.ExecContext(ctx, query+` WHERE id = $1 AND lease_version = $2`, args...); err != nil {
				return err
			}
			jobRows++
		}
		if len(lines) == 0 {
			return nil
		}
		stmt, err := tx.PrepareContext(ctx, updateLineSQL)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, l := range lines {
			args, err := updateLineArgs(mine.ID, l.index, l.item)
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		r.mu.Lock()
		for _, l := range lines {
			r.dirty[l.index] = true // written with the next write that passes
		}
		r.mu.Unlock()
		if errors.Is(err, ErrState) || errors.Is(err, ErrNotFound) {
			return err
		}
		return fmt.Errorf("jobs: write the progress of %s: %w", mine.ID, err)
	}
	r.m.jobWrites.Add(jobRows)
	r.m.lineWrites.Add(int64(len(lines)))
	r.mu.Lock()
	r.fence, r.lastWrite = r.m.fenceAfter(written), written
	r.job.CancelRequested = merged.CancelRequested
	// A token handed over or taken away since: the runner takes it (and whether it waits). Else
	// its own waiting flag stands (a 401 may have set it while this write ran).
	if merged.Token != r.job.Token && r.job.Active() {
		r.job.Token, r.job.TokenID, r.job.TokenExpiry, r.job.WaitingForSignIn = merged.Token, merged.TokenID, merged.TokenExpiry, merged.WaitingForSignIn
	}
	r.mu.Unlock()
	r.m.changed(mine.ID)
	return nil
}
