package main

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/workindex"
)

// The state group's fill (state.go). fillcache.go keys its cached databases by this file's
// text, with the migrations' and the work index's totals': a change here rebuilds them.

// fillAnchorUnix is the moment the fills date their rows from (the state fill's last 60 days, the
// inbox's items), and fillClock the clock the measurements read them with: a fill means the same
// on any later day, so its cache is keyed by the schema and this code alone (fillcache.go), not
// by the day it was made. Before, the fills dated rows from time.Now and the measurements read
// them with time.Now, which held only on the day of the fill. The 15th, mid-month: "signed this
// month" holds half a month of signatures, as on an average day.
const fillAnchorUnix = 1794744000 // 2026-11-15 12:00 UTC

// fillAnchor is fillAnchorUnix as a time.
func fillAnchor() time.Time { return time.Unix(fillAnchorUnix, 0).UTC() }

// fillClock is the clock of the code measured on a fill (workindex, pipeline, inbox options):
// fillAnchor when it is made, running on with wall from then (a sighting is later than
// the fill's rows, and two sightings a moment apart are a moment apart).
func fillClock(wall func() time.Time) func() time.Time {
	start := wall()
	return func() time.Time { return fillAnchor().Add(wall().Sub(start)) }
}

// fillState writes rows quotes and rows contracts (quotes a quarter in each stage; contracts a
// third generated, a third out for signature, a twelfth each signed, declined, expired and
// archived; 2,000 customers, each row created by one of 500 people and last changed by the next,
// changed last and in its stage since a time in the 60 days before fillAnchor) and 5 viewers a row, in
// bulk, and then the totals the home page reads (workindex.RebuildTotals: everyone's, and each
// viewer's of the rows revealed to them).
//
// The fill is bulk SQL on one connection. On SQLite the secondary indexes of work_rows and
// work_viewers are dropped first and made again from their own definitions once the rows are in (a sort each
// instead of millions of inserts into each index), before the totals are computed: the tables end
// as the migrations make them, and the totals as workindex.RebuildTotals makes them (the test
// TestFillsAreTheSameOnBothEngines checks the totals against a second rebuild and the schema
// against a fresh database's). On SQLite the connection writes without a journal and without
// syncing (a half-written fill is never used: fillCache writes it under a temporary name), with
// a page cache of fillCacheMiB instead of SQLite's 2 MiB, in which the indexes' sorts and the
// totals' GROUP BYs fit.
func fillState(ctx context.Context, db *statedb.DB, rows int) error {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if db.Engine() == statedb.SQLite {
		restore, err := sqliteFillPragmas(ctx, conn)
		if err != nil {
			return err
		}
		defer restore()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fillStateTx(ctx, tx, db.Engine(), rows); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("fill: commit: %w", err)
	}
	// The planner's statistics, as PostgreSQL's autovacuum and statedb's periodic optimize keep them.
	// On PostgreSQL also what autovacuum does after a bulk insert (its insert threshold): hint bits
	// and the visibility map set, so a list reads the table as a live database's, instead of writing
	// hint bits on every page it reads first (EXPLAIN (ANALYZE, BUFFERS) of a customer's history at
	// 1M rows: 393 pages dirtied and 500 heap fetches by one count, 6.5 ms; docs/performance.md).
	stmt := "ANALYZE"
	if db.Engine() == statedb.Postgres {
		stmt = "VACUUM (ANALYZE)"
	}
	_, err = conn.ExecContext(ctx, stmt)
	return err
}

// fillCacheMiB is the SQLite fill connection's page cache.
const fillCacheMiB = 1024

// sqliteFillPragmas sets the SQLite fill connection conn to write without a journal and without
// syncing, sorting in memory, with a page cache of fillCacheMiB; what it returns sets back what
// statedb sets on every connection (WAL is kept in the file).
func sqliteFillPragmas(ctx context.Context, conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}) (func(), error) {
	for _, p := range []string{"journal_mode = OFF", "synchronous = OFF", "temp_store = MEMORY",
		"cache_size = -" + strconv.Itoa(fillCacheMiB<<10)} {
		if _, err := conn.ExecContext(ctx, "PRAGMA "+p); err != nil {
			return nil, fmt.Errorf("fill: PRAGMA %s: %w", p, err)
		}
	}
	return func() {
		ctx := context.WithoutCancel(ctx)
		for _, p := range []string{"journal_mode = WAL", "synchronous = FULL", "cache_size = -2000"} {
			_, _ = conn.ExecContext(ctx, "PRAGMA "+p)
		}
	}, nil
}

