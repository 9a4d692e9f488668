package jobs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/store"
)

// strictV2 is an Archiver that refuses a second archive of a contract (as the simulator's strict
// archive mode does) and counts it: doubles is the number of contracts archived twice.
type strictV2 struct {
	mu       sync.Mutex
	archived map[string]bool
	doubles  int
	delay    time.Duration
}

func (s *strictV2) Archive(ctx context.Context, _, number string) (string, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.archived[number] {
		s.doubles++
		return "", errors.New("409 archived already")
	}
	s.archived[number] = true
	return "ARC-" + number, nil
}

func (s *strictV2) ArchiveID(_ context.Context, _, number string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.archived[number] {
		return "ARC-" + number, true, nil
	}
	return "", false, nil
}

// flakyStore is a store whose writes (and reads, when down) fail while down is set: Redis stopped.
type flakyStore struct {
	store.Store
	down atomic.Bool
}

var errStoreDown = errors.New("store down (test)")

func (f *flakyStore) Get(ctx context.Context, key string) ([]byte, error) {
	if f.down.Load() {
		return nil, errStoreDown
	}
	return f.Store.Get(ctx, key)
}

func (f *flakyStore) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if f.down.Load() {
		return errStoreDown
	}
	return f.Store.Put(ctx, key, value, ttl)
}

func (f *flakyStore) Update(ctx context.Context, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) error {
	if f.down.Load() {
		return errStoreDown
	}
	return f.Store.Update(ctx, key, ttl, fn)
}

func (f *flakyStore) Keys(ctx context.Context, prefix string) ([]string, error) {
	if f.down.Load() {
		return nil, errStoreDown
	}
	return f.Store.Keys(ctx, prefix)
}

// TestStoreOutageNeverArchivesTwice fails the store at a random moment of a batch run by two
// replicas, for a random time, many times: every contract ends archived exactly once (the strict
// v2 counts any second archive), the job finishes with nothing pending, and the lines whose call
// may have been sent during the outage were checked.
func TestStoreOutageNeverArchivesTwice(t *testing.T) {
	runs := 12
	if testing.Short() {
		runs = 4
	}
	for run := range runs {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			t.Parallel()
			base := openStore(t, filepath.Join(t.TempDir(), "p.db"))
			defer base.Close()
			st := &flakyStore{Store: base}
			v2 := &strictV2{archived: map[string]bool{}, delay: time.Millisecond}
			opts := Options{Store: st, Archiver: v2, Concurrency: 4, LeaseTerm: 400 * time.Millisecond, ScanInterval: 50 * time.Millisecond}
			a, b := NewManager(opts), NewManager(opts)
			defer a.Close()
			defer b.Close()
			ctx := context.Background()
			j, err := a.Create(ctx, "alice", "Alice", items(120))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
				t.Fatal(err)
			}
			b.Run()
			a.Run()
			time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
			st.down.Store(true)
			time.Sleep(time.Duration(100+rand.IntN(600)) * time.Millisecond)
			st.down.Store(false)
			done := waitFor(t, a, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
			v2.mu.Lock()
			defer v2.mu.Unlock()
			if v2.doubles != 0 {
				t.Fatalf("%d contracts archived twice", v2.doubles)
			}
			if c := done.Counts(); c.Done != 120 || c.Left != 0 || c.Failed != 0 {
				t.Fatalf("counts %+v", c)
			}
			if len(v2.archived) != 120 {
				t.Fatalf("%d contracts archived, want 120", len(v2.archived))
			}
			if done.Token != "" {
				t.Fatal("the finished job still holds its token")
			}
			for _, it := range done.Items {
				if it.MaybeSent {
					t.Fatalf("line %d still marked as maybe sent: %+v", it.Line, it)
				}
			}
		})
	}
}
