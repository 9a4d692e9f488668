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

// customerCache holds CustomerWork's answers in memory on SQLite, where the file belongs to one
// process and every write of the index goes through this package (Index.tx): the customer page
// is the portal's most frequent page and its section was its only database read (issue 43,
// docs/performance.md). It is exact, not a lease: every transaction of the index, whatever it
// changed, bumps gen after its commit and before it returns, and an answer counts only while
// gen is the one read before its statement ran. So a refusal (Forget), a new sighting or a purge
// is in every later answer as soon as the write returns, as it was without the cache.
//
// PostgreSQL has no such cache: several replicas write one database, and the exactness above
// would need what the sessions have (a trigger announcing changes, a listener with a lease, a
// wait after every write that hides a row); not built.
//
// One per database (statedb.DB.Shared): every Index on one file must see the others' writes.
type customerCache struct {
	gen     atomic.Uint64
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

// customerCacheFor is db's cache, or nil on PostgreSQL.
func customerCacheFor(db *statedb.DB) *customerCache {
	if db == nil || db.Engine() != statedb.SQLite {
		return nil
	}
	return db.Shared("workindex.customerWork", func() any {
		return &customerCache{answers: map[customerKey]customerAnswer{}}
	}).(*customerCache)
}

// get is the answer kept for k, if no write of the index came after it was read.
func (c *customerCache) get(k customerKey) (quotes, contracts []Row, ok bool) {
	c.mu.Lock()
	a, ok := c.answers[k]
	c.mu.Unlock()
	if !ok || a.gen != c.gen.Load() {
		return nil, nil, false
	}
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
// so that the customer section's cache never answers with what a write changed.
func (ix *Index) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	err := ix.db.Tx(ctx, fn)
	if ix.customers != nil {
		ix.customers.gen.Add(1) // after the commit, before the writer's caller goes on
	}
	return err
}
