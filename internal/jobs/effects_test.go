package jobs

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// recordedEffects is an Effects that records what it is told.
type recordedEffects struct {
	mu   sync.Mutex
	done []LineDone
}

func (e *recordedEffects) LineDone(_ context.Context, d LineDone) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.done = append(e.done, d)
}

// datedV2 archives like strictV2 and says when (the v2 archive answer's archivedAt).
type datedV2 struct {
	*strictV2
	at time.Time
}

func (v datedV2) Archive(ctx context.Context, token, number string) (string, time.Time, error) {
	id, err := v.archiveOld(ctx, token, number)
	return id, v.at, err
}

// TestEffectsToldOfEachLineThatTookEffect: Options.Effects is told once of every line whose
// archive took effect, with the job's kind, its owner (who ran the batch) and the archive's time
// as the v2 API answered it; a failed line (the v2 API refused the archive) is not told.
func TestEffectsToldOfEachLineThatTookEffect(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		at := time.Date(2026, 3, 3, 9, 59, 58, 0, time.UTC)
		v2 := datedV2{strictV2: &strictV2{archived: map[string]bool{"C-004": true}}, at: at}
		fx := &recordedEffects{}
		m := NewManager(Options{DB: db, Archiver: v2, Effects: fx, Concurrency: 2, ScanInterval: 50 * time.Millisecond})
		defer m.Close()
		m.Run()
		ctx := context.Background()
		j, err := m.Create(ctx, "bea", "Bea Backoffice", items(4)) // C-004 is archived already: it fails
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Start(ctx, j.ID, "bea", "token", time.Time{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, err := m.Get(ctx, j.ID, "bea")
			if err != nil {
				t.Fatal(err)
			}
			if got.Status == StatusFinished {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job never finished: %s %+v", got.Status, got.Counts())
			}
			time.Sleep(20 * time.Millisecond)
		}
		fx.mu.Lock()
		defer fx.mu.Unlock()
		var numbers []string
		for _, d := range fx.done {
			numbers = append(numbers, d.Item.Number)
			if d.Kind != KindArchive || d.Owner != "bea" || d.OwnerName != "Bea Backoffice" {
				t.Fatalf("told %+v, want the archive kind run by bea", d)
			}
			if !d.Outcome.At.Equal(at) {
				t.Fatalf("line %s told at %v, want the archive's time %v", d.Item.Number, d.Outcome.At, at)
			}
		}
		slices.Sort(numbers)
		if !slices.Equal(numbers, []string{"C-001", "C-002", "C-003"}) {
			t.Fatalf("lines told: %v, want each once", numbers)
		}
	})
}
