package statedb_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/people"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// The backups docs/operations.md ("Backups and restore") tells operators to take, taken as it says
// (of a live database, while the portal writes) and restored as it says: the restored database
// opens, and what the portal wrote before the backup is there.

const (
	// backupQuotes are written before the backup: all of them must be in the restored database.
	backupQuotes = 300
	// writerFirstID is the first quote id of the writers that keep writing during a backup; each
	// backup's writer has its own million ids from there (writerIDs).
	writerFirstID = 1_000_000
)

var backupOwner = workindex.Viewer{Subject: "backup-owner", Name: "Backup Owner"}

// fillForBackup writes backupQuotes quotes and a person through the portal's packages.
func fillForBackup(t *testing.T, db *statedb.DB) {
	t.Helper()
	ctx := context.Background()
	ix := workindex.New(db, workindex.Options{WriteTimeout: 10 * time.Second})
	for id := int64(1); id <= backupQuotes; id++ {
		s := workindex.QuoteSighting{QuoteID: id, CPQID: 3, CustomerID: int32(id%20 + 1), Customer: fmt.Sprintf("Kunde %d GmbH", id%20+1),
			OneOffCents: id * 100, MonthlyCents: id, UpdatedAt: time.Unix(1_700_000_000+id, 0)}
		if err := ix.ObserveQuote(ctx, backupOwner, s, workindex.ActCreated); err != nil {
			t.Fatalf("quote %d: %v", id, err)
		}
	}
	if err := people.New(db, people.Options{}).Record(ctx, people.Person{Login: "backup.owner", Name: "Backup Owner", Email: "backup.owner@example.com"}); err != nil {
		t.Fatal(err)
	}
}

// writerIDs is the first quote id of the writer of the n-th backup (from 0) of one database.
func writerIDs(n int) int64 { return writerFirstID * int64(n+1) }

// keepWriting writes quotes (firstID, +1, ...) until stop is called, which returns how many were
// committed.
func keepWriting(t *testing.T, db *statedb.DB, firstID int64) (stop func() int64) {
	t.Helper()
	ix := workindex.New(db, workindex.Options{WriteTimeout: 10 * time.Second})
	// Stopped by a flag between writes, never by cancelling one: a write cancelled while it
	// commits could be committed yet not counted.
	var stopped atomic.Bool
	var committed atomic.Int64
	var wg sync.WaitGroup
	ended := make(chan struct{})
	wg.Go(func() {
		defer close(ended)
		for id := firstID; !stopped.Load(); id++ {
			s := workindex.QuoteSighting{QuoteID: id, CPQID: 3, CustomerID: 7, Customer: "Kunde 7 GmbH", OneOffCents: 100}
			if err := ix.ObserveQuote(context.Background(), backupOwner, s, workindex.ActCreated); err != nil {
				t.Errorf("writer: quote %d: %v", id, err)
				return
			}
			committed.Add(1)
		}
	})
	// The backup must overlap writes: wait for the first ones.
	for committed.Load() < 5 {
		select {
		case <-ended:
			t.Fatal("the writer stopped before the backup")
		case <-time.After(time.Millisecond):
		}
	}
	return func() int64 {
		stopped.Store(true)
		wg.Wait()
		return committed.Load()
	}
}

