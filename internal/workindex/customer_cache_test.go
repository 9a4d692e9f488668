package workindex

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// replicas returns two indexes on one database: on PostgreSQL each on a statedb.DB of its own
// (a connection pool, a customer section cache and a listener each), as two replicas; on SQLite
// two indexes of one process on one file (its only use). prepare, when set, runs on replica B's
// database before its index is made.
func replicas(t *testing.T, engine statedb.Engine, c *clock, prepare func(db *statedb.DB)) (a, b *Index, dbA, dbB *statedb.DB) {
	t.Helper()
	if engine == statedb.Postgres {
		url := statedbtest.PostgresURL(t)
		dbA, dbB = statedbtest.OpenURL(t, url), statedbtest.OpenURL(t, url)
	} else {
		dbA = statedbtest.SQLite(t)
		dbB = dbA
	}
	if prepare != nil {
		prepare(dbB)
	}
	opts := Options{Now: c.now, Retention: 30 * 24 * time.Hour}
	return New(dbA, opts), New(dbB, opts), dbA, dbB
}

// fromCache asks ix for v's section of customer 7 until an answer comes from memory (on
// PostgreSQL the listener's first heartbeat must come back first) and returns its quotes' ids.
func fromCache(t *testing.T, ix *Index, v Viewer) []int64 {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		hits := ix.customers.hits.Load()
		quotes, _, err := ix.CustomerWork(context.Background(), v, 7, 10)
		must(t, err)
		if ix.customers.hits.Load() > hits {
			return ids(Page{Rows: quotes})
		}
	}
	t.Fatal("no CustomerWork was answered from memory within 10 s")
	return nil
}

// quotesOf is v's section of customer 7 on ix, read now.
func quotesOf(t *testing.T, ix *Index, v Viewer) []int64 {
	t.Helper()
	quotes, _, err := ix.CustomerWork(context.Background(), v, 7, 10)
	must(t, err)
	return ids(Page{Rows: quotes})
}

func quoteOf7(id int64, oneOff int64) QuoteSighting {
	return QuoteSighting{QuoteID: id, CPQID: 1, CustomerID: 7, Customer: "Acme", OneOffCents: oneOff}
}

// Every write on replica A that takes a row from a viewer (a refusal, a purge) is in replica B's
// very next answer, though B held the row in memory: the write returns only once no replica's
// cache can answer with it (issue 43). New facts read by someone else (a new total, a move to
// another customer) take the row out of A's next answer at once and out of B's within a moment,
// B showing meanwhile only the facts she did read, never the new ones: that write waits for
// nobody. A change that hides nothing (her own change of a row only she read) and a new row reach
// B's answers too, without a write of B's.
func TestCustomerWorkCacheHidesAcrossReplicasAtOnce(t *testing.T) {
	for _, engine := range []statedb.Engine{statedb.SQLite, statedb.Postgres} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
			a, b, _, _ := replicas(t, engine, c, nil)
			tick := func() { c.t = c.t.Add(time.Minute) }
			must(t, a.ObserveQuote(ctx, alice, quoteOf7(100, 0), ActCreated))
			tick()
			must(t, a.ObserveQuote(ctx, alice, quoteOf7(101, 0), ActCreated))
			tick()
			must(t, a.ObserveQuote(ctx, alice, quoteOf7(102, 0), ActCreated))
			tick()
			must(t, a.ObserveQuote(ctx, alice, quoteOf7(103, 0), ActCreated))
			held := func(want ...int64) {
				t.Helper()
				assertIDs(t, "replica B's held answer", fromCache(t, b, alice), want...)
			}
			next := func(what string, want ...int64) {
				t.Helper()
				assertIDs(t, what+", replica B's next answer", quotesOf(t, b, alice), want...)
			}
			held(103, 102, 101, 100)

			tick()
			must(t, a.Forget(ctx, alice, KindQuote, 103)) // the v2 API refused her the quote
			next("a refusal on A", 102, 101, 100)

			// B's answers leave the row out within a moment and show none of its new facts meanwhile.
			soon := func(what string, newFacts func(Row) bool, want ...int64) {
				t.Helper()
				assertIDs(t, what+", replica A's next answer", quotesOf(t, a, alice), want...)
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
					quotes, _, err := b.CustomerWork(ctx, alice, 7, 10)
					must(t, err)
					for _, q := range quotes {
						if newFacts(q) {
							t.Fatalf("%s: replica B showed her the new facts she never read: %+v", what, q)
						}
					}
					if slices.Equal(ids(Page{Rows: quotes}), want) {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: replica B's answers after 5 s: %v, want %v", what, ids(Page{Rows: quotes}), want)
					}
				}
			}

			held(102, 101, 100)
			tick()
			must(t, a.ObserveQuote(ctx, lead, quoteOf7(102, 500), ActRefreshed)) // the lead's read found a new total
			soon("a newer read by someone else on A", func(q Row) bool { return q.OneOffCents == 500 }, 101, 100)

			held(101, 100)
			tick()
			moved := quoteOf7(101, 0)
			moved.CustomerID = 8
			must(t, a.ObserveQuote(ctx, lead, moved, ActRefreshed)) // the lead's read: it is another customer's now
			soon("a move to another customer on A", func(q Row) bool { return q.CustomerID == 8 }, 100)

			// Her own change of a row nobody else read: revealed to her at once on A (her read is
			// recorded with it), on B within a moment (the write waits for nobody).
			held(100)
			tick()
			must(t, a.ObserveQuote(ctx, alice, quoteOf7(100, 900), ActChanged))
			if quotes, _, err := a.CustomerWork(ctx, alice, 7, 10); err != nil || len(quotes) != 1 || quotes[0].OneOffCents != 900 {
				t.Fatalf("her change on A, A's next answer: %+v, %v", quotes, err)
			}
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				quotes, _, err := b.CustomerWork(ctx, alice, 7, 10)
				must(t, err)
				if len(quotes) == 1 && quotes[0].OneOffCents == 900 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("her change on A is not in B's answers after 5 s: %+v", quotes)
				}
			}

			// A new row on A: on B within a moment (a sighting waits for nobody).
			tick()
			must(t, a.ObserveQuote(ctx, alice, quoteOf7(104, 0), ActCreated))
			for deadline := time.Now().Add(5 * time.Second); !slices.Equal(quotesOf(t, b, alice), []int64{104, 100}); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("a row new on A is not in B's answers after 5 s: %v", quotesOf(t, b, alice))
				}
			}

			held(104, 100)
			c.t = c.t.Add(31 * 24 * time.Hour)
			if n, err := a.Purge(ctx); err != nil || n == 0 {
				t.Fatalf("purge: %d, %v", n, err)
			}
			next("a purge on A")
		})
	}
}

