package workindex

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cpqportal/portal/internal/statedb"
)

// maxCustomerAnswers bounds the answers customerCache holds; when full it starts again empty.
const maxCustomerAnswers = 10_000

// customerCache holds CustomerWork's answers in memory: the customer page is the portal's most
// frequent page and its section was its only database read (issue 43, docs/performance.md). It is
// exact, not a time to live: every transaction of the index through this process, whatever it
// changed, bumps gen after its commit and before it returns (Index.tx), and an answer counts only
// while gen is the one read before its statement ran.
//
//   - SQLite: the file belongs to one process and every write of the index goes through this
//     package, so a refusal (Forget), a new sighting or a purge is in every later answer as soon as
//     the write returns, as it was without the cache.
//   - PostgreSQL: several replicas write one database. The triggers of migration 00034 announce
//     every statement that writes work_rows, work_viewers or work_denied
//     (statedb.WorkChangesChannel), whoever runs it, and the replica's listener (statedb.Changes,
//     shared with the session cache) bumps gen at each; an answer counts only while the listener
//     is Fresh (its heartbeat lease: every change committed more than 90 ms ago has bumped gen),
//     and a reconnection bumps gen too. A write that takes a row from a viewer (a refusal, a
//     purge: Index.tx's hides) waits statedb.Propagation after its commit before it returns, so
//     every replica's next answer leaves the row out, as without the cache: access the v2 API
//     refused is gone everywhere at once. Every other write does not wait: a new row, a viewer's
//     read, a change, new facts of a row someone else had read (it leaves that reader's lists until
//     they read it again). This replica's next answer has it at once, another replica's within
//     about 0.1 s (its next heartbeat back); meanwhile that replica answers as before the write,
//     with the rows and facts each viewer did read, never the new ones, so the moment shows
//     nobody what they may not see, and a wait there would put 0.1 s on every page that records a
//     read or a change (the state group's sighting, budget 3 ms, measured 105 ms at 100k rows with
//     the wait). While the listener is down or lags, every answer is read from the database.
//
// One per database (statedb.DB.Shared): every Index on one database must see the others' writes.
type customerCache struct {
	gen atomic.Uint64
	// changes is the PostgreSQL listener whose lease answers need; nil on SQLite.
	changes *statedb.Changes
	// hits counts the answers given from memory (tests prove the cache answers).
	hits    atomic.Int64
	mu      sync.Mutex
	answers map[customerKey]customerAnswer
}

// customerKey is what CustomerWork's answer depends on besides the index's rows.
type customerKey struct {
	viewer   string
	team     bool
	customer int32
	n        int
}

type customerAnswer struct {
	gen               uint64
	quotes, contracts []Row
}

// customerCacheFor is db's cache (nil for no database).
func customerCacheFor(db *statedb.DB) *customerCache {
	if db == nil {
		return nil
	}
	changes := db.Changes() // not inside Shared's make: Shared holds the database's lock
	return db.Shared("workindex.customerWork", func() any {
		c := &customerCache{answers: map[customerKey]customerAnswer{}, changes: changes}
		if c.changes != nil {
			// Any write of the tables the section reads may change any answer.
			c.changes.Subscribe(statedb.WorkChangesChannel, func(string) { c.gen.Add(1) })
		}
		return c
	}).(*customerCache)
}

// get is the answer kept for k, if no write of the index came after it was read.
func (c *customerCache) get(k customerKey) (quotes, contracts []Row, ok bool) {
	if c.changes != nil && !c.changes.Fresh() {
		return nil, nil, false // changes of other replicas may not have bumped gen yet
	}
	c.mu.Lock()
	a, ok := c.answers[k]
	c.mu.Unlock()
	if !ok || a.gen != c.gen.Load() {
		return nil, nil, false
	}
	c.hits.Add(1)
	return slices.Clone(a.quotes), slices.Clone(a.contracts), true
}

// put keeps an answer read by a statement that started at generation gen.
func (c *customerCache) put(k customerKey, gen uint64, quotes, contracts []Row) {
	if gen != c.gen.Load() {
		return // a write came meanwhile: the answer may be older than it
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.answers) >= maxCustomerAnswers {
		clear(c.answers)
	}
	c.answers[k] = customerAnswer{gen: gen, quotes: slices.Clone(quotes), contracts: slices.Clone(contracts)}
}

// tx runs fn in a transaction of the state database; every write of the index goes through it,
// so that the customer section's cache never answers with what a write changed. fn sets *hides
// when its write takes a row from a viewer (a refusal, a purge); on PostgreSQL the write then
// waits statedb.Propagation after its commit, so no replica's cache answers with the row once it
// returns (customerCache). Every other write returns at once.
func (ix *Index) tx(ctx context.Context, fn func(tx *sql.Tx, hides *bool) error) error {
	hides := false
	err := ix.db.Tx(ctx, func(tx *sql.Tx) error { return fn(tx, &hides) })
	if ix.customers != nil {
		ix.customers.gen.Add(1) // after the commit, before the writer's caller goes on
		if hides && ix.customers.changes != nil {
			// The caller waits for its answer even when the write's own deadline passed.
			ix.customers.changes.Settle(context.WithoutCancel(ctx))
		}
	}
	return err
}
