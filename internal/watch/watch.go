// Package watch tells whether something shown to many people has changed, reading it upstream at most
// once per interval however many of them ask (live notices on quote and contract pages, issue 18).
//
// A Watcher keeps, per key (e.g. "quote:900004"), the last change tag read and when. Tag answers the
// cached tag while it is younger than the interval; otherwise the first caller reads it with the
// read function it passes (its own request, so its own token) and every caller asking meanwhile
// waits for that one read. A tag is an opaque fingerprint (a hash): it says "changed or not" and
// carries no data, so a caller never sees through the tag what another caller's read returned.
//
// Sharing is per viewer too (issue 27): TagFor answers the shared tag only to a viewer whose own
// token read the key within the trust window (their page, an action, their own poll); a viewer
// whose last own read is older reads again with their own token, so a viewer who lost access
// learns it from the v2 API instead of being told "unchanged" from someone else's read. An idle
// page may accept an older shared tag (maxAge), so many idle viewers cost one read per maxAge.
//
// State lives in the Watcher value (one per process, built by its owner); there is no package-level
// state. Entries not asked for during idleAfter are dropped.
package watch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// ReadFunc reads the current change tag of a key upstream.
type ReadFunc func(ctx context.Context) (string, error)

// Watcher shares change reads between the callers of one process.
type Watcher struct {
	interval  time.Duration
	idleAfter time.Duration
	trust     time.Duration
	now       func() time.Time

	reads atomic.Int64

	mu      sync.Mutex
	entries map[string]*entry
	sweptAt time.Time
}

type entry struct {
	viewers  map[string]time.Time // viewer -> when their own token last read the key
	tag      string
	readAt   time.Time // zero: never read
	usedAt   time.Time
	inflight chan struct{} // closed when the running read ends; nil when none runs
	lastErr  error
}

// New returns a Watcher reading each key at most once per interval (a second when interval <= 0).
// now is the clock (time.Now when nil).
func New(interval time.Duration, now func() time.Time) *Watcher {
	if interval <= 0 {
		interval = time.Second
	}
	if now == nil {
		now = time.Now
	}
	return &Watcher{interval: interval, idleAfter: 20 * interval, trust: DefaultTrust, now: now, entries: map[string]*entry{}}
}

// DefaultTrust is how long a viewer's own read lets them be answered from others' reads.
const DefaultTrust = 10 * time.Minute

// maxViewers bounds the viewers remembered per key (the oldest are forgotten first: they then read
// with their own token once more).
const maxViewers = 1000

// Reads counts the upstream reads made through Tag since the Watcher was built.
func (w *Watcher) Reads() int64 { return w.reads.Load() }

// Tag returns key's change tag, calling read only when no read of key ended within the interval
// and none is running (then it waits for that one). A failed read is not cached: the error goes to
// the caller that read and to those that waited.
func (w *Watcher) Tag(ctx context.Context, key string, read ReadFunc) (string, error) {
	return w.tag(ctx, key, "", w.interval, read)
}

// TagFor is Tag for one viewer (a stable id of the person, e.g. their subject): the shared tag is
// answered only when the viewer's own token read key within the trust window; otherwise read runs
// (it must use the viewer's own token) whatever the shared tag's age. maxAge > interval accepts an
// older shared tag (an idle page that polls once a minute); maxAge <= 0 means the interval.
func (w *Watcher) TagFor(ctx context.Context, key, viewer string, maxAge time.Duration, read ReadFunc) (string, error) {
	maxAge = max(maxAge, w.interval)
	w.mu.Lock()
	e := w.entries[key]
	trusted := e != nil && viewer != "" && w.now().Sub(e.viewers[viewer]) < w.trust
	w.mu.Unlock()
	if !trusted {
		w.reads.Add(1)
		tag, err := read(ctx)
		if err != nil {
			return "", err
		}
		w.ObserveBy(key, viewer, tag)
		return tag, nil
	}
	return w.tag(ctx, key, viewer, maxAge, read)
}

func (w *Watcher) tag(ctx context.Context, key, viewer string, maxAge time.Duration, read ReadFunc) (string, error) {
	for {
		w.mu.Lock()
		now := w.now()
		w.sweep(now)
		e := w.entries[key]
		if e == nil {
			e = &entry{}
			w.entries[key] = e
		}
		e.usedAt = now
		if !e.readAt.IsZero() && now.Sub(e.readAt) < maxAge {
			tag := e.tag
			w.mu.Unlock()
			return tag, nil
		}
		if wait := e.inflight; wait != nil {
			w.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			w.mu.Lock()
			err := e.lastErr
			fresh := !e.readAt.IsZero() && w.now().Sub(e.readAt) < maxAge
			tag := e.tag
			w.mu.Unlock()
			if err != nil {
				return "", err
			}
			if fresh {
				return tag, nil
			}
			continue
		}
		done := make(chan struct{})
		e.inflight = done
		w.mu.Unlock()

		w.reads.Add(1)
		tag, err := read(ctx)

		w.mu.Lock()
		e.inflight, e.lastErr = nil, err
		if err == nil {
			e.tag, e.readAt = tag, w.now()
			e.sawBy(viewer, e.readAt)
		}
		close(done)
		w.mu.Unlock()
		return tag, err
	}
}

// sawBy records that viewer's own token read the entry at t. Caller holds w.mu.
func (e *entry) sawBy(viewer string, t time.Time) {
	if viewer == "" {
		return
	}
	if e.viewers == nil {
		e.viewers = map[string]time.Time{}
	}
	if _, ok := e.viewers[viewer]; !ok && len(e.viewers) >= maxViewers {
		oldest, oldestAt := "", time.Time{}
		for v, at := range e.viewers {
			if oldest == "" || at.Before(oldestAt) {
				oldest, oldestAt = v, at
			}
		}
		delete(e.viewers, oldest)
	}
	e.viewers[viewer] = t
}

// ObserveBy is Observe by a viewer who read the tag with their own token (their page, an action):
// it also opens their trust window (TagFor).
func (w *Watcher) ObserveBy(key, viewer, tag string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	e := w.entries[key]
	if e == nil {
		e = &entry{}
		w.entries[key] = e
	}
	e.tag, e.readAt, e.usedAt, e.lastErr = tag, now, now, nil
	e.sawBy(viewer, now)
}

// Observe records a tag the caller has just read itself (a page shown, an action's answer), so the
// next Tag of key needs no upstream read and other viewers learn of the change at once.
func (w *Watcher) Observe(key, tag string) { w.ObserveBy(key, "", tag) } // no viewer: no trust window

// sweep drops entries nobody asked for during idleAfter, at most once per interval. Caller holds w.mu.
func (w *Watcher) sweep(now time.Time) {
	if now.Sub(w.sweptAt) < w.interval {
		return
	}
	w.sweptAt = now
	for key, e := range w.entries {
		if e.inflight == nil && now.Sub(e.usedAt) > w.idleAfter {
			delete(w.entries, key)
		}
	}
}