// fillStateTx is fillState's transaction.
func fillStateTx(ctx context.Context, tx *sql.Tx, engine statedb.Engine, rows int) error {
	// SQLite only: on PostgreSQL an index made again in the fill's transaction after its updates
	// (broken HOT chains) may be marked indcheckxmin, and the team figures read 144 ms instead of
	// 9 at 100k rows a kind in the one run that tried it; its fill stays as it was.
	indexes := map[string]string{}
	tables := []string{"work_rows", "work_viewers"}
	if engine == statedb.Postgres {
		tables = nil
	}
	for _, table := range tables {
		ix, err := secondaryIndexes(ctx, tx, engine, table)
		if err != nil {
			return err
		}
		for name, def := range ix {
			if _, err := tx.ExecContext(ctx, `DROP INDEX `+name); err != nil {
				return fmt.Errorf("fill: %w", err)
			}
			indexes[name] = def
		}
	}
	{
		if _, err := tx.ExecContext(ctx, `CREATE TABLE bench_people (n INTEGER PRIMARY KEY, person TEXT NOT NULL)`); err != nil {
			return err
		}
		for n := range statePeople {
			if _, err := tx.ExecContext(ctx, `INSERT INTO bench_people (n, person) VALUES ($1, $2)`, n, workindex.PersonKey("p"+strconv.Itoa(n))); err != nil {
				return err
			}
		}
		// Row i changed last at base + i steps, over the 60 days before fillAnchor, and entered its stage
		// then (the home page's follow-ups and aging read when: docs/home.md). Its facts date from
		// then too (facts_at), and its viewers read it then: every row is revealed to its five
		// viewers (docs/work-index.md "Visibility rule"), so the lists measure rows they show.
		stepMicros := int64(max(1, 60*24*3600/rows)) * 1_000_000
		base := fillAnchor().UnixMicro() - int64(rows)*stepMicros
		at := strconv.FormatInt(base, 10) + ` + CAST(i AS BIGINT) * ` + strconv.FormatInt(stepMicros, 10)
		series := seriesCTE(engine, rows)
		for _, kind := range []string{"quote", "contract"} {
			stage := `CASE i % 4 WHEN 0 THEN 'draft' WHEN 1 THEN 'generated' WHEN 2 THEN 'signature' ELSE 'archived' END`
			number := `''`
			if kind == "contract" {
				// A third generated, a third out for signature (the lists' figures), and the last third
				// signed, declined, expired and archived in equal parts (the home page's).
				stage = `CASE i % 3 WHEN 0 THEN 'generated' WHEN 1 THEN 'signature'
					ELSE CASE i % 12 WHEN 2 THEN 'signed' WHEN 5 THEN 'declined' WHEN 8 THEN 'expired' ELSE 'archived' END END`
				number = `'C-' || i`
			}
			q := series + `INSERT INTO work_rows (kind, id, quote_id, cpq_id, customer_id, customer, customer_folded, configurator,
				contract_id, contract_number, stage, one_off_cents, monthly_cents, value_cents, created_by, created_by_name,
				changed_by, changed_by_name, changed_at, seen_at, stage_since, facts_at)
				SELECT '` + kind + `', i, i, 1 + i % 3, 1 + i % ` + strconv.Itoa(stateCustomers) + `, 'Customer ' || (i % ` + strconv.Itoa(stateCustomers) + `),
				'customer ' || (i % ` + strconv.Itoa(stateCustomers) + `), 'Configurator', i, ` + number + `, ` + stage + `,
				(i * 37) % 100000, i % 1000, (i * 37) % 100000 + 12 * (i % 1000),
				(SELECT person FROM bench_people WHERE n = i % ` + strconv.Itoa(statePeople) + `), 'Person',
				(SELECT person FROM bench_people WHERE n = (i + 1) % ` + strconv.Itoa(statePeople) + `), 'Person',
				` + at + `, ` + at + `, ` + at + `, ` + at + ` FROM s`
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("rows: %w", err)
			}
			offsets := `SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 100 UNION ALL SELECT 200 UNION ALL SELECT 300`
			// Each read carries the row's stage and times as it read them (migration 00017).
			q = series + `INSERT INTO work_viewers (person, kind, id, owner, seen_at, stage, changed_at, stage_since)
				SELECT p.person, '` + kind + `', s.i, 1, ` + at + `, ` + stage + `, ` + at + `, ` + at + `
				FROM s CROSS JOIN (` + offsets + `) AS o JOIN bench_people p ON p.n = (s.i + o.k) % ` + strconv.Itoa(statePeople)
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("viewers: %w", err)
			}
			// The team lead's token read every row as it stands (their lists' re-reads): the team
			// lists measure rows revealed to them, as a lead who has used the portal sees them.
			q = series + `INSERT INTO work_viewers (person, kind, id, owner, seen_at, stage, changed_at, stage_since)
				SELECT '` + workindex.PersonKey(benchLead) + `', '` + kind + `', i, 0, ` + at + `, ` + stage + `, ` + at + `, ` + at + ` FROM s`
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("the lead's reads: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DROP TABLE bench_people`); err != nil {
			return err
		}
		// The signed contracts and half the archived ones were signed when they entered their
		// stage (migration 00021: "signed this month" and the conversion read them by month).
		month := `CAST(strftime('%Y%m', stage_since / 1000000, 'unixepoch') AS INTEGER)`
		if engine == statedb.Postgres {
			month = `CAST(to_char(to_timestamp(stage_since / 1000000) AT TIME ZONE 'UTC', 'YYYYMM') AS INTEGER)`
		}
		if _, err := tx.ExecContext(ctx, `UPDATE work_rows SET signed_at = stage_since, signed_month = `+month+`
			WHERE kind = 'contract' AND (stage = 'signed' OR (stage = 'archived' AND id % 2 = 0))`); err != nil {
			return fmt.Errorf("signatures: %w", err)
		}
		// Sent for signature 0 to 44 days before the signature, or when they entered their stage
		// (out for signature), and declined with one of four reasons or none (migration 00026: the
		// team figures' median days to signature and reasons of declines).
		if _, err := tx.ExecContext(ctx, `UPDATE work_rows SET sent_at = CASE WHEN signed_at > 0
			THEN signed_at - ((id / 500) % 45) * 86400000000 ELSE stage_since END,
			decline_reason = CASE WHEN stage <> 'declined' THEN '' WHEN id % 5 = 0 THEN 'Price too high'
			WHEN id % 5 = 1 THEN 'Chose another supplier' WHEN id % 5 = 2 THEN 'Not this year' WHEN id % 5 = 3 THEN 'Terms' ELSE '' END
			WHERE kind = 'contract' AND (signed_at > 0 OR stage IN ('signature', 'declined'))`); err != nil {
			return fmt.Errorf("sends and declines: %w", err)
		}
	}
	// The indexes again, in a stable order, then the totals (their reads use them).
	names := slices.Sorted(maps.Keys(indexes))
	for _, name := range names {
		if _, err := tx.ExecContext(ctx, indexes[name]); err != nil {
			return fmt.Errorf("fill: index %s again: %w", name, err)
		}
	}
	return workindex.RebuildTotals(ctx, tx)
}

