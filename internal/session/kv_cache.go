package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
//     row (statedb.SessionChangesChannel, whoever wrote it), and a listener on a connection of its
//     own drops the keys announced. A notification is delivered a little after the commit, so the
//     listener also sends itself a heartbeat every heartbeatEvery: PostgreSQL delivers
//     notifications in commit order, so once a heartbeat sent at s comes back, every change
//     committed before s has been dropped. The cache answers only while the last heartbeat back
//     was sent less than leaseFor ago, and a writer waits propagation (> leaseFor) after its
//     commit before it answers (settle). A request that reaches a replica after a sign-out
//     elsewhere has answered therefore finds either the session dropped or the cache untrusted,
//     and reads the database. When the listener's connection is down or lags, the heartbeats stop
//     coming back and the cache is bypassed within leaseFor; when it reconnects, the cache is
//     emptied (notifications sent meanwhile are lost) before it is trusted again.
//
// An entry is never kept longer than maxEntryAge, and at most maxEntries are kept.
type valueCache struct {
	// watched: the database has other writers (PostgreSQL), so trust needs the lease.
	watched bool
	// start is the base of the monotonic times below (nanoseconds since start).
	start time.Time

	mu      sync.Mutex
	entries map[string]cacheEntry
	// gen counts the drops: a row read before a drop is not kept after it (keep).
	gen uint64

	// lease is the time (since start, +1) a heartbeat that came back was sent; 0: none.
	lease atomic.Int64
	// demand is when (since start) the cache was last asked: heartbeats only while it is used.
	demand atomic.Int64
	// listenerPID is the listener connection's backend (tests terminate it); 0 while down.
	listenerPID atomic.Uint32
	hits        atomic.Int64

	connect func(ctx context.Context) (*pgx.Conn, error)
	stop    context.CancelFunc
	done    chan struct{}
}

type cacheEntry struct {
	value   []byte // nil: no such row
	expires int64  // the row's expires_at (unix µs, the store's clock); math.MaxInt64 for no row
	at      int64  // when read (since start)
}

const (
	// heartbeatEvery is the listener's heartbeat period while the cache is used.
	heartbeatEvery = 20 * time.Millisecond
	// leaseFor is how long after a heartbeat was sent its return lets the cache answer.
	leaseFor = 90 * time.Millisecond
	// propagation is how long a writer waits after its last commit on PostgreSQL (settle): longer
	// than leaseFor, with a margin for two machines' clocks measuring the same interval.
	propagation = 100 * time.Millisecond
	// idleAfter: no lookups for this long and the heartbeats stop (an idle replica sends nothing;
	// its next request reads the database while the first heartbeat goes out).
	idleAfter = 2 * time.Second
	// idlePoll is how often an idle listener looks whether the cache is used again.
	idlePoll = 50 * time.Millisecond
	// heartbeatLost: a heartbeat not back after this long means a dead connection: reconnect.
	heartbeatLost = 5 * time.Second
	// maxEntries bounds the cache (a sealed session is about 2 KiB: about 20 MiB).
	maxEntries = 10_000
	// maxEntryAge bounds what any entry is trusted for, whatever else holds.
	maxEntryAge = time.Minute
)

// sharedCacheName is the cache's name in statedb.DB.Shared.
const sharedCacheName = "session.valueCache"

// cacheOf returns the cache of db, starting its listener on PostgreSQL.
func cacheOf(db *statedb.DB) *valueCache {
	return db.Shared(sharedCacheName, func() any {
		c := newValueCache(db.Engine() == statedb.Postgres)
		if c.watched {
			c.connect = db.DedicatedConn
			c.run()
		}
		return c
	}).(*valueCache)
}

func newValueCache(watched bool) *valueCache {
	return &valueCache{watched: watched, start: time.Now(), entries: map[string]cacheEntry{}}
}

func (c *valueCache) since() int64 { return int64(time.Since(c.start)) }

