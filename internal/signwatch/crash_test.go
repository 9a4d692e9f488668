package signwatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

func TestMain(m *testing.M) { statedbtest.CrashMain(m, watcherChild) }

// The replicas of the crash test: each runs a Watcher on the shared database, reading the fake
// v2 API at args[0] as replica args[1], until it is killed.
const (
	crashInterval = 500 * time.Millisecond
	crashLease    = 2 * time.Second
	crashCeiling  = 600 // reads a minute: 10 a second
)

func watcherChild(db *statedb.DB, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("want the v2 URL and the replica's name, got %q", args)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	w := New(Options{DB: db, Work: workindex.New(db, workindex.Options{}), Reader: httpReader{base: args[0]}, Sealer: plainSealer{},
		Interval: crashInterval, Lease: crashLease, MaxCallsPerMinute: crashCeiling, Holder: args[1]})
	w.Run(ctx)
	return nil
}

// httpReader reads the fake v2 API of the crash test: GET {base}/{id} answers the signature
// status, or fails with the status it answers.
type httpReader struct{ base string }

func (r httpReader) Read(ctx context.Context, token string, id int32) (workindex.ContractSighting, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/"+strconv.Itoa(int(id)), nil)
	if err != nil {
		return workindex.ContractSighting{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return workindex.ContractSighting{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return workindex.ContractSighting{}, fmt.Errorf("v2 answered %d", resp.StatusCode)
	}
	var body struct{ Status string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return workindex.ContractSighting{}, err
	}
	return sighting(id, body.Status), nil
}

// crashV2 is the fake v2 API the replicas read: statuses, an outage switch, and when each read came.
type crashV2 struct {
	mu      sync.Mutex
	status  map[int32]string
	failing bool
	reads   []time.Time
}

func (f *crashV2) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, time.Now())
	switch {
	case err != nil || r.Header.Get("Authorization") != "Bearer sam-token":
		http.Error(w, "no", http.StatusUnauthorized)
	case f.failing:
		http.Error(w, "down", http.StatusServiceUnavailable)
	default:
		_ = json.NewEncoder(w).Encode(map[string]string{"status": f.status[int32(id)]})
	}
}

func (f *crashV2) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

// readsSince counts the reads from t on.
func (f *crashV2) readsSince(t time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, at := range f.reads {
		if !at.Before(t) {
			n++
		}
	}
	return n
}

