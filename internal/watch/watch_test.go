package watch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// A hundred viewers asking at once during one interval cause one upstream read; the next interval one more.
func TestTagReadsOncePerIntervalForManyViewers(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	w := New(3*time.Second, clk.Now)
	var upstream atomic.Int64
	release := make(chan struct{})
	read := func(context.Context) (string, error) {
		upstream.Add(1)
		<-release
		return "tag-1", nil
	}
	var wg sync.WaitGroup
	tags := make([]string, 100)
	for i := range tags {
		wg.Go(func() {
			tag, err := w.Tag(context.Background(), "quote:1", read)
			if err != nil {
				t.Error(err)
			}
			tags[i] = tag
		})
	}
	time.Sleep(20 * time.Millisecond) // let the viewers pile up behind the one read
	close(release)
	wg.Wait()
	if got := upstream.Load(); got != 1 {
		t.Fatalf("upstream reads: %d, want 1", got)
	}
	for i, tag := range tags {
		if tag != "tag-1" {
			t.Fatalf("viewer %d got %q", i, tag)
		}
	}
	clk.Advance(3 * time.Second)
	if _, err := w.Tag(context.Background(), "quote:1", read); err != nil {
		t.Fatal(err)
	}
	if got := upstream.Load(); got != 2 {
		t.Fatalf("upstream reads after an interval: %d, want 2", got)
	}
	if w.Reads() != 2 {
		t.Fatalf("Reads() = %d", w.Reads())
	}
}

func TestTagErrorIsNotCachedAndObserveAnswersWithoutRead(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	w := New(time.Second, clk.Now)
	boom := errors.New("upstream down")
	if _, err := w.Tag(context.Background(), "k", func(context.Context) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	tag, err := w.Tag(context.Background(), "k", func(context.Context) (string, error) { return "b", nil })
	if err != nil || tag != "b" {
		t.Fatalf("after a failure the next caller reads again: %q %v", tag, err)
	}
	w.Observe("k", "c")
	tag, _ = w.Tag(context.Background(), "k", func(context.Context) (string, error) { t.Fatal("read after Observe"); return "", nil })
	if tag != "c" {
		t.Fatalf("tag after Observe = %q", tag)
	}
	// Idle entries go away.
	clk.Advance(time.Minute)
	w.Tag(context.Background(), "other", func(context.Context) (string, error) { return "x", nil })
	w.mu.Lock()
	_, kept := w.entries["k"]
	w.mu.Unlock()
	if kept {
		t.Error("an idle entry was kept")
	}
}

// TestReadRecentlyByIsPerViewerAndExpires: a viewer's own read counts for that viewer only, and for
// OwnReadValid.
func TestReadRecentlyByIsPerViewerAndExpires(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	w := New(time.Second, func() time.Time { return now })
	if w.ReadRecentlyBy("quote:1", "alice") {
		t.Fatal("nobody read yet")
	}
	w.ReadBy("quote:1", "alice")
	if !w.ReadRecentlyBy("quote:1", "alice") || w.ReadRecentlyBy("quote:1", "bob") || w.ReadRecentlyBy("quote:2", "alice") {
		t.Fatal("a read counts for its viewer and key only")
	}
	now = now.Add(OwnReadValid)
	if w.ReadRecentlyBy("quote:1", "alice") {
		t.Fatal("an own read older than OwnReadValid still counts")
	}
}
