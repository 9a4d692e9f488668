package lease_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/lease"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// columns are the test's lease table, shaped as its users' (the scheduled ones).
var columns = lease.Columns{Table: "lease_test", Key: "name", Holder: "holder", Until: "until_at",
	NextRun: "next_run", LastRun: "last_run", Runs: "runs"}

// testDB is a fresh database of the engine with the test's lease table.
func testDB(t *testing.T, db *statedb.DB) *statedb.DB {
	t.Helper()
	if _, err := db.SQL.Exec(`CREATE TABLE lease_test (name TEXT PRIMARY KEY, holder TEXT NOT NULL DEFAULT '',
		until_at BIGINT NOT NULL DEFAULT 0, next_run BIGINT NOT NULL DEFAULT 0, last_run BIGINT NOT NULL DEFAULT 0,
		runs BIGINT NOT NULL DEFAULT 0, progress TEXT NOT NULL DEFAULT '')`); err != nil {
		t.Fatal(err)
	}
	return db
}

func newLease(db *statedb.DB, holder string, term time.Duration, schedule bool) *lease.Lease {
	c := columns
	if !schedule {
		c.NextRun, c.LastRun, c.Runs = "", "", ""
	}
	return lease.New(db, lease.Options{Columns: c, Key: "work", Holder: holder, Term: term, Every: time.Hour})
}

