// Package stateimport carries an older portal's state into the state database once: the work
// index, the people directory, the recent items and the batch jobs it kept as JSON documents in
// its key-value store (the bbolt file in PORTAL_DATA_DIR/state, or Redis with PORTAL_REDIS_URL). A
// deployment upgraded in place keeps its lists, people, recent items and batches
// (docs/operations.md "Upgrading").
//
// The import is idempotent: every row is inserted only when absent (a row the new portal already
// wrote wins), and a mark in portal_meta, written last, makes later starts skip it. An import cut
// short (a crash, a restart) simply runs again at the next start.
package stateimport

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/store"
	"github.com/cpqportal/portal/internal/textfold"
	"github.com/cpqportal/portal/internal/workindex"
)

// doneMark is the portal_meta row that says the import ran.
const doneMark = "legacy_state_imported"

// Counts says what one import carried over.
type Counts struct {
	WorkRows, Viewers, People, RecentItems int
	// Jobs and JobLines count the batch jobs (and their lines) carried over.
	Jobs, JobLines int
	// Skipped counts documents that could not be read (damaged JSON): the old portal ignored
	// them too.
	Skipped int
	// AlreadyDone: an earlier start imported; nothing was read.
	AlreadyDone bool
}

// Done reports whether an earlier start imported (then the old store need not even be opened).
func Done(ctx context.Context, db *statedb.DB) (bool, error) {
	var mark string
	err := db.SQL.QueryRowContext(ctx, `SELECT value FROM portal_meta WHERE name = $1`, doneMark).Scan(&mark)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	}
	return false, fmt.Errorf("stateimport: %w", err)
}

// Import copies old's work index, people directory, recent items and batch jobs into db, once.
func Import(ctx context.Context, old store.Store, db *statedb.DB) (Counts, error) {
	var c Counts
	var mark string
	err := db.SQL.QueryRowContext(ctx, `SELECT value FROM portal_meta WHERE name = $1`, doneMark).Scan(&mark)
	switch {
	case err == nil:
		return Counts{AlreadyDone: true}, nil
	case !errors.Is(err, sql.ErrNoRows):
		return c, fmt.Errorf("stateimport: %w", err)
	}
	steps := []struct {
		prefix string
		fn     func(ctx context.Context, tx *sql.Tx, key string, raw []byte, c *Counts) error
	}{
		{"workindex/shard/", importWorkShard},
		{"people/shard/", importPeopleShard},
		{"recent/", importRecentList},
		{"job/", importJob},
	}
	for _, step := range steps {
		keys, err := old.Keys(ctx, step.prefix)
		if err != nil {
			return c, fmt.Errorf("stateimport: list %s: %w", step.prefix, err)
		}
		for _, key := range keys {
			raw, err := old.Get(ctx, key)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return c, fmt.Errorf("stateimport: read %s: %w", key, err)
			}
			// One transaction a document: a shard of a few hundred rows commits at once.
			if err := db.Tx(ctx, func(tx *sql.Tx) error { return step.fn(ctx, tx, key, raw, &c) }); err != nil {
				return c, fmt.Errorf("stateimport: %s: %w", key, err)
			}
		}
	}
	// The rows and reads went in around the sightings: the totals the home page, the counts and
	// the team's lists read are computed from them (workindex.RebuildTotals).
	if c.WorkRows > 0 || c.Viewers > 0 {
		if err := db.Tx(ctx, func(tx *sql.Tx) error { return workindex.RebuildTotals(ctx, tx) }); err != nil {
			return c, fmt.Errorf("stateimport: %w", err)
		}
	}
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO portal_meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		doneMark, fmt.Sprintf("%d work rows, %d people, %d recent items, %d batch jobs", c.WorkRows, c.People, c.RecentItems, c.Jobs)); err != nil {
		return c, fmt.Errorf("stateimport: mark done: %w", err)
	}
	return c, nil
}

