package statedb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Changes is what this process learns of the changes other processes make to a PostgreSQL
// database, for the caches that hold rows in memory there (the sessions, the customer section of
// the work index: docs/performance.md, issue 43). Triggers announce every change on a channel
// (SessionChangesChannel, WorkChangesChannel), whoever makes it; one listener on a connection of
// its own (DedicatedConn) LISTENs to them and hands each notification to the caches that
// subscribed to its channel, which drop what it names.
//
// A notification arrives a little after its commit, so the listener also sends itself a heartbeat
// every heartbeatEvery while a cache is used: PostgreSQL delivers notifications in commit order,
// so once a heartbeat sent at s comes back, every change committed before s has been handed on.
// A cache answers only while Fresh (the last heartbeat back was sent less than leaseFor ago), and
// a writer whose change must be in no other replica's answer once it returns waits Settle
// (propagation, more than leaseFor) after its commit. When the connection is down or lags, the
// heartbeats stop coming back and Fresh turns false within leaseFor; when it reconnects, every
// subscriber is told "*" (notifications sent meanwhile are lost) before Fresh can be true again.
// A process with no lookups for idleAfter sends no heartbeats.
//
// One per database and process (DB.Changes): one listener connection per replica
// (DedicatedConnsPerReplica), one protocol for every cache.
type Changes struct {
	channels []string
	connect  func(ctx context.Context) (*pgx.Conn, error)
	// start is the base of the monotonic times below (nanoseconds since start).
	start time.Time

	// lease is the time (since start, +1) a heartbeat that came back was sent; 0: none.
	lease atomic.Int64
	// demand is when (since start) Fresh was last asked: heartbeats only while a cache is used.
	demand atomic.Int64
	// listenerPID is the listener connection's backend (tests terminate it); 0 while down.
	listenerPID atomic.Uint32

	mu          sync.Mutex
	subscribers map[string][]func(payload string)

	stop context.CancelFunc
	done chan struct{}
}

// WorkChangesChannel is the PostgreSQL channel on which every statement that writes a table the
// work index's customer section reads (work_rows, work_viewers, work_denied) is announced, the
// table's name as the payload, by the triggers of migration 00034, whoever runs it. The replicas'
// customer section caches listen to it (internal/workindex).
const WorkChangesChannel = "portal_work_changes"

const (
	// heartbeatEvery is the listener's heartbeat period while a cache is used.
	heartbeatEvery = 20 * time.Millisecond
	// leaseFor is how long after a heartbeat was sent its return keeps Fresh true.
	leaseFor = 90 * time.Millisecond
	// Propagation is how long Settle waits after a commit: longer than leaseFor, with a margin for
	// two machines' clocks measuring the same interval.
	Propagation = 100 * time.Millisecond
	// idleAfter: no Fresh for this long and the heartbeats stop (an idle replica sends nothing;
	// its next lookup reads the database while the first heartbeat goes out).
	idleAfter = 2 * time.Second
	// idlePoll is how often an idle listener looks whether a cache is used again.
	idlePoll = 50 * time.Millisecond
	// heartbeatLost: a heartbeat not back after this long means a dead connection: reconnect.
	heartbeatLost = 5 * time.Second
)

// ChangesSharedName is DB.Changes's listener's name in DB.Shared: a test puts a listener of its own
// there (NewChanges with a connect it can hold) before the database's first use.
const ChangesSharedName = "statedb.Changes"

// Changes returns the database's listener, started on the first call; nil on SQLite, whose file
// belongs to one process (its caches see every write as it is made).
func (db *DB) Changes() *Changes {
	if db.engine != Postgres {
		return nil
	}
	return db.Shared(ChangesSharedName, func() any {
		return NewChanges(db.DedicatedConn, SessionChangesChannel, WorkChangesChannel)
	}).(*Changes)
}

