package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestOnEndTellsOnceWhenTheEndIsStored: Options.OnEnd is called once with the job as it ended
// (finished, every line done), after its end is stored (the stored job reads finished).
func TestOnEndTellsOnceWhenTheEndIsStored(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ended := make(chan *Job, 4)
		var m *Manager
		m = NewManager(Options{DB: db, Archiver: &strictV2{archived: map[string]bool{}}, Concurrency: 2, ScanInterval: 50 * time.Millisecond,
			OnEnd: func(ctx context.Context, j *Job) {
				if stored, err := m.Get(ctx, j.ID, j.Owner); err != nil || stored.Status != StatusFinished {
					t.Errorf("OnEnd before the end was stored: %v %v", stored, err)
				}
				ended <- j
			}})
		defer m.Close()
		m.Run()
		ctx := context.Background()
		j, err := m.Create(ctx, "alice", "", items(5))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-ended:
			if got.ID != j.ID || got.Status != StatusFinished || got.Counts().Done != 5 || got.EndedAt.IsZero() {
				t.Fatalf("OnEnd got %s %s %+v", got.ID, got.Status, got.Counts())
			}
		case <-time.After(20 * time.Second):
			t.Fatal("OnEnd was not called")
		}
		m.Close()
		select {
		case got := <-ended:
			t.Fatalf("OnEnd called twice (%s)", got.Status)
		default:
		}
	})
}
