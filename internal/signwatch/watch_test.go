package signwatch

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// fakeV2 answers contract reads: each contract's signature status, and who may read it.
type fakeV2 struct {
	mu      sync.Mutex
	status  map[int32]string          // SENT, SIGNED, DECLINED
	allowed map[int32]map[string]bool // contract -> tokens that may read it (nil: every token)
	fail    bool
	reads   map[string]int // token -> reads
}

func (f *fakeV2) Read(_ context.Context, token string, id int32) (workindex.ContractSighting, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads[token]++
	if f.fail {
		return workindex.ContractSighting{}, fmt.Errorf("503 from the fake v2")
	}
	if token == "expired" {
		return workindex.ContractSighting{}, ErrTokenRefused
	}
	if a := f.allowed[id]; a != nil && !a[token] {
		return workindex.ContractSighting{}, fmt.Errorf("%w: 403", ErrNotReadable)
	}
	return sighting(id, f.status[id]), nil
}

func (f *fakeV2) set(id int32, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status[id] = status
}

func (f *fakeV2) readsBy(token string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[token]
}

func sighting(id int32, status string) workindex.ContractSighting {
	facts := workindex.ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{status}}
	if status == "SIGNED" {
		facts.Status = "SIGNED"
	}
	return workindex.ContractSighting{ContractID: id, Number: fmt.Sprintf("C-%d", id), QuoteID: int64(id) + 1000,
		CustomerID: 7, Customer: "Laura Rossi", Facts: facts, OneOffCents: 10000}
}

type plainSealer struct{}

