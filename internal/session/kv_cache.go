package session

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// valueCache holds, for one state database and this process, the session_values rows its sqlKVs
// read (sessions, the cookie store's revocations, seen jtis; an absent row too), so a signed-in
// request reads nothing from the database: the session read was every page's only query left
// (docs/performance.md, issue 43). Every sqlKV on the database shares it (statedb.DB.Shared),
// so two stores on one SQLite file see each other's writes.
//
// What it trusts, and for how long:
//   - SQLite: the file belongs to this process (docs/operations.md), and every write goes through a
//     sqlKV, which drops the key here before its caller goes on: an entry is trusted until dropped.
//   - PostgreSQL: other replicas write too. Migration 00020's trigger announces every change of a
//     row (statedb.SessionChangesChannel, whoever wrote it), and the replica's listener
//     (statedb.Changes, shared with the work index's customer section) hands the keys announced
//     to drop. The cache answers only while the listener is Fresh (its heartbeat lease: every
//     change committed more than 90 ms ago has been dropped), and a writer waits
//     statedb.Propagation after its commit before it answers (settle). A request that reaches a
//     replica after a sign-out elsewhere has answered therefore finds either the session dropped
//     or the cache untrusted, and reads the database. When the listener's connection is down or
//     lags, the cache is bypassed within the lease; when it reconnects, the cache is emptied
//     (notifications sent meanwhile are lost, "*") before it is trusted again.
//
// An entry is never kept longer than maxEntryAge, and at most maxEntries are kept.
type valueCache struct {
	// watched: the database has other writers (PostgreSQL), so trust needs the listener's lease.
	watched bool
	// start is the base of the monotonic times below (nanoseconds since start).
	start time.Time

	mu      sync.Mutex
	entries map[string]cacheEntry
	// gen counts the drops: a row read before a drop is not kept after it (keep).
	gen uint64

	// changes is the listener on PostgreSQL (watch); nil on SQLite.
	changes *statedb.Changes
	hits    atomic.Int64
}

type cacheEntry struct {
	value   []byte // nil: no such row
	expires int64  // the row's expires_at (unix µs, the store's clock); math.MaxInt64 for no row
	at      int64  // when read (since start)
}

const (
	// maxEntries bounds the cache (a sealed session is about 2 KiB: about 20 MiB).
	maxEntries = 10_000
	// maxEntryAge bounds what any entry is trusted for, whatever else holds.
	maxEntryAge = time.Minute
)

// sharedCacheName is the cache's name in statedb.DB.Shared.
const sharedCacheName = "session.valueCache"

// cacheOf returns the cache of db, listening to the database's changes on PostgreSQL.
func cacheOf(db *statedb.DB) *valueCache {
	changes := db.Changes() // not inside Shared's make: Shared holds the database's lock
	return db.Shared(sharedCacheName, func() any {
		c := newValueCache(changes != nil)
		if c.watched {
			c.watch(changes)
		}
		return c
	}).(*valueCache)
}

func newValueCache(watched bool) *valueCache {
	return &valueCache{watched: watched, start: time.Now(), entries: map[string]cacheEntry{}}
}

// watch makes changes the cache's listener: the keys it announces are dropped, and everything
// after a reconnection.
func (c *valueCache) watch(changes *statedb.Changes) {
	c.changes = changes
	changes.Subscribe(statedb.SessionChangesChannel, func(key string) {
		if key == "*" {
			c.clear()
			return
		}
		c.drop(key)
	})
}

func (c *valueCache) since() int64 { return int64(time.Since(c.start)) }

// trusted reports whether entries may answer now (asking keeps the listener's heartbeats going).
func (c *valueCache) trusted() bool {
	return !c.watched || c.changes.Fresh()
}

// lookup answers key from the cache: ok=false when it cannot (not kept, too old, untrusted).
// value nil with ok: no such row. nowMicros is the store's clock, for the row's expiry.
func (c *valueCache) lookup(key string, nowMicros int64) (value []byte, ok bool) {
	if !c.trusted() {
		return nil, false
	}
	now := c.since()
	c.mu.Lock()
	e, found := c.entries[key]
	c.mu.Unlock()
	if !found || now-e.at >= int64(maxEntryAge) {
		return nil, false
	}
	c.hits.Add(1)
	if e.expires <= nowMicros {
		return nil, true
	}
	return e.value, true
}

// generation is what keep is given: the drops so far, taken before the database is read.
func (c *valueCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// keep stores a row read from the database (value nil: none), unless a key was dropped since gen
// was taken: the read may predate the change that dropped it.
func (c *valueCache) keep(gen uint64, key string, value []byte, expires int64) {
	now := c.since()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if _, ok := c.entries[key]; !ok && len(c.entries) >= maxEntries {
		for k, e := range c.entries {
			if now-e.at >= int64(maxEntryAge) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries { // still full: drop arbitrary entries down to 90 %
			if len(c.entries) < maxEntries*9/10 {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = cacheEntry{value: value, expires: expires, at: now}
}

// drop forgets keys (a write here, or one announced by the database).
func (c *valueCache) drop(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, k := range keys {
		delete(c.entries, k)
	}
}

// clear forgets everything.
func (c *valueCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

// settle returns once this process's writes so far can be in no other replica's cache: at once on
// SQLite (drop did it), after statedb.Propagation on PostgreSQL. Callers settle once, after their
// last write, before they answer; ctx ends the wait when nobody waits for the answer any more.
func (c *valueCache) settle(ctx context.Context) {
	if !c.watched {
		return
	}
	c.changes.Settle(ctx)
}

// noRow is a cache entry's expiry for a key without row.
const noRow = math.MaxInt64