// connectGate holds a listener's reconnections while closed.
type connectGate struct {
	mu   sync.Mutex
	held chan struct{}
}

func (g *connectGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = make(chan struct{})
}

func (g *connectGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}

func (g *connectGate) wait(ctx context.Context) error {
	g.mu.Lock()
	held := g.held
	g.mu.Unlock()
	if held == nil {
		return nil
	}
	select {
	case <-held:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Replica B's listener connection is killed (pg_terminate_backend): B reads every answer from the
// database until its listener is back, so it never shows a row hidden meanwhile, neither one
// refused the instant the listener died (before B noticed) nor one deleted without any notice.
func TestCustomerWorkCacheListenerKilledReadsTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	gate := &connectGate{}
	t.Cleanup(gate.release)
	var changes *statedb.Changes
	a, b, dbA, _ := replicas(t, statedb.Postgres, c, func(db *statedb.DB) {
		changes = db.Shared(statedb.ChangesSharedName, func() any {
			return statedb.NewChanges(func(ctx context.Context) (*pgx.Conn, error) {
				if err := gate.wait(ctx); err != nil {
					return nil, err
				}
				return db.DedicatedConn(ctx)
			}, statedb.SessionChangesChannel, statedb.WorkChangesChannel)
		}).(*statedb.Changes)
	})
	if b.customers.changes != changes {
		t.Fatal("replica B's cache does not use the database's listener")
	}
	must(t, a.ObserveQuote(ctx, alice, quoteOf7(100, 0), ActCreated))
	c.t = c.t.Add(time.Minute)
	must(t, a.ObserveQuote(ctx, alice, quoteOf7(101, 0), ActCreated))
	assertIDs(t, "B's held answer", fromCache(t, b, alice), 101, 100)

	pid := changes.ListenerPID()
	if pid == 0 {
		t.Fatal("no listener while the cache answers")
	}
	gate.hold()
	if _, err := dbA.SQL.Exec("SELECT pg_terminate_backend($1)", int64(pid)); err != nil {
		t.Fatal(err)
	}
	// Refused on A the instant B's listener died, before B may have noticed.
	must(t, a.Forget(ctx, alice, KindQuote, 101))
	assertIDs(t, "B's answer after a refusal on A as B's listener died", quotesOf(t, b, alice), 100)

	// While the listener is down, every answer is read from the database.
	for deadline := time.Now().Add(10 * time.Second); changes.ListenerPID() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listener did not notice its connection was killed")
		}
	}
	hits := b.customers.hits.Load()
	for range 5 {
		assertIDs(t, "B's answer while its listener is down", quotesOf(t, b, alice), 100)
	}
	if b.customers.hits.Load() != hits {
		t.Fatal("the cache answered while its listener was down")
	}
	// Deleted without Forget's wait (as psql would): only a database read can know.
	if _, err := dbA.SQL.Exec("DELETE FROM work_viewers WHERE person = $1", alice.Key()); err != nil {
		t.Fatal(err)
	}
	assertIDs(t, "B's answer after a deletion by hand while its listener is down", quotesOf(t, b, alice))

	// The listener back, the cache answers again, and with what the database holds.
	gate.release()
	c.t = c.t.Add(time.Minute)
	must(t, a.ObserveQuote(ctx, alice, quoteOf7(102, 0), ActCreated))
	for deadline := time.Now().Add(10 * time.Second); !slices.Equal(fromCache(t, b, alice), []int64{102}); {
		if time.Now().After(deadline) {
			t.Fatalf("after the listener came back: %v, want [102]", quotesOf(t, b, alice))
		}
	}
}
