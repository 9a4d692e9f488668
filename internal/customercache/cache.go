// Package customercache keeps each signed-in user's customer list in memory for a short time, so
// that searching, sorting and paging 100,000 customers costs no v2 call per keystroke.
//
// The v2 API has no search or pagination over the whole list (docs/v2-assumptions.md A8: GET
// /v2/customer/ answers every customer, with a strong ETag). The cache therefore:
//   - fetches the list once per user and decodes it as a stream into compact rows, reading only
//     the fields the list shows (apiclient.ListItems; no raw JSON is kept; strings live in a few
//     blocks of text per snapshot; search keys are lower-cased once, as the bytes arrive);
//   - keys entries by the user (the token's subject), never shares them: each user's token may
//     see different customers;
//   - reuses a list for TTL, then revalidates it with If-None-Match (a 304 keeps the snapshot);
//   - runs one fetch per user at a time (concurrent requests wait for the same fetch), in a
//     context detached from the request that started it, so a user typing on (which cancels
//     their previous request) does not cancel the fetch everyone waits for;
//   - keeps at most MaxUsers users (least recently used dropped);
//   - applies the user's own changes at once (Upsert), or forgets the list (Invalidate);
//   - returns the memory a download used while decoding to the operating system once the new
//     list is in place (Options.ReleaseMemory).
package customercache

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
)

// Lister fetches the customer list; *apiclient.CustomersService implements it. The context
// carries the user's token (apiclient.WithToken).
type Lister interface {
	ListItems(ctx context.Context, etag string, fn func(*apiclient.CustomerListItem) error) (newETag string, notModified bool, err error)
}

// ErrFetchFailed wraps every error of a failed list fetch (the v2 API's error is wrapped too), so
// a caller can tell it from its own context ending while it waited.
var ErrFetchFailed = errors.New("customercache: fetching the customer list failed")

// Defaults of Options.
const (
	DefaultMaxUsers     = 5
	DefaultFetchTimeout = 2 * time.Minute
)

// Options configure a Cache.
type Options struct {
	// TTL is how long a list is used before it is revalidated (PORTAL_CUSTOMER_CACHE_TTL).
	// 0 revalidates on every Get (an unchanged list then costs a 304, not a download).
	TTL time.Duration
	// MaxUsers bounds how many users' lists are kept (default DefaultMaxUsers).
	MaxUsers int
	// FetchTimeout bounds one fetch of the list (default DefaultFetchTimeout).
	FetchTimeout time.Duration
	// Now is the clock (default time.Now); tests inject one to expire entries.
	Now func() time.Time
	// ReleaseMemory runs after a downloaded list replaced an older one or filled a new entry
	// (default debug.FreeOSMemory). Decoding 100,000 customers leaves about as much garbage as
	// the list itself (growing slices, the dropped list), and the collector's target doubles
	// the heap on top of the lists kept: five users' lists held 146-167 MiB resident without
	// it, 110-111 with it (docs/performance.md). Loads are rare (once per user and TTL), so a
	// collection per load costs little. Releases asked for while one runs are coalesced.
	ReleaseMemory func()
}

// Stats count what the cache did, for tests and metrics.
type Stats struct {
	Hits        int64 // Get answered from memory
	Fetches     int64 // lists downloaded (200)
	NotModified int64 // revalidations answered 304
	Errors      int64 // failed fetches
	Users       int   // users currently cached
}

// Cache holds per-user customer snapshots. It is safe for concurrent use.
type Cache struct {
	lister Lister
	opts   Options

	mu      sync.Mutex
	entries map[string]*entry
	lru     *list.List // of *entry, most recently used first
	stats   Stats

	// releasing is set while a goroutine runs ReleaseMemory; releaseWanted asks it for one more.
	releasing     atomic.Bool
	releaseWanted atomic.Bool
}

// entry is one user's cached list and the fetch in flight, if any.
type entry struct {
	user      string
	snap      *Snapshot
	fetchedAt time.Time
	stale     bool // Invalidate was called: revalidate on the next Get
	call      *call
	elem      *list.Element
	// gen counts Upsert and Invalidate calls; a fetch that started before one of them
	// re-applies the upserts made meanwhile (pending) and, after an Invalidate (invalidGen),
	// leaves the entry stale.
	gen        uint64
	invalidGen uint64
	pending    []*apiclient.Customer
}

// call is a fetch in flight; done is closed when snap/err are set.
type call struct {
	done chan struct{}
	snap *Snapshot
	err  error
}