// busiestSecond is the most reads any one second (from a read on) saw: two replicas watching at
// once would show as twice the budget's pace.
func (f *crashV2) busiestSecond() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	most := 0
	for i, from := range f.reads {
		n := 0
		for _, at := range f.reads[i:] {
			if at.Sub(from) < time.Second {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func leaseHolder(t *testing.T, db *statedb.DB) string {
	t.Helper()
	var holder string
	err := db.SQL.QueryRow(`SELECT holder FROM watch_leases WHERE name = $1`, leaseName).Scan(&holder)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return holder
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWatcherCrashReplicaKilledAndServiceDown: two replicas watch 20 contracts on one database;
// the one holding the lease is killed with SIGKILL, and the other takes the watch over within the
// lease; every answer given meanwhile is recorded, none missed; a v2 API answering 503 costs a
// handful of reads and the watch resumes after it; no second of the run saw more reads than the
// budget's pace (one replica reads at a time). Both engines.
func TestWatcherCrashReplicaKilledAndServiceDown(t *testing.T) {
	statedbtest.EachEngine(t, func(t *testing.T, engine statedb.Engine) {
		where := statedbtest.Shared(t, engine)
		db := statedbtest.OpenShared(t, where)
		ctx := context.Background()
		work := workindex.New(db, workindex.Options{})
		sam := workindex.Viewer{Subject: "sam", Name: "Sam Sales"}
		v2 := &crashV2{status: map[int32]string{}}
		const contracts = 20
		for id := int32(1); id <= contracts; id++ {
			v2.status[id] = "SENT"
			if err := work.ObserveContract(ctx, sam, sighting(id, "SENT"), workindex.ActChanged); err != nil {
				t.Fatal(err)
			}
		}
		keeper := New(Options{DB: db, Work: work, Reader: httpReader{}, Sealer: plainSealer{}})
		if err := keeper.Keep(ctx, sam, "sam-token", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		server := httptest.NewServer(v2)
		defer server.Close()
		signedIn := func(from, to int32) func() bool {
			return func() bool {
				for id := from; id <= to; id++ {
					if r, ok := work.Lookup(ctx, sam, workindex.KindContract, int64(id)); !ok || r.Stage != workindex.StageSigned {
						return false
					}
				}
				return true
			}
		}

		a := statedbtest.StartChild(t, where, server.URL, "replica-a")
		waitFor(t, 10*time.Second, "replica a watches", func() bool { return leaseHolder(t, db) == "replica-a" && v2.readsSince(time.Time{}) > 0 })
		statedbtest.StartChild(t, where, server.URL, "replica-b")
		// Replica a dies holding the lease; answers arrive meanwhile.
		_ = a.Process.Kill()
		_ = a.Wait()
		v2.set(func() {
			for id := int32(1); id <= 10; id++ {
				v2.status[id] = "SIGNED"
			}
		})
		waitFor(t, 3*crashLease+5*crashInterval+5*time.Second, "the answers given while the holder was dead are recorded", signedIn(1, 10))
		if h := leaseHolder(t, db); h != "replica-b" {
			t.Errorf("the lease is held by %q after replica a died", h)
		}

		// The v2 API answers 503: the watcher backs off.
		v2.set(func() { v2.failing = true })
		outage := time.Now()
		waitFor(t, 5*time.Second, "the watcher meets the outage", func() bool { return v2.readsSince(outage) > 0 })
		waitFor(t, 10*time.Second, "the outage lasts 6 s", func() bool { return time.Since(outage) > 6*time.Second })
		if n := v2.readsSince(outage); n > 4 {
			t.Errorf("6 s of 503 cost %d reads, want at most 4 (5 s back-off)", n)
		}
		v2.set(func() {
			v2.failing = false
			for id := int32(11); id <= contracts; id++ {
				v2.status[id] = "SIGNED"
			}
		})
		waitFor(t, 20*time.Second, "the watch resumes after the outage and records every answer", signedIn(11, contracts))
		if most := v2.busiestSecond(); most > crashCeiling/60+4 {
			t.Errorf("one second saw %d reads; the budget's pace is %d a second", most, crashCeiling/60)
		}
		// Every contract answered: the watch is empty and reads stop.
		quiet := time.Now()
		waitFor(t, 5*time.Second, "a quiet second", func() bool { return time.Since(quiet) > time.Second+crashInterval })
		if n := v2.readsSince(quiet.Add(crashInterval)); n > 0 {
			t.Errorf("%d reads after every contract was answered", n)
		}
	})
}

// TestWatcherOutageDatabaseStoppedAndBack: the state database goes away while contracts are
// watched and signers answer; the watcher reads nothing it cannot record (no lease, or a paused
// watch), and once the database is back every answer given meanwhile is recorded. Both engines
// (SQLite: another connection holds the write lock; PostgreSQL: the cluster stopped and started).
func TestWatcherOutageDatabaseStoppedAndBack(t *testing.T) {
	statedbtest.EachOutage(t, statedbtest.Runs{Full: 1, Short: 1}, statedbtest.Runs{Full: 1, Short: 1}, func(t *testing.T, db *statedb.DB, down, up func()) {
		ctx := context.Background()
		work := workindex.New(db, workindex.Options{WriteTimeout: 500 * time.Millisecond})
		sam := workindex.Viewer{Subject: "sam", Name: "Sam Sales"}
		v2 := &crashV2{status: map[int32]string{}}
		const contracts = 6
		for id := int32(1); id <= contracts; id++ {
			v2.status[id] = "SENT"
			if err := work.ObserveContract(ctx, sam, sighting(id, "SENT"), workindex.ActChanged); err != nil {
				t.Fatal(err)
			}
		}
		server := httptest.NewServer(v2)
		defer server.Close()
		w := New(Options{DB: db, Work: work, Reader: httpReader{base: server.URL}, Sealer: plainSealer{},
			Interval: crashInterval, Lease: crashLease, MaxCallsPerMinute: crashCeiling, Holder: "only"})
		if err := w.Keep(ctx, sam, "sam-token", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); w.Run(runCtx) }()
		defer func() { stop(); <-done }()
		waitFor(t, 10*time.Second, "the watcher reads", func() bool { return v2.readsSince(time.Time{}) >= contracts })

		down()
		v2.set(func() {
			for id := int32(1); id <= contracts; id++ {
				v2.status[id] = "SIGNED"
			}
		})
		outage := time.Now()
		waitFor(t, 10*time.Second, "the outage lasts two leases", func() bool { return time.Since(outage) > 2*crashLease })
		during := v2.readsSince(outage)
		up()
		waitFor(t, 30*time.Second, "every answer given during the outage is recorded", func() bool {
			for id := int32(1); id <= contracts; id++ {
				if r, ok := work.Lookup(ctx, sam, workindex.KindContract, int64(id)); !ok || r.Stage != workindex.StageSigned {
					return false
				}
			}
			return true
		})
		// Reads that could not be recorded stop the watch at once (a pause, then no lease).
		if during > contracts {
			t.Errorf("%d reads while the database was away, want at most one round (%d)", during, contracts)
		}
	})
}