func importWorkShard(ctx context.Context, tx *sql.Tx, _ string, raw []byte, c *Counts) error {
	var doc legacyWorkShard
	if json.Unmarshal(raw, &doc) != nil {
		c.Skipped++
		return nil
	}
	for _, r := range doc.Rows {
		if (r.Kind != "quote" && r.Kind != "contract") || r.id() <= 0 {
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO work_rows (kind, id, quote_id, cpq_id, customer_id, customer, customer_folded,
			configurator, contract_id, contract_number, stage, one_off_cents, monthly_cents, value_cents, created_by, created_by_name,
			changed_by, changed_by_name, changed_at, seen_at, facts_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $20)
			ON CONFLICT (kind, id) DO NOTHING`,
			r.Kind, r.id(), r.QuoteID, r.CPQID, r.CustomerID, r.Customer, textfold.Fold(r.Customer), r.Configurator,
			r.ContractID, r.ContractNumber, r.Stage, r.OneOffCents, r.MonthlyCents, r.OneOffCents+12*r.MonthlyCents,
			r.CreatedBy, r.CreatedByName, r.ChangedBy, r.ChangedByName, statedb.Micros(r.ChangedAt), statedb.Micros(r.SeenAt))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			c.WorkRows++
		}
		if r.Customer != "" && r.CustomerID != 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO work_customers (customer_id, folded) VALUES ($1, $2) ON CONFLICT (customer_id) DO NOTHING`,
				r.CustomerID, textfold.Fold(r.Customer)); err != nil {
				return err
			}
		}
		if r.Configurator != "" && r.CPQID != 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO work_configurators (cpq_id, name) VALUES ($1, $2) ON CONFLICT (cpq_id) DO NOTHING`,
				r.CPQID, r.Configurator); err != nil {
				return err
			}
		}
		// The owners' reads are dated by the row's last sighting: the old index kept no more.
		for _, person := range r.Owners {
			if err := insertViewer(ctx, tx, person, r, 1, 0, c); err != nil {
				return err
			}
		}
		for _, person := range r.Denied {
			if err := insertViewer(ctx, tx, person, r, 0, 1, c); err != nil {
				return err
			}
		}
	}
	return nil
}

func insertViewer(ctx context.Context, tx *sql.Tx, person string, r legacyWorkRow, owner, denied int, c *Counts) error {
	if person == "" {
		return nil
	}
	query := `INSERT INTO work_viewers (person, kind, id, owner, seen_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (person, kind, id) DO NOTHING`
	args := []any{person, r.Kind, r.id(), owner, statedb.Micros(r.SeenAt)}
	if denied == 1 {
		query = `INSERT INTO work_denied (person, kind, id) VALUES ($1, $2, $3) ON CONFLICT (person, kind, id) DO NOTHING`
		args = args[:3]
	}
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		c.Viewers++
	}
	return nil
}

func importPeopleShard(ctx context.Context, tx *sql.Tx, _ string, raw []byte, c *Counts) error {
	var doc legacyPeopleShard
	if json.Unmarshal(raw, &doc) != nil {
		c.Skipped++
		return nil
	}
	for _, p := range doc.People {
		login, email := strings.ToLower(p.Login), strings.ToLower(p.Email)
		key := login
		if key == "" {
			key = email
		}
		if key == "" || p.Name == "" {
			continue
		}
		local := ""
		if l, _, ok := strings.Cut(email, "@"); ok {
			local = l
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO people (person_key, login, name, email, email_local, seen_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (person_key) DO NOTHING`, key, login, p.Name, email, local, statedb.Micros(p.SeenAt))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			c.People++
		}
	}
	return nil
}

func importRecentList(ctx context.Context, tx *sql.Tx, key string, raw []byte, c *Counts) error {
	userKey := strings.TrimPrefix(key, "recent/")
	var doc legacyRecentList
	if userKey == "" || json.Unmarshal(raw, &doc) != nil {
		c.Skipped++
		return nil
	}
	for _, it := range doc.Items {
		if (it.Kind != "quote" && it.Kind != "contract") || it.ID <= 0 {
			continue
		}
		hasTotals, oneOff, monthly := 0, int64(0), int64(0)
		if it.Totals != nil {
			hasTotals, oneOff, monthly = 1, it.Totals.OneOffCents, it.Totals.MonthlyCents
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO recent_items (user_key, kind, item_id, number, quote_id, cpq_id, customer_id, customer,
			total, has_totals, oneoff_cents, monthly_cents, status, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (user_key, kind, item_id) DO NOTHING`, userKey, it.Kind, it.ID, it.Number, it.QuoteID, it.CPQID, it.CustomerID,
			it.Customer, it.Total, hasTotals, oneOff, monthly, it.Status, statedb.Micros(it.At))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			c.RecentItems++
		}
	}
	return nil
}

// importJob carries one batch job (the previous version's record is jobs.Job in JSON, rewritten
// whole on every step) into its rows: one for the job, one per line.
func importJob(ctx context.Context, tx *sql.Tx, key string, raw []byte, c *Counts) error {
	var j jobs.Job
	if json.Unmarshal(raw, &j) != nil || "job/"+j.ID != key || !statedb.ValidID(j.ID) || j.Owner == "" {
		c.Skipped++
		return nil
	}
	stored, err := jobs.ImportTx(ctx, tx, &j)
	if err != nil {
		return err
	}
	if stored {
		c.Jobs++
		c.JobLines += len(j.Items)
	}
	return nil
}