// seriesCTE is a WITH clause naming s(i), the whole numbers 1 to n, that a fill inserts from:
// generate_series on PostgreSQL (1M rows into an indexed table: 11.5 s against 17.8 s from the
// recursive CTE, which PostgreSQL runs row by row through a work table), the recursive CTE on
// SQLite (which has no generate_series without an extension). The rows are the same either way.
func seriesCTE(engine statedb.Engine, n int) string {
	if engine == statedb.Postgres {
		return `WITH s(i) AS (SELECT * FROM generate_series(1, ` + strconv.Itoa(n) + `)) `
	}
	return `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ` + strconv.Itoa(n) + `) `
}

// inboxBenchPerson is the person whose inbox fillInbox fills.
const inboxBenchPerson = "bench-rep"

// fillInbox fills one person's inbox with inboxPerKind items of every kind (bulk SQL, half of them
// read, the unread count as the inbox keeps it), for the mail group's count (mail.go).
//
// On SQLite it is called on a pool of one connection (fillcache.go) and writes as fillState does.
func fillInbox(ctx context.Context, db *statedb.DB) error {
	if db.Engine() == statedb.SQLite {
		restore, err := sqliteFillPragmas(ctx, db.SQL)
		if err != nil {
			return err
		}
		defer restore()
	}
	person := inbox.PersonKey(inboxBenchPerson)
	base := fillAnchor().AddDate(0, 0, -60).UnixMicro()
	// The table's secondary indexes are made again after the fill (a sort instead of 11 million
	// inserts into each), from their own definitions: the table ends as the migrations make it.
	indexes, err := secondaryIndexes(ctx, db.SQL, db.Engine(), "inbox_items")
	if err != nil {
		return err
	}
	for name := range indexes {
		if _, err := db.SQL.ExecContext(ctx, `DROP INDEX `+name); err != nil {
			return err
		}
	}
	// Ids ascending (zero-padded) so the primary key is appended to, as statedb.NewID's are not,
	// which only makes the fill faster.
	padded := `printf('%08d', i)`
	if db.Engine() == statedb.Postgres {
		padded = `lpad(CAST(i AS TEXT), 8, '0')`
	}
	series := seriesCTE(db.Engine(), inboxPerKind)
	kinds := slices.Clone(inboxKinds)
	slices.Sort(kinds)
	for _, kind := range kinds {
		at := strconv.FormatInt(base, 10) + ` + CAST(i AS BIGINT) * 5000`
		q := series + `INSERT INTO inbox_items (id, person, dedupe, kind, params, link, created_at, read_at)
			SELECT '` + string(kind) + `-' || ` + padded + `, '` + person + `', '` + string(kind) + `:' || i, '` + string(kind) + `',
			'{"number":"C-1","customer":"Customer"}', '/contracts/' || i, ` + at + `,
			CASE WHEN i % 2 = 0 THEN ` + at + ` + 1000 ELSE 0 END FROM s`
		if _, err := db.SQL.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("fill %s: %w", kind, err)
		}
	}
	for _, def := range indexes {
		if _, err := db.SQL.ExecContext(ctx, def); err != nil {
			return fmt.Errorf("index again: %w", err)
		}
	}
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO inbox_unread (person, n)
		SELECT person, COUNT(*) FROM inbox_items WHERE read_at = 0 GROUP BY person`); err != nil {
		return err
	}
	stmt := "ANALYZE"
	if db.Engine() == statedb.Postgres {
		stmt = "VACUUM (ANALYZE)"
	}
	if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
		return err
	}
	return nil
}
