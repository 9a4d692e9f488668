package watch

import (
	"context"
	"errors"
	"strconv"
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

// TagFor shares a read only with viewers whose own token read the key within the trust window; a
// viewer without one reads with their own read function, however fresh the shared tag.
func TestTagForSharesOnlyWithViewersWhoReadItThemselves(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	w := New(2*time.Second, clk.Now)
	reads := map[string]int{}
	readAs := func(viewer string) ReadFunc {
		return func(context.Context) (string, error) { reads[viewer]++; return "tag-1", nil }
	}
	w.ObserveBy("quote:1", "alice", "tag-1") // alice's page
	if tag, err := w.TagFor(context.Background(), "quote:1", "alice", 0, readAs("alice")); err != nil || tag != "tag-1" || reads["alice"] != 0 {
		t.Fatalf("alice within her trust window: %q %v, reads %v", tag, err, reads)
	}
	if _, err := w.TagFor(context.Background(), "quote:1", "mallory", 0, readAs("mallory")); err != nil || reads["mallory"] != 1 {
		t.Fatalf("a viewer who never read the quote was answered from another's read (reads %v, err %v)", reads, err)
	}
	// mallory's own read opened her window: the next poll within the interval is shared.
	if _, err := w.TagFor(context.Background(), "quote:1", "mallory", 0, readAs("mallory")); err != nil || reads["mallory"] != 1 {
		t.Fatalf("reads %v after mallory's own read", reads)
	}
	clk.Advance(DefaultTrust)
	w.Observe("quote:1", "tag-1") // someone else keeps the shared tag fresh
	if _, err := w.TagFor(context.Background(), "quote:1", "alice", 0, readAs("alice")); err != nil || reads["alice"] != 1 {
		t.Fatalf("alice past her trust window was not read with her own token (reads %v)", reads)
	}
}

// One hundred idle viewers (each polling once a minute, accepting a minute-old tag) of one quote
// cost one upstream read a minute; active viewers one per interval.
func TestTagForIdleViewersShareAMinute(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	w := New(2*time.Second, clk.Now)
	var upstream int
	read := func(context.Context) (string, error) { upstream++; return "tag-1", nil }
	viewer := func(i int) string { return "viewer-" + strconv.Itoa(i) }
	for i := range 100 {
		w.ObserveBy("quote:1", viewer(i), "tag-1") // each opened the page
	}
	for minute := range 3 {
		for i := range 100 { // polls spread over the minute
			clk.Advance(600 * time.Millisecond)
			if _, err := w.TagFor(context.Background(), "quote:1", viewer(i), time.Minute, read); err != nil {
				t.Fatal(err)
			}
		}
		if upstream > minute+1 {
			t.Fatalf("after %d minutes of 100 idle viewers: %d upstream reads, want at most %d", minute+1, upstream, minute+1)
		}
	}
}
