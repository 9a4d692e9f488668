package statedb_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestMigrationTeamRepMonthsFills: migration 00031 fills work_viewer_rep_months from the rows and
// reads written before it as the writes keep it: each viewer's signed contracts revealed to them
// (an archived win included) by the rep who created or changed them last and by the month of the
// signature; nothing of a read older than the row's facts or of a refused row. Its down step
// removes the table; on both engines.
func TestMigrationTeamRepMonthsFills(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		clock := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		ix := workindex.New(db, workindex.Options{Now: func() time.Time { return clock }})
		alice, bob := workindex.Viewer{Subject: "alice", Name: "Alice"}, workindex.Viewer{Subject: "bob", Name: "Bob"}
		lead, boss := workindex.Viewer{Subject: "lead", Name: "Lee", Team: true}, workindex.Viewer{Subject: "boss", Name: "Bo", Team: true}
		observe := func(v workindex.Viewer, s workindex.ContractSighting, act workindex.Act) {
			t.Helper()
			if err := ix.ObserveContract(ctx, v, s, act); err != nil {
				t.Fatal(err)
			}
			clock = clock.Add(time.Minute)
		}
		sighting := func(id int32, cents int64, statuses ...string) workindex.ContractSighting {
			return workindex.ContractSighting{ContractID: id, Number: fmt.Sprintf("C-%d", id), QuoteID: int64(id), CPQID: 1, CustomerID: 7,
				Customer: "Acme", Facts: workindex.ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: statuses}, OneOffCents: cents}
		}
		signed := func(s workindex.ContractSighting, at time.Time) workindex.ContractSighting {
			s.Facts = workindex.ContractFacts{Status: "SIGNED", SignatureStatuses: []string{"SIGNED"}}
			s.SignedAt, s.ChangedAt = at, at
			return s
		}
		feb, mar := time.Date(2026, 2, 27, 10, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		// Alice sends 1, 2, 3, 4; Bob takes 2 over (sends it again: changed last by him).
		for id := int32(1); id <= 4; id++ {
			observe(alice, sighting(id, int64(id)*100), workindex.ActCreated)
			observe(alice, sighting(id, int64(id)*100, "SENT"), workindex.ActChanged)
		}
		observe(bob, sighting(2, 200, "SENT"), workindex.ActChanged)
		// Signed: 1 in February, 2 and 3 in March; 3 then archived (a win stays counted); 4 declined.
		for id, at := range map[int32]time.Time{1: feb, 2: mar, 3: mar} {
			observe(alice, signed(sighting(id, int64(id)*100), at), workindex.ActRefreshed)
		}
		if err := ix.Archive(ctx, workindex.Viewer{}, "C-3", clock); err != nil {
			t.Fatal(err)
		}
		observe(alice, sighting(4, 400, "DECLINED"), workindex.ActRefreshed)
		// The lead reads all four as they stand; Bo reads 1 and 2, then 1 is refused to him, and
		// 2 changes after his read (a new value: his read no longer reveals it).
		archived := sighting(3, 300)
		archived.Facts = workindex.ContractFacts{Status: "ARCHIVED", Archived: true, SignatureStatuses: []string{"SIGNED"}}
		for _, s := range []workindex.ContractSighting{signed(sighting(1, 100), feb), signed(sighting(2, 200), mar), archived, sighting(4, 400, "DECLINED")} {
			observe(lead, s, workindex.ActRefreshed)
		}
		observe(boss, signed(sighting(1, 100), feb), workindex.ActRefreshed)
		observe(boss, signed(sighting(2, 200), mar), workindex.ActRefreshed)
		if err := ix.Forget(ctx, boss, workindex.KindContract, 1); err != nil {
			t.Fatal(err)
		}
		observe(lead, signed(sighting(2, 250), mar), workindex.ActRefreshed)

		kept := statedbtest.RepMonths(t, db)
		key := func(v workindex.Viewer, rep workindex.Viewer, month int) string {
			return fmt.Sprintf("%s %s %d", v.Key(), rep.Key(), month)
		}
		want := map[string][2]int64{
			key(lead, alice, 202602): {1, 100}, key(lead, alice, 202603): {2, 250 + 300}, key(lead, bob, 202603): {1, 250},
			// Alice's own read reveals 1 alone: 2 and 3 changed after it (a new value, the archive).
			key(alice, alice, 202602): {1, 100},
		}
		if !maps.Equal(kept, want) {
			t.Fatalf("kept on write %v, want %v", kept, want)
		}

		if err := statedb.ApplyMigration(ctx, db, 31, false); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.ExecContext(ctx, `SELECT 1 FROM work_viewer_rep_months`); err == nil {
			t.Fatal("work_viewer_rep_months is still there after the down step")
		}
		if err := statedb.ApplyMigration(ctx, db, 31, true); err != nil {
			t.Fatal(err)
		}
		if filled := statedbtest.RepMonths(t, db); !maps.Equal(filled, want) {
			t.Fatalf("filled by the migration %v, want %v (as the writes kept it)", filled, want)
		}
	})
}
