package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/v2sim"
)

// SIGTERM with a batch in progress, on the real binary (issue 24, point 9; docs/backoffice.md,
// "Shutting down"): the batch stops dispatching at once, the archive calls already sent finish,
// the process exits within PORTAL_SHUTDOWN_GRACE, and the job's rows are left for the next runner,
// which resumes it and archives every contract exactly once (the simulator's strict archive mode
// answers a second archive with 409 and counts it).

// archiveGate holds the v2 archive calls while armed until released, then answers them after
// slow (a v2 API whose archive answers slowly), and records when each arrived.
type archiveGate struct {
	next http.Handler
	slow time.Duration

	mu       sync.Mutex
	armed    bool
	release  chan struct{}
	arrivals []time.Time
	held     chan struct{} // one value per held call
}

func newArchiveGate(next http.Handler, slow time.Duration) *archiveGate {
	return &archiveGate{next: next, slow: slow, armed: true, release: make(chan struct{}), held: make(chan struct{}, 1024)}
}

func (g *archiveGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/archive") {
		g.mu.Lock()
		g.arrivals = append(g.arrivals, time.Now())
		armed, release := g.armed, g.release
		g.mu.Unlock()
		if armed {
			g.held <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		select {
		case <-time.After(g.slow):
		case <-r.Context().Done():
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// open releases the held calls and lets the next ones through (after slow).
func (g *archiveGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed {
		g.armed = false
		close(g.release)
	}
}

// arrivedAfter counts the archive calls that reached the v2 API after t.
func (g *archiveGate) arrivedAfter(t time.Time) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, at := range g.arrivals {
		if at.After(t) {
			n++
		}
	}
	return n
}

// archivedCounts counts the successful archive calls per contract number in the simulator's log.
func archivedCounts(sim *v2sim.Server) map[string]int {
	counts := map[string]int{}
	for _, req := range sim.Requests() {
		if req.Endpoint == "contracts.archive" && req.Status == http.StatusOK {
			parts := strings.Split(req.EscapedPath, "/")
			counts[parts[len(parts)-2]]++
		}
	}
	return counts
}

// batchJobStatus is the job's status as its record in the state database says, read while a
// portal may be running on it (a plain read: no manager that could take the job).
func batchJobStatus(t *testing.T, dir, id string) string {
	t.Helper()
	ctx := context.Background()
	db, err := statedb.Open(ctx, statedb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var status string
	if err := db.SQL.QueryRowContext(ctx, `SELECT status FROM jobs WHERE id = $1`, id).Scan(&status); err != nil {
		t.Fatalf("the job's status: %v", err)
	}
	return status
}

// readBatchJob reads the job and its lines from the portal's state database in dir (SQLite).
func readBatchJob(t *testing.T, dir, id string) jobs.Job {
	t.Helper()
	ctx := context.Background()
	db, err := statedb.Open(ctx, statedb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	j, err := jobs.NewManager(jobs.Options{DB: db}).Get(ctx, id, "batch-owner")
	if err != nil {
		t.Fatalf("the job after the stop: %v", err)
	}
	return *j
}

func TestSIGTERMDrainsBatchAndNextRunnerResumes(t *testing.T) {
	t.Parallel()
	const (
		lines       = 24
		concurrency = 4
		slow        = 300 * time.Millisecond // each archive answer, once released
		grace       = 5 * time.Second
	)
	sim := v2sim.New(v2sim.Options{Customers: 3, Seed: 1, StrictArchive: true})
	numbers, err := sim.SeedContracts(lines)
	if err != nil {
		t.Fatal(err)
	}
	gate := newArchiveGate(sim, slow)
	simServer := httptest.NewServer(gate)
	t.Cleanup(func() { gate.open(); simServer.Close(); _ = sim.Close() })

	// A queued batch in the portal's state store, its token sealed with the session keys the
	// portal runs with (the simulator accepts any bearer token). The manager here is closed before
	// Start, so this process never runs it: the portal binary picks it up.
	dataDir := t.TempDir()
	stateDir := filepath.Join(dataDir, "state") // the portal's SQLite state database
	keyBytes := make([]byte, 32)
	_, _ = rand.Read(keyBytes)
	sessionKey := base64.StdEncoding.EncodeToString(keyBytes)
	sealer, err := session.NewSealer([]string{sessionKey}, "batch token")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := statedb.Open(ctx, statedb.Options{Dir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	m := jobs.NewManager(jobs.Options{DB: db, Sealer: sealer})
	items := make([]jobs.Item, lines)
	for i, n := range numbers {
		items[i] = jobs.Item{Line: i + 1, Number: n, Status: jobs.ItemPending}
	}
	job, err := m.Create(ctx, "batch-owner", "Batch Owner", items)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if _, err := m.Start(ctx, job.ID, "batch-owner", "batch-token", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// The drain (1 s) outlasts the held calls' answers (300 ms): a portal that stopped its batches
	// only after the drain (or after the requests) would send the next lines' calls meanwhile.
	env := []string{"PORTAL_DATA_DIR=" + dataDir, "PORTAL_SESSION_KEYS=" + sessionKey,
		"PORTAL_BATCH_CONCURRENCY=" + strconv.Itoa(concurrency), "PORTAL_SHUTDOWN_DRAIN=1s", "PORTAL_V2_TIMEOUT=10s"}
	bin := buildPortalBinary(t)

	// 1. The first runner: its archive calls are held at the v2 API, concurrency of them at once.
	first := startShutdownPortal(t, bin, simServer.URL, grace.String(), env...)
	for range concurrency {
		waitFor(t, "the batch's archive calls", gate.held)
	}
	signalled := time.Now()
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The slow answers come once the portal is shutting down.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(first.out.String(), "shutting down"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the portal did not log that it is shutting down")
		}
	}
	gate.open()
	select {
	case <-first.exited:
	case <-time.After(grace + 10*time.Second):
		t.Fatal("the portal did not exit after SIGTERM")
	}
	stopTook := time.Since(signalled)
	t.Logf("SIGTERM to exit with %d archive calls in flight, answering in %s once released: %s (grace %s)", concurrency, slow, stopTook.Round(time.Millisecond), grace)
	if stopTook >= grace {
		t.Errorf("the portal took %s to exit after SIGTERM, not within its %s grace", stopTook, grace)
	}
	if first.err != nil {
		t.Errorf("exit: %v, want status 0", first.err)
	}
	if log := first.out.String(); strings.Contains(log, "still had calls in flight") || !strings.Contains(log, "portal stopped") {
		t.Errorf("the batch did not drain within the grace period:\n%s", log)
	}
	if n := gate.arrivedAfter(signalled); n != 0 {
		t.Errorf("%d archive calls were sent after SIGTERM (only the %d in flight may finish)", n, concurrency)
	}

	// 2. The record is left for the next runner: queued, interrupted, its lease released, no line
	// still "running", and every line the v2 API archived either recorded done or marked as
	// possibly sent (so the next runner checks it before any call).
	archived := archivedCounts(sim)
	stopped := readBatchJob(t, stateDir, job.ID)
	if stopped.Status != jobs.StatusQueued || !stopped.Interrupted || stopped.Lease != "" {
		t.Errorf("after SIGTERM the job is %s (interrupted %v, lease %q), want queued, interrupted, lease released",
			stopped.Status, stopped.Interrupted, stopped.Lease)
	}
	done := 0
	for _, it := range stopped.Items {
		switch {
		case it.Status == jobs.ItemRunning:
			t.Errorf("line %d is left running", it.Line)
		case it.Status == jobs.ItemDone:
			done++
		case archived[it.Number] > 0 && !(it.Status == jobs.ItemPending && it.MaybeSent):
			t.Errorf("line %d (%s) was archived but is recorded %s without may-have-been-sent", it.Line, it.Number, it.Status)
		}
	}
	if done != concurrency || len(archived) != concurrency {
		t.Errorf("after SIGTERM %d lines are recorded done and %d contracts archived, want the %d in flight",
			done, len(archived), concurrency)
	}

	// 3. The next runner (the same data directory and keys: a restarted pod, or another replica)
	// resumes the job and archives the rest; nothing is archived twice.
	second := startShutdownPortal(t, bin, simServer.URL, grace.String(), env...)
	for deadline := time.Now().Add(60 * time.Second); len(archivedCounts(sim)) < lines; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the second runner archived %d of %d contracts within 60 s", len(archivedCounts(sim)), lines)
		}
	}
	// The last archive answered is recorded, and the job closed, a moment after the v2 API answered:
	// wait for the record, not only the v2 API, before stopping the runner.
	for deadline := time.Now().Add(60 * time.Second); batchJobStatus(t, stateDir, job.ID) != string(jobs.StatusFinished); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the second runner archived every contract but the job is %s after 60 s", batchJobStatus(t, stateDir, job.ID))
		}
	}
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second portal to exit", second.exited)
	end := readBatchJob(t, stateDir, job.ID)
	if c := end.Counts(); end.Status != jobs.StatusFinished || c.Done != lines {
		t.Errorf("after the second runner the job is %s with %+v, want finished with %d done", end.Status, c, lines)
	}
	if end.Resumes == 0 {
		t.Error("the second runner did not count its resume")
	}
	for n, count := range archivedCounts(sim) {
		if count != 1 {
			t.Errorf("contract %s archived %d times", n, count)
		}
	}
	if c := sim.ArchiveConflicts(); c != 0 {
		t.Errorf("%d second archive calls refused by the simulator", c)
	}
}
