package stateimport_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/people"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/stateimport"
	"github.com/cpqportal/portal/internal/store"
	"github.com/cpqportal/portal/internal/workindex"
)

// legacyStore is a bbolt file as the previous version left it: a work index shard (a quote Alice
// created and Bob opened, which the v2 API refused Carol), a people shard, Alice's recent items and
// a batch of hers that was running when the old portal stopped.
func legacyStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "portal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	seen := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	alice, bob, carol := workindex.PersonKey("alice"), workindex.PersonKey("bob"), workindex.PersonKey("carol")
	put := func(key string, doc any) {
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, key, raw, 0); err != nil {
			t.Fatal(err)
		}
	}
	put("workindex/shard/07", map[string]any{"gen": 3, "rows": []map[string]any{
		{"k": "quote", "q": 41, "p": 2, "cu": 9, "cn": "Impianti S.p.A.", "cf": "Business Fibre", "s": "draft", "o": 4900, "m": 2990,
			"cb": alice, "cbn": "Alice", "chb": alice, "chbn": "Alice", "ow": []string{alice, bob}, "dn": []string{carol},
			"ca": seen, "sa": seen},
		{"k": "contract", "c": 5, "q": 41, "n": "C-0005", "cu": 9, "cn": "Impianti S.p.A.", "s": "signature", "o": 4900, "m": 2990,
			"ow": []string{alice}, "ca": seen, "sa": seen},
	}})
	put("workindex/shard/08", []byte("{damaged"))
	put("people/shard/03", map[string]any{"gen": 1, "people": []map[string]any{
		{"l": "alice", "n": "Alice Archer", "e": "alice@example.com", "s": seen},
	}})
	put("recent/"+recentKey("alice"), map[string]any{"items": []map[string]any{
		{"kind": "quote", "id": 41, "quoteId": 41, "cpqId": 2, "customerId": 9, "customer": "Impianti S.p.A.", "status": "DRAFT",
			"totals": map[string]int64{"oneOff": 4900, "monthly": 2990}, "at": seen},
	}})
	put("job/"+legacyJobID, jobs.Job{ID: legacyJobID, Owner: "alice", OwnerName: "Alice", CreatedAt: seen, UpdatedAt: seen,
		StartedAt: seen, Status: jobs.StatusRunning, Token: "sealed-token", TokenID: "fp", Lease: "old-replica", LeaseUntil: seen,
		Items: []jobs.Item{
			{Line: 1, Number: "C-0005", Status: jobs.ItemDone, ArchiveID: "ARC-5", Attempts: 1, Customer: "Impianti S.p.A."},
			{Line: 1, Number: "C-0006", Status: jobs.ItemRunning, MaybeSent: true},
			{Line: 2, Number: "C-0007", Status: jobs.ItemFailed, Error: "503", Problem: i18n.M("batch.line.v2_status", "503 Service Unavailable")},
		}})
	return st
}

const legacyJobID = "0123456789abcdef0123456789abcdef"

func TestAnUpgradeKeepsTheOldState(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		old := legacyStore(t)
		c, err := stateimport.Import(ctx, old, db)
		if err != nil {
			t.Fatal(err)
		}
		if c.WorkRows != 2 || c.Viewers != 4 || c.People != 1 || c.RecentItems != 1 || c.Jobs != 1 || c.JobLines != 3 || c.Skipped != 1 {
			t.Fatalf("imported %+v, want 2 rows, 4 viewers, 1 person, 1 recent item, 1 batch of 3 lines, 1 damaged document skipped", c)
		}
		job, err := jobs.NewManager(jobs.Options{DB: db}).Get(ctx, legacyJobID, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if job.Status != jobs.StatusRunning || job.Token != "sealed-token" || job.Lease != "old-replica" || len(job.Items) != 3 ||
			job.Items[0].ArchiveID != "ARC-5" || job.Items[0].Customer != "Impianti S.p.A." || !job.Items[1].MaybeSent ||
			job.Items[2].Problem.Key != "batch.line.v2_status" || job.Items[2].Problem.Args[0] != "503 Service Unavailable" {
			t.Errorf("Alice's batch after the upgrade: %+v", job)
		}
		work := workindex.New(db, workindex.Options{})
		alice := workindex.Viewer{Subject: "alice"}
		p, err := work.List(ctx, alice, workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeMine, Find: "impianti spa"})
		if err != nil || len(p.Rows) != 1 || p.Rows[0].QuoteID != 41 || p.Rows[0].Configurator != "Business Fibre" || p.Rows[0].OneOffCents != 4900 {
			t.Fatalf("Alice's quotes after the upgrade: %+v, %v", p.Rows, err)
		}
		p, _ = work.List(ctx, workindex.Viewer{Subject: "bob"}, workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeAll})
		if len(p.Rows) != 1 {
			t.Errorf("Bob opened the quote; his lists have %d rows", len(p.Rows))
		}
		p, _ = work.List(ctx, workindex.Viewer{Subject: "carol", Team: true}, workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeAll})
		if len(p.Rows) != 0 {
			t.Errorf("the v2 API refused Carol the quote; her team list shows %d rows", len(p.Rows))
		}
		view, _ := people.New(db, people.Options{}).View(ctx)
		if name, _, ok := view.Person("alice"); !ok || name != "Alice Archer" {
			t.Errorf("the people directory names alice %q (%v)", name, ok)
		}
		items, err := recent.New(db, nil).List(ctx, "alice", "")
		if err != nil || len(items) != 1 || items[0].ID != 41 || items[0].Customer != "Impianti S.p.A." || items[0].Totals == nil {
			t.Errorf("Alice's recent items: %+v, %v", items, err)
		}

		// Once only: a second start reads nothing, and a row the new portal changed meanwhile stays.
		if err := work.ObserveQuote(ctx, alice, workindex.QuoteSighting{QuoteID: 41, CPQID: 2, CustomerID: 9, OneOffCents: 100}, workindex.ActChanged); err != nil {
			t.Fatal(err)
		}
		again, err := stateimport.Import(ctx, old, db)
		if err != nil || !again.AlreadyDone {
			t.Fatalf("second import: %+v, %v", again, err)
		}
		if r, ok := work.Lookup(ctx, alice, workindex.KindQuote, 41); !ok || r.OneOffCents != 100 {
			t.Errorf("after a second start the quote is %+v", r)
		}
	})
}