// trusted reports whether entries may answer now.
func (c *valueCache) trusted(now int64) bool {
	if !c.watched {
		return true
	}
	lease := c.lease.Load()
	return lease > 0 && now-(lease-1) < int64(leaseFor)
}

// lookup answers key from the cache: ok=false when it cannot (not kept, too old, untrusted).
// value nil with ok: no such row. nowMicros is the store's clock, for the row's expiry.
func (c *valueCache) lookup(key string, nowMicros int64) (value []byte, ok bool) {
	now := c.since()
	c.demand.Store(now)
	if !c.trusted(now) {
		return nil, false
	}
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
// SQLite (drop did it), after propagation on PostgreSQL. Callers settle once, after their last
// write, before they answer.
func (c *valueCache) settle(ctx context.Context) {
	if !c.watched {
		return
	}
	t := time.NewTimer(propagation)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done(): // nobody waits for the answer any more
	}
}

// Close stops the listener.
func (c *valueCache) Close() error {
	if c.stop != nil {
		c.stop()
		<-c.done
	}
	return nil
}

// run starts the listener: it reconnects until Close, with a growing pause while it fails.
func (c *valueCache) run() {
	ctx, stop := context.WithCancel(context.Background())
	c.stop, c.done = stop, make(chan struct{})
	go func() {
		defer close(c.done)
		pause := 50 * time.Millisecond
		for ctx.Err() == nil {
			began := time.Now()
			_ = c.listen(ctx) // its failures show as the cache bypassed: the store's reads count them
			c.lease.Store(0)
			c.listenerPID.Store(0)
			if time.Since(began) > time.Minute {
				pause = 50 * time.Millisecond
			}
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
			pause = min(2*pause, 5*time.Second)
		}
	}()
}

// listen runs one listener connection until it fails or ctx ends.
func (c *valueCache) listen(ctx context.Context) error {
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	heartbeats := "portal_session_heartbeat_" + channelSuffix()
	// The heartbeats are transactions of their own: no need to wait for their commit's flush.
	if _, err := conn.Exec(ctx, "SET synchronous_commit = off; LISTEN "+pgx.Identifier{statedb.SessionChangesChannel}.Sanitize()+
		"; LISTEN "+pgx.Identifier{heartbeats}.Sanitize()); err != nil {
		return err
	}
	// Changes made before LISTEN took effect were announced to nobody: forget everything.
	c.clear()
	c.listenerPID.Store(conn.PgConn().PID())

	var seq uint64
	var sentAt, nextDue int64
	pending := false
	for {
		now := c.since()
		busy := now-c.demand.Load() < int64(idleAfter)
		if pending && now-sentAt > int64(heartbeatLost) {
			return errors.New("session: heartbeat lost")
		}
		if !pending && busy && now >= nextDue {
			seq++
			sentAt = c.since()
			if _, err := conn.Exec(ctx, "SELECT pg_notify($1, $2)", heartbeats, strconv.FormatUint(seq, 10)); err != nil {
				return err
			}
			pending = true
		}
		wait := idlePoll
		switch {
		case pending:
			wait = heartbeatEvery
		case busy:
			wait = max(time.Millisecond, time.Duration(nextDue-c.since()))
		}
		waitCtx, cancel := context.WithTimeout(ctx, wait)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err)) && !conn.IsClosed() {
				continue
			}
			return err
		}
		switch {
		case n.Channel == statedb.SessionChangesChannel && n.Payload == "*":
			c.clear()
		case n.Channel == statedb.SessionChangesChannel:
			c.drop(n.Payload)
		case n.Channel == heartbeats && pending && n.Payload == strconv.FormatUint(seq, 10):
			c.lease.Store(sentAt + 1)
			pending = false
			nextDue = sentAt + int64(heartbeatEvery)
		}
	}
}

// channelSuffix names one listener's heartbeat channel.
func channelSuffix() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// noRow is a cache entry's expiry for a key without row.
const noRow = math.MaxInt64