// New returns a cache that fetches with lister.
func New(lister Lister, opts Options) *Cache {
	if opts.MaxUsers <= 0 {
		opts.MaxUsers = DefaultMaxUsers
	}
	if opts.FetchTimeout <= 0 {
		opts.FetchTimeout = DefaultFetchTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ReleaseMemory == nil {
		opts.ReleaseMemory = debug.FreeOSMemory
	}
	return &Cache{lister: lister, opts: opts, entries: map[string]*entry{}, lru: list.New()}
}

// Get returns the user's customer list: from memory while it is fresh, otherwise after fetching
// (or revalidating) it with ctx's token. It waits for at most ctx; the fetch itself goes on for
// other requests even if ctx ends first.
func (c *Cache) Get(ctx context.Context, user string) (*Snapshot, error) {
	c.mu.Lock()
	e := c.entryLocked(user)
	if e.snap != nil && !e.stale && c.opts.Now().Sub(e.fetchedAt) < c.opts.TTL {
		c.stats.Hits++
		snap := e.snap
		c.mu.Unlock()
		return snap, nil
	}
	if e.call == nil {
		e.call = &call{done: make(chan struct{})}
		go c.fetch(context.WithoutCancel(ctx), e, e.call, e.snap, e.gen)
	}
	cl := e.call
	c.mu.Unlock()

	select {
	case <-cl.done:
		return cl.snap, cl.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Peek returns the user's list if one is in memory, however old, without fetching.
func (c *Cache) Peek(user string) (*Snapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[user]
	if !ok || e.snap == nil {
		return nil, false
	}
	return e.snap, true
}

// entryLocked returns the user's entry, creating it (and dropping the least recently used
// beyond MaxUsers) if needed, and marks it most recently used.
func (c *Cache) entryLocked(user string) *entry {
	if e, ok := c.entries[user]; ok {
		c.lru.MoveToFront(e.elem)
		return e
	}
	e := &entry{user: user}
	e.elem = c.lru.PushFront(e)
	c.entries[user] = e
	for c.lru.Len() > c.opts.MaxUsers {
		oldest := c.lru.Back().Value.(*entry)
		// A fetch in flight for a dropped entry still answers its waiters; its result is
		// simply not kept.
		c.lru.Remove(oldest.elem)
		delete(c.entries, oldest.user)
	}
	return e
}

// fetch downloads (or revalidates) the list for e and answers cl.
func (c *Cache) fetch(ctx context.Context, e *entry, cl *call, previous *Snapshot, startGen uint64) {
	started := c.opts.Now()
	ctx, cancel := context.WithTimeout(ctx, c.opts.FetchTimeout)
	defer cancel()

	etag := ""
	if previous != nil {
		etag = previous.etag
	}
	b := newBuilder()
	newETag, notModified, err := c.lister.ListItems(ctx, etag, b.add)

	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(cl.done)
	e.call = nil
	if err != nil {
		e.pending = nil
		c.stats.Errors++
		cl.err = fmt.Errorf("%w: %w", ErrFetchFailed, err)
		return
	}
	snap := previous
	if notModified && previous != nil {
		c.stats.NotModified++
	} else {
		c.stats.Fetches++
		snap = b.build(newETag)
		c.releaseMemory() // in the background, once the waiters have their list
	}
	// The user changed customers while the list was on its way: their changes win (the list
	// may predate them).
	for _, cust := range e.pending {
		if next, err := snap.withCustomer(cust); err == nil {
			snap = next
		}
	}
	e.pending = nil
	e.stale = e.invalidGen > startGen
	e.snap = snap
	e.fetchedAt = started
	cl.snap = snap
}

// releaseMemory runs Options.ReleaseMemory in the background; a release asked for while one
// runs makes that one run again once, rather than starting another.
func (c *Cache) releaseMemory() {
	c.releaseWanted.Store(true)
	if !c.releasing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			for c.releaseWanted.Swap(false) {
				c.opts.ReleaseMemory()
			}
			c.releasing.Store(false)
			// A release asked for between the last Swap and the Store above is run here,
			// unless another goroutine took it over.
			if !c.releaseWanted.Load() || !c.releasing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// Upsert puts a customer the user just created or changed (the v2 API's answer) into their
// list, so the list shows it at once. Nothing happens when no list is cached.
func (c *Cache) Upsert(user string, cust *apiclient.Customer) {
	if cust == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[user]
	if !ok {
		return
	}
	e.gen++
	if e.call != nil {
		e.pending = append(e.pending, cust)
	}
	if e.snap == nil {
		return
	}
	next, err := e.snap.withCustomer(cust)
	if err != nil {
		e.stale, e.invalidGen = true, e.gen
		return
	}
	e.snap = next
}

// Invalidate makes the user's next Get revalidate the list with the v2 API.
func (c *Cache) Invalidate(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[user]; ok {
		e.gen++
		e.stale, e.invalidGen = true, e.gen
	}
}

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Users = len(c.entries)
	return s
}