// checkRestored opens the restored database as the portal would and checks what fillForBackup
// wrote is there, and that of the quotes the writer (from firstID) committed, it holds a prefix (a
// consistent snapshot).
func checkRestored(t *testing.T, restored *statedb.DB, firstID, written int64) {
	t.Helper()
	ctx := context.Background()
	ix := workindex.New(restored, workindex.Options{})
	page, err := ix.List(ctx, backupOwner, workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeMine, PerPage: 10})
	if err != nil {
		t.Fatalf("My quotes of the restored database: %v", err)
	}
	if page.Total < backupQuotes {
		t.Errorf("the restored database lists %d of the owner's quotes, want at least the %d written before the backup", page.Total, backupQuotes)
	}
	for _, id := range []int64{1, backupQuotes / 2, backupQuotes} {
		row, ok := ix.Lookup(ctx, backupOwner, workindex.KindQuote, id)
		if !ok || row.OneOffCents != id*100 || row.CreatedBy != backupOwner.Key() || row.Customer == "" {
			t.Errorf("quote %d in the restored database: %+v, %v", id, row, ok)
		}
	}
	var before, during, maxDuring int64
	err = restored.SQL.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(CASE WHEN id < $1 THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN id >= $2 THEN 1 ELSE 0 END), 0),
		COALESCE(MAX(CASE WHEN id >= $2 THEN id - $2 + 1 ELSE 0 END), 0)
		FROM work_rows WHERE kind = 'quote'`, writerFirstID, firstID).Scan(&before, &during, &maxDuring)
	if err != nil {
		t.Fatal(err)
	}
	if before != backupQuotes || during != maxDuring || during > written {
		t.Errorf("restored: %d quotes from before the backup (want %d), %d of the writer's (ids up to %d; %d committed in all): not a consistent snapshot",
			before, backupQuotes, during, maxDuring, written)
	}
	view, err := people.New(restored, people.Options{}).View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	view.Prefetch("backup.owner")
	if name, _, ok := view.Person("backup.owner"); !ok || name != "Backup Owner" {
		t.Errorf("the people directory of the restored database names backup.owner %q, %v", name, ok)
	}
	t.Logf("restored: %d quotes before the backup, %d of the %d the writer committed meanwhile", before, during, written)
}

// TestBackupSQLiteLiveFileRestores: VACUUM INTO and the sqlite3 shell's .backup copy the live
// SQLite file while the portal writes to it (WAL mode); the copy, put in place of portal.sqlite in
// an empty state directory, opens and holds what was written.
func TestBackupSQLiteLiveFileRestores(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := statedb.Open(ctx, statedb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fillForBackup(t, db)
	live := filepath.Join(dir, statedb.SQLiteFile)

	for n, method := range []string{"VACUUM INTO", ".backup"} {
		t.Run(strings.TrimPrefix(strings.ReplaceAll(method, " ", "_"), "."), func(t *testing.T) {
			restoreDir := t.TempDir()
			copyPath := filepath.Join(restoreDir, statedb.SQLiteFile)
			firstID := writerIDs(n)
			stop := keepWriting(t, db, firstID)
			switch method {
			case "VACUUM INTO":
				// What an operator runs in the sqlite3 shell on the live file; here on the
				// portal's own connection pool, a second connection to the same file.
				_, err = db.SQL.ExecContext(ctx, "VACUUM INTO '"+copyPath+"'")
			case ".backup":
				shell, lookErr := exec.LookPath("sqlite3")
				if lookErr != nil {
					stop()
					t.Skip("no sqlite3 shell (apt-get install sqlite3)")
				}
				var out []byte
				out, err = exec.Command(shell, live, ".timeout 10000", ".backup '"+copyPath+"'").CombinedOutput()
				if err != nil {
					err = fmt.Errorf("%w: %s", err, out)
				}
			}
			written := stop()
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			restored, err := statedb.Open(ctx, statedb.Options{Dir: restoreDir})
			if err != nil {
				t.Fatalf("opening the copy: %v", err)
			}
			defer restored.Close()
			var integrity string
			if err := restored.SQL.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
				t.Fatalf("integrity_check of the copy: %q, %v", integrity, err)
			}
			checkRestored(t, restored, firstID, written)
		})
	}
}

// TestBackupPostgresDumpRestores: pg_dump -Fc of the live database while the portal writes, then
// pg_restore into a fresh, empty database; the portal opens it (nothing left to migrate) and
// finds what was written.
func TestBackupPostgresDumpRestores(t *testing.T) {
	pgDump, err := statedbtest.Program("pg_dump")
	if err != nil {
		t.Fatal(err)
	}
	pgRestore, err := statedbtest.Program("pg_restore")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	liveURL := statedbtest.PostgresURL(t)
	db, err := statedb.Open(ctx, statedb.Options{URL: liveURL})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fillForBackup(t, db)
	version, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}

	dump := filepath.Join(t.TempDir(), "portal.dump")
	stop := keepWriting(t, db, writerIDs(0))
	out, err := exec.Command(pgDump, "--format=custom", "--no-owner", "--file="+dump, "--dbname="+liveURL).CombinedOutput()
	written := stop()
	if err != nil {
		t.Fatalf("pg_dump: %v: %s", err, out)
	}

	restoreURL := statedbtest.PostgresURL(t) // a fresh, empty database
	out, err = exec.Command(pgRestore, "--no-owner", "--exit-on-error", "--dbname="+restoreURL, dump).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_restore: %v: %s", err, out)
	}
	restored, err := statedb.Open(ctx, statedb.Options{URL: restoreURL})
	if err != nil {
		t.Fatalf("opening the restored database: %v", err)
	}
	defer restored.Close()
	if v, err := restored.SchemaVersion(ctx); err != nil || v != version {
		t.Errorf("restored schema version %d, %v; want %d", v, err, version)
	}
	checkRestored(t, restored, writerIDs(0), written)
}