func (plainSealer) Seal(plain, context string) (string, error) { return context + "|" + plain, nil }
func (plainSealer) Open(sealed, context string) (string, error) {
	if len(sealed) < len(context)+1 || sealed[:len(context)+1] != context+"|" {
		return "", fmt.Errorf("wrong context")
	}
	return sealed[len(context)+1:], nil
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWatcherRecordsAnswersWithTheReadersOwnToken: two replicas on one database; the contract's
// sender holds a live token, a colleague who read it too does not. One replica watches; the
// signer's answer is recorded with the sender's token, revealed to the sender and to nobody else,
// and the contract leaves the watch. A contract the reader may not read leaves their lists and the
// watch; a signed-out person's contracts are not read with their token.
func TestWatcherRecordsAnswersWithTheReadersOwnToken(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		work := workindex.New(db, workindex.Options{})
		sam := workindex.Viewer{Subject: "sam", Name: "Sam Sales"}
		bea := workindex.Viewer{Subject: "bea", Name: "Bea Backoffice", Team: true}
		lia := workindex.Viewer{Subject: "lia", Name: "Lia Left"}
		v2 := &fakeV2{status: map[int32]string{1: "SENT", 2: "SENT", 3: "SENT"}, reads: map[string]int{},
			allowed: map[int32]map[string]bool{}}
		for id := int32(1); id <= 2; id++ {
			if err := work.ObserveContract(ctx, sam, sighting(id, "SENT"), workindex.ActChanged); err != nil {
				t.Fatal(err)
			}
			if err := work.ObserveContract(ctx, bea, sighting(id, "SENT"), workindex.ActOpened); err != nil {
				t.Fatal(err)
			}
		}
		if err := work.ObserveContract(ctx, lia, sighting(3, "SENT"), workindex.ActChanged); err != nil {
			t.Fatal(err)
		}
		v2.allowed[2] = map[string]bool{"sam-token": false}

		var answersMu sync.Mutex
		var answers []string
		newWatcher := func(holder string) *Watcher {
			return New(Options{DB: db, Work: work, Reader: v2, Sealer: plainSealer{}, Interval: 300 * time.Millisecond, Holder: holder,
				OnAnswer: func(_ context.Context, reader workindex.Viewer, s workindex.ContractSighting, stage workindex.Stage) {
					answersMu.Lock()
					defer answersMu.Unlock()
					answers = append(answers, fmt.Sprintf("%s %d %s", reader.Name, s.ContractID, stage))
				}})
		}
		a, b := newWatcher("replica-a"), newWatcher("replica-b")
		if err := a.Keep(ctx, sam, "sam-token", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := a.Keep(ctx, lia, "lia-token", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := b.Drop(ctx, "lia"); err != nil { // Lia signed out (on the other replica)
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for _, w := range []*Watcher{a, b} {
			wg.Add(1)
			go func() { defer wg.Done(); w.Run(runCtx) }()
		}
		defer func() { stop(); wg.Wait() }()

		eventually(t, "one replica watches", func() bool { return a.Holding() != b.Holding() })
		eventually(t, "the sender's contract 1 is read with their token", func() bool { return v2.readsBy("sam-token") >= 2 })
		v2.set(1, "SIGNED")
		eventually(t, "the signature reaches the sender's lists", func() bool {
			r, ok := work.Lookup(ctx, sam, workindex.KindContract, 1)
			return ok && r.Stage == workindex.StageSigned
		})
		if r, ok := work.Lookup(ctx, bea, workindex.KindContract, 1); ok {
			t.Errorf("the back office sees the watcher's read of contract 1 as theirs: %+v", r)
		}
		// Contract 2: the v2 API refuses Sam it; it leaves his lists and the watch.
		eventually(t, "a refused contract leaves the reader's lists", func() bool {
			_, ok := work.Lookup(ctx, sam, workindex.KindContract, 2)
			return !ok
		})
		// The answer is told after the index's write returns, so it may come a moment after the
		// lists show the signature.
		told := func() string {
			answersMu.Lock()
			defer answersMu.Unlock()
			return fmt.Sprint(answers)
		}
		eventually(t, "the signature is told", func() bool { return told() != "[]" })
		if got := told(); got != "[Sam Sales 1 signed]" {
			t.Errorf("answers told: %s", got)
		}
		before := v2.readsBy("sam-token")
		time.Sleep(time.Second) // a few intervals: nothing Sam may read is out for signature any more
		if after := v2.readsBy("sam-token"); after != before {
			t.Errorf("%d more reads after every contract of Sam's was answered or refused", after-before)
		}
		if n := v2.readsBy("lia-token"); n != 0 {
			t.Errorf("a signed-out person's token read %d times", n)
		}
		// The holder stops: the other replica takes over at once (the lease was released).
		other := b
		if b.Holding() {
			other = a
		}
		stop()
		wg.Wait()
		if a.Holding() || b.Holding() {
			t.Error("a stopped replica still holds the lease")
		}
		held, err := other.lease.Claim(ctx)
		if err != nil || !held {
			t.Errorf("the lease was not released at shutdown: %v %v", held, err)
		}
	})
}

// TestWatcherPausesWhileTheServiceFails: a failing v2 API costs a handful of reads, not one per
// contract per interval.
func TestWatcherPausesWhileTheServiceFails(t *testing.T) {
	db := statedbtest.SQLite(t)
	ctx := context.Background()
	work := workindex.New(db, workindex.Options{})
	sam := workindex.Viewer{Subject: "sam", Name: "Sam Sales"}
	v2 := &fakeV2{status: map[int32]string{}, reads: map[string]int{}, fail: true}
	for id := int32(1); id <= 20; id++ {
		v2.status[id] = "SENT"
		if err := work.ObserveContract(ctx, sam, sighting(id, "SENT"), workindex.ActChanged); err != nil {
			t.Fatal(err)
		}
	}
	w := New(Options{DB: db, Work: work, Reader: v2, Sealer: plainSealer{}, Interval: 200 * time.Millisecond})
	if err := w.Keep(ctx, sam, "sam-token", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithTimeout(ctx, 3*time.Second)
	defer stop()
	w.Run(runCtx)
	// 20 contracts every 200 ms would be 300 reads in 3 s; the pause (5 s) allows the first batch.
	if n := v2.readsBy("sam-token"); n == 0 || n > 4 {
		t.Errorf("%d reads in 3 s of a failing v2 API, want 1 to 4", n)
	}
}