func claim(t *testing.T, l *lease.Lease) bool {
	t.Helper()
	held, err := l.Claim(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return held
}

func holderOf(t *testing.T, db *statedb.DB) string {
	t.Helper()
	var holder string
	if err := db.SQL.QueryRow(`SELECT holder FROM lease_test WHERE name = 'work'`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	return holder
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLeaseTwoHoldersOneWins: of two holders claiming one lease, one holds it; of two running
// their work at once, one runs it.
func TestLeaseTwoHoldersOneWins(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		db = testDB(t, db)
		a, b := newLease(db, "a", time.Hour, false), newLease(db, "b", time.Hour, false)
		if !claim(t, a) {
			t.Fatal("the first claim of a free lease failed")
		}
		if claim(t, b) {
			t.Fatal("a second holder took a held lease")
		}
		if claim(t, a) {
			t.Error("a holder claimed its own lease twice (two runs of one holder)")
		}
		if held, err := b.Renew(context.Background()); err != nil || held {
			t.Errorf("another holder renewed the lease: %v %v", held, err)
		}
		if err := a.Release(context.Background()); err != nil {
			t.Fatal(err)
		}

		// Two holders' work at once: one runs, the other finds the lease held and returns.
		var running, runs, returned atomic.Int32
		release := make(chan struct{})
		var wg sync.WaitGroup
		ran := make([]bool, 2)
		for i, l := range []*lease.Lease{a, b} {
			wg.Go(func() {
				defer returned.Add(1)
				var err error
				ran[i], err = l.Do(context.Background(), func(context.Context) error {
					running.Add(1)
					runs.Add(1)
					<-release
					running.Add(-1)
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		eventually(t, 5*time.Second, "one holder runs and the other returned", func() bool {
			return running.Load() == 1 && returned.Load() == 1
		})
		close(release)
		wg.Wait()
		if ran[0] == ran[1] || runs.Load() != 1 {
			t.Errorf("ran %v, %d runs; want exactly one", ran, runs.Load())
		}
	})
}

// TestLeaseExpiresAndTheOtherTakesOver: a holder that vanished (it claimed and never renewed)
// keeps the lease until its term runs out by the database's clock; then another takes it.
func TestLeaseExpiresAndTheOtherTakesOver(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		db = testDB(t, db)
		const term = 400 * time.Millisecond
		vanished, other := newLease(db, "vanished", term, false), newLease(db, "other", term, false)
		start := time.Now()
		if !claim(t, vanished) {
			t.Fatal("the first claim failed")
		}
		if claim(t, other) {
			t.Fatal("the lease was taken within its term")
		}
		eventually(t, 10*time.Second, "the other holder takes the lease over", func() bool { return claim(t, other) })
		if since := time.Since(start); since < term {
			t.Errorf("taken over after %v, within the term %v", since, term)
		}
		if h := holderOf(t, db); h != "other" {
			t.Errorf("holder %q", h)
		}
		// The vanished holder, back, finds its lease gone: its renewal fails, and a Do of its
		// work does not run.
		if held, err := vanished.Renew(context.Background()); err != nil || held {
			t.Errorf("the old holder renewed a lease taken over: %v %v", held, err)
		}
	})
}

// TestLeaseRenewedWhileTheWorkRuns: work longer than the term keeps its lease; another holder
// takes over when the work's lease is taken from it, and the work's context ends (ErrLost).
func TestLeaseRenewedWhileTheWorkRuns(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		db = testDB(t, db)
		const term = time.Second
		a, b := newLease(db, "a", term, false), newLease(db, "b", term, false)
		var cause error
		ran, err := a.Do(context.Background(), func(ctx context.Context) error {
			deadline := time.Now().Add(3 * term)
			for time.Now().Before(deadline) {
				if claim(t, b) {
					t.Errorf("another holder took the lease of running work (its context: %v)", context.Cause(ctx))
					return nil
				}
				time.Sleep(50 * time.Millisecond)
			}
			// Taken from it (as a holder whose term ran out would lose it): its context ends.
			if _, err := db.SQL.Exec(`UPDATE lease_test SET holder = 'b' WHERE name = 'work'`); err != nil {
				t.Error(err)
			}
			select {
			case <-ctx.Done():
				cause = context.Cause(ctx)
			case <-time.After(10 * time.Second):
				t.Error("the work's context did not end when its lease was taken over")
			}
			return ctx.Err()
		})
		if !ran || !errors.Is(err, lease.ErrLost) || !errors.Is(cause, lease.ErrLost) {
			t.Errorf("ran %v, err %v, cause %v; want ErrLost", ran, err, cause)
		}
		if h := holderOf(t, db); h != "b" {
			t.Errorf("the lost holder's end released the new holder's lease: holder %q", h)
		}
	})
}

// TestLeaseLostWhenTheDatabaseCannotRenewIt: a holder whose renewals fail (here: its table is
// gone) stops its work before its last term runs out.
func TestLeaseLostWhenTheDatabaseCannotRenewIt(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		db = testDB(t, db)
		const term = 600 * time.Millisecond
		a := newLease(db, "a", term, false)
		var renewedFor time.Duration
		ran, err := a.Do(context.Background(), func(ctx context.Context) error {
			if _, err := db.SQL.Exec(`ALTER TABLE lease_test RENAME TO lease_test_gone`); err != nil {
				t.Error(err)
			}
			broken := time.Now()
			select {
			case <-ctx.Done():
				renewedFor = time.Since(broken)
			case <-time.After(10 * time.Second):
				t.Error("the work went on without its lease")
			}
			return ctx.Err()
		})
		if !ran || !errors.Is(err, lease.ErrLost) {
			t.Errorf("ran %v, err %v; want ErrLost", ran, err)
		}
		if renewedFor > term {
			t.Errorf("the work stopped %v after its renewals began to fail, past the term %v", renewedFor, term)
		}
	})
}