// NewChanges starts a listener of these channels on the connections connect opens (one at a time,
// reconnecting until Close). DB.Changes is the one a process uses; tests make their own to hold
// or break its connections.
func NewChanges(connect func(ctx context.Context) (*pgx.Conn, error), channels ...string) *Changes {
	c := &Changes{channels: channels, connect: connect, start: time.Now(), subscribers: map[string][]func(string){}}
	ctx, stop := context.WithCancel(context.Background())
	c.stop, c.done = stop, make(chan struct{})
	go c.run(ctx)
	return c
}

// Subscribe hands every later notification on channel to fn (its payload), and "*" after every
// (re)connection, when notifications may have been lost. fn runs on the listener's goroutine: it
// must be quick and must not call back into c.
func (c *Changes) Subscribe(channel string, fn func(payload string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subscribers[channel] = append(c.subscribers[channel], fn)
}

// Fresh reports whether every change committed more than leaseFor ago has been handed to the
// subscribers: a cache may answer from memory now. Asking keeps the heartbeats going.
func (c *Changes) Fresh() bool {
	now := c.since()
	c.demand.Store(now)
	lease := c.lease.Load()
	return lease > 0 && now-(lease-1) < int64(leaseFor)
}

// Settle returns once a change this process committed before the call can be in no other
// replica's answer: every replica's subscribers have been told, or its caches do not answer. A
// writer settles once, after its last commit, before it answers; ctx ends the wait early when
// nobody waits for the answer any more.
func (c *Changes) Settle(ctx context.Context) {
	t := time.NewTimer(Propagation)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// ListenerPID is the listener connection's backend process id, 0 while it is down (tests
// terminate it with pg_terminate_backend).
func (c *Changes) ListenerPID() uint32 { return c.listenerPID.Load() }

// Close stops the listener.
func (c *Changes) Close() error {
	c.stop()
	<-c.done
	return nil
}

func (c *Changes) since() int64 { return int64(time.Since(c.start)) }

// run keeps a listener connection until ctx ends, with a growing pause while it fails.
func (c *Changes) run(ctx context.Context) {
	defer close(c.done)
	pause := 50 * time.Millisecond
	for ctx.Err() == nil {
		began := time.Now()
		_ = c.listen(ctx) // its failures show as the caches bypassed: the database reads count them
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
}

// announce hands payload to channel's subscribers ("" channel: to every subscriber).
func (c *Changes) announce(channel, payload string) {
	c.mu.Lock()
	var fns []func(string)
	if channel == "" {
		for _, s := range c.subscribers {
			fns = append(fns, s...)
		}
	} else {
		fns = c.subscribers[channel]
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn(payload)
	}
}

// listen runs one listener connection until it fails or ctx ends.
func (c *Changes) listen(ctx context.Context) error {
	conn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	heartbeats := "portal_heartbeat_" + channelSuffix()
	// The heartbeats are transactions of their own: no need to wait for their commit's flush.
	setup := "SET synchronous_commit = off; LISTEN " + pgx.Identifier{heartbeats}.Sanitize()
	for _, ch := range c.channels {
		setup += "; LISTEN " + pgx.Identifier{ch}.Sanitize()
	}
	if _, err := conn.Exec(ctx, setup); err != nil {
		return err
	}
	// Changes made before LISTEN took effect were announced to nobody: everything may have changed.
	c.announce("", "*")
	c.listenerPID.Store(conn.PgConn().PID())

	var seq uint64
	var sentAt, nextDue int64
	pending := false
	for {
		now := c.since()
		busy := now-c.demand.Load() < int64(idleAfter)
		if pending && now-sentAt > int64(heartbeatLost) {
			return errors.New("statedb: heartbeat lost")
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
		case n.Channel == heartbeats:
			if pending && n.Payload == strconv.FormatUint(seq, 10) {
				c.lease.Store(sentAt + 1)
				pending = false
				nextDue = sentAt + int64(heartbeatEvery)
			}
		default:
			c.announce(n.Channel, n.Payload)
		}
	}
}

// channelSuffix names one listener's heartbeat channel.
func channelSuffix() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
