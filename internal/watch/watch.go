// Package watch tells whether something shown to many people has changed, reading it upstream at most
// once per interval however many of them ask (live notices on quote and contract pages, issue 18).
//
// A Watcher keeps, per key (e.g. "quote:900004"), the last change tag read and when. Tag answers the
// cached tag while it is younger than the interval; otherwise the first caller reads it with the
// read function it passes (its own request, so its own token) and every caller asking meanwhile
// waits for that one read. A tag is an opaque fingerprint (a hash): it says "changed or not" and
// carries no data, so a caller never sees through the tag what another caller's read returned.
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
	now       func() time.Time

	reads atomic.Int64

	mu      sync.Mutex
	entries map[string]*entry
	sweptAt time.Time
}

type entry struct {
	// readers are the viewers whose own read of the key succeeded, and when (see ReadBy).
	readers  map[string]time.Time
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
	return &Watcher{interval: interval, idleAfter: 20 * interval, now: now, entries: map[string]*entry{}}
}

// OwnReadValid is how long a viewer's own successful read of a key lets the shared tag answer
// them "not modified" without reading again.
const OwnReadValid = 2 * time.Minute

// ReadBy records that viewer's own read of key (with their own token) succeeded just now.
func (w *Watcher) ReadBy(key, viewer string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	e := w.entries[key]
	if e == nil {
		e = &entry{usedAt: now}
		w.entries[key] = e
	}
	if e.readers == nil {
		e.readers = map[string]time.Time{}
	}
	e.readers[viewer] = now
}

// ReadRecentlyBy reports whether viewer's own read of key succeeded within OwnReadValid. Only then
// may a shared tag (read with whoever asked first) answer them "not modified": otherwise a person
// whose token cannot read the object could learn from the tag that it exists and how it stands.
func (w *Watcher) ReadRecentlyBy(key, viewer string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.entries[key]
	if e == nil || viewer == "" {
		return false
	}
	at, ok := e.readers[viewer]
	return ok && w.now().Sub(at) < OwnReadValid
}

// Interval is the shortest time between two upstream reads of one key.
func (w *Watcher) Interval() time.Duration { return w.interval }

// Reads counts the upstream reads made through Tag since the Watcher was built.
func (w *Watcher) Reads() int64 { return w.reads.Load() }

// Tag returns key's change tag, calling read only when no read of key ended within the interval
// and none is running (then it waits for that one). A failed read is not cached: the error goes to
// the caller that read and to those that waited.
func (w *Watcher) Tag(ctx context.Context, key string, read ReadFunc) (string, error) {
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
		if !e.readAt.IsZero() && now.Sub(e.readAt) < w.interval {
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
			fresh := !e.readAt.IsZero() && w.now().Sub(e.readAt) < w.interval
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
		}
		close(done)
		w.mu.Unlock()
		return tag, err
	}
}

// Observe records a tag the caller has just read itself (a page shown, an action's answer), so the
// next Tag of key needs no upstream read and other viewers learn of the change at once.
func (w *Watcher) Observe(key, tag string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	e := w.entries[key]
	if e == nil {
		e = &entry{}
		w.entries[key] = e
	}
	e.tag, e.readAt, e.usedAt, e.lastErr = tag, now, now, nil
}

// sweep drops entries nobody asked for during idleAfter, at most once per interval. Caller holds w.mu.
func (w *Watcher) sweep(now time.Time) {
	if now.Sub(w.sweptAt) < w.interval {
		return
	}
	w.sweptAt = now
	for key, e := range w.entries {
		if e.inflight == nil && now.Sub(e.usedAt) > w.idleAfter {
			delete(w.entries, key)
			continue
		}
		for viewer, at := range e.readers {
			if now.Sub(at) >= OwnReadValid {
				delete(e.readers, viewer)
			}
		}
	}
}