// TestLeaseReleaseHandsOverAtOnce: work that ends gives its lease up: another holder takes it at
// once, long before its term; on a schedule a run that failed is due again at once, and one that
// succeeded is counted and not due until Every.
func TestLeaseReleaseHandsOverAtOnce(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		db = testDB(t, db)
		a, b := newLease(db, "a", time.Hour, false), newLease(db, "b", time.Hour, false)
		ctx := context.Background()
		if ran, err := a.Do(ctx, func(context.Context) error { return nil }); !ran || err != nil {
			t.Fatalf("ran %v, err %v", ran, err)
		}
		if !claim(t, b) {
			t.Fatal("the lease was not handed over at once")
		}
		if err := b.Release(ctx); err != nil {
			t.Fatal(err)
		}

		sa, sb := newLease(db, "a", time.Hour, true), newLease(db, "b", time.Hour, true)
		failed := errors.New("the work failed")
		if ran, err := sa.Do(ctx, func(context.Context) error { return failed }); !ran || !errors.Is(err, failed) {
			t.Fatalf("ran %v, err %v; want the work's error", ran, err)
		}
		ran, err := sb.Do(ctx, func(context.Context) error { return nil })
		if !ran || err != nil {
			t.Fatalf("a failed run was not due again at once: ran %v, err %v", ran, err)
		}
		var runs, nextRun, lastRun int64
		if err := db.SQL.QueryRow(`SELECT runs, next_run, last_run FROM lease_test WHERE name = 'work'`).Scan(&runs, &nextRun, &lastRun); err != nil {
			t.Fatal(err)
		}
		// (PostgreSQL's clock_timestamp() moves within the statement.)
		if gap := time.Duration(nextRun-lastRun) * time.Microsecond; runs != 1 || gap < time.Hour-time.Second || gap > time.Hour {
			t.Errorf("runs %d, next run %v after the last; want 1 and an hour", runs, gap)
		}
		if ran, err := sa.Do(ctx, func(context.Context) error { return nil }); ran || err != nil {
			t.Errorf("a run that is not due ran: %v %v", ran, err)
		}
	})
}

// TestLeaseCanceledContextStopsTheLoop: Hold runs the work while it holds the lease; when its
// context is canceled the work ends, Hold returns and the lease is free at once.
func TestLeaseCanceledContextStopsTheLoop(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		db = testDB(t, db)
		a, b := newLease(db, "a", time.Hour, false), newLease(db, "b", time.Hour, false)
		ctx, cancel := context.WithCancel(context.Background())
		var working atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			a.Hold(ctx, func(ctx context.Context) error {
				working.Store(true)
				<-ctx.Done()
				working.Store(false)
				return nil
			})
		}()
		eventually(t, 5*time.Second, "the holder works", working.Load)
		if claim(t, b) {
			t.Fatal("another holder took the lease of a holder at work")
		}
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Hold did not return after its context was canceled")
		}
		if working.Load() {
			t.Error("the work still runs")
		}
		if !claim(t, b) {
			t.Error("the lease was not free after the holder stopped")
		}
	})
}

// TestLeaseLoopTicksWakesAndStops: a Loop ticks at once, again when woken (long before its
// interval), and Close ends the tick in flight's context and waits for it; it never restarts.
func TestLeaseLoopTicksWakesAndStops(t *testing.T) {
	t.Parallel()
	var loop lease.Loop
	loop.Close() // before Start: nothing to stop
	var ticks atomic.Int32
	inTick := make(chan struct{})
	var ended atomic.Bool
	loop.Start(time.Hour, func(ctx context.Context) {
		if ticks.Add(1) == 3 {
			close(inTick)
			<-ctx.Done()
			ended.Store(true)
		}
	})
	eventually(t, 5*time.Second, "the first tick at once", func() bool { return ticks.Load() == 1 })
	loop.Wake()
	eventually(t, 5*time.Second, "a tick when woken", func() bool { return ticks.Load() == 2 })
	loop.Wake()
	<-inTick
	loop.Close()
	if !ended.Load() {
		t.Error("Close returned before the tick in flight ended")
	}
	loop.Start(time.Millisecond, func(context.Context) { ticks.Add(1) })
	time.Sleep(50 * time.Millisecond) // a restarted loop would tick many times meanwhile
	if n := ticks.Load(); n != 3 {
		t.Errorf("%d ticks after Close and a second Start, want 3", n)
	}
}
