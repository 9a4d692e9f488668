package customerimport

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// checkedLines is n lines: every tenth a duplicate of customer 1, every seventh (not tenth) invalid.
func checkedLines(n int) []Checked {
	lines := make([]Line, n)
	for i := range lines {
		lines[i] = line(i+2, fmt.Sprintf("Customer %d", i), fmt.Sprintf("IT%011d", i+100), "Roma")
		switch {
		case i%10 == 9:
			lines[i].Fields.TaxID = "IT00000000001"
		case i%7 == 6:
			lines[i].Fields.Segment = ""
		}
	}
	return DryRun(lines, existingOf(Existing{ID: 1, Name: "One", TaxID: "IT00000000001"}), func(string) bool { return true })
}

// TestStoreKeepsTheDryRun: an import's lines come back page by page in file order (filtered by
// verdict or not) with their verdicts and problems; counts add up; includes change only lines that
// may be sent; the lines a run sends are the included ones.
func TestStoreKeepsTheDryRun(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		store := NewStore(db, Options{})
		lines := checkedLines(250)
		imp, err := store.Create(ctx, "ann", "customers.csv", lines)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Get(ctx, imp.ID, "bob"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another person's import: %v", err)
		}
		got, err := store.Get(ctx, imp.ID, "ann")
		if err != nil || got.Total != 250 || got.FileName != "customers.csv" || got.Status != StatusDraft {
			t.Fatalf("get: %+v %v", got, err)
		}
		counts, err := store.Counts(ctx, imp.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantDup, wantInvalid := 25, 0
		for i := range 250 {
			if i%10 != 9 && i%7 == 6 {
				wantInvalid++
			}
		}
		if counts[VerdictDuplicate].Total != wantDup || counts[VerdictInvalid].Total != wantInvalid ||
			counts[VerdictNew].Total != 250-wantDup-wantInvalid || counts.Included() != 250-wantDup-wantInvalid {
			t.Fatalf("counts %+v", counts)
		}

		// All lines: pages of 100, 100, 50, linked both ways.
		p1, err := store.Lines(ctx, imp.ID, "", 0)
		if err != nil || len(p1.Lines) != PageSize || p1.Prev != -1 || p1.Next != 100 {
			t.Fatalf("page 1: %d lines prev %d next %d %v", len(p1.Lines), p1.Prev, p1.Next, err)
		}
		p3, err := store.Lines(ctx, imp.ID, "", 200)
		if err != nil || len(p3.Lines) != 50 || p3.Prev != 100 || p3.Next != -1 {
			t.Fatalf("page 3: %d lines prev %d next %d %v", len(p3.Lines), p3.Prev, p3.Next, err)
		}
		if l := p1.Lines[6]; l.Position != 6 || l.Row != 8 || l.Verdict != VerdictInvalid || len(l.Problems) != 1 || l.Problems[0].Field != "segment" {
			t.Fatalf("line 6: %+v", l)
		}
		if l := p1.Lines[9]; l.Verdict != VerdictDuplicate || l.MatchID != 1 || l.MatchName != "One" || l.Included {
			t.Fatalf("line 9: %+v", l)
		}
		if l := p1.Lines[0]; l.Fields != lines[0].Fields || !l.Included {
			t.Fatalf("line 0: %+v", l)
		}
		// Only duplicates: 25 of them on one page, each a tenth line.
		dups, err := store.Lines(ctx, imp.ID, VerdictDuplicate, 0)
		if err != nil || len(dups.Lines) != 25 || dups.Next != -1 || dups.Lines[1].Position != 19 {
			t.Fatalf("duplicates: %d %v", len(dups.Lines), err)
		}

		// Skip line 0, include line 9 (a duplicate: refused) and line 6 (invalid: refused).
		if err := store.SetIncluded(ctx, imp.ID, "ann", []int{6, 9}, []int{0}); err != nil {
			t.Fatal(err)
		}
		if err := store.SetIncluded(ctx, imp.ID, "bob", []int{0}, nil); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob changes ann's import: %v", err)
		}
		sent, err := store.IncludedLines(ctx, imp.ID)
		if err != nil || len(sent) != 250-wantDup-wantInvalid-1 || sent[0].Position != 1 {
			t.Fatalf("included: %d %v", len(sent), err)
		}
		if err := store.SetIncludedVerdict(ctx, imp.ID, "ann", VerdictNew, false); err != nil {
			t.Fatal(err)
		}
		if counts, _ := store.Counts(ctx, imp.ID); counts.Included() != 0 {
			t.Fatalf("after skipping every new line: %+v", counts)
		}
		if err := store.SetIncludedVerdict(ctx, imp.ID, "ann", VerdictDuplicate, true); err != nil {
			t.Fatal(err)
		}
		if counts, _ := store.Counts(ctx, imp.ID); counts.Included() != 0 {
			t.Fatalf("duplicates included: %+v", counts)
		}
	})
}

// TestStoreQuotaAndRetention: a person keeps at most MaxDrafts imports; deleting one makes room,
// and imports not changed within the retention are purged (another person's quota is their own).
func TestStoreQuotaAndRetention(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
		store := NewStore(db, Options{MaxDrafts: 2, Retention: time.Hour, Now: func() time.Time { return now }})
		one := checkedLines(3)
		a, err := store.Create(ctx, "ann", "a.csv", one)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Create(ctx, "ann", "b.csv", one); err != nil {
			t.Fatal(err)
		}
		var quota *QuotaError
		if _, err := store.Create(ctx, "ann", "c.csv", one); !errors.As(err, &quota) || quota.Message.Key != "import.quota.drafts" {
			t.Fatalf("third import: %v", err)
		}
		if _, err := store.Create(ctx, "bob", "c.csv", one); err != nil {
			t.Fatalf("bob's own quota: %v", err)
		}
		if err := store.Delete(ctx, a.ID, "bob"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob deletes ann's: %v", err)
		}
		if err := store.Delete(ctx, a.ID, "ann"); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Create(ctx, "ann", "c.csv", one); err != nil {
			t.Fatalf("after a delete: %v", err)
		}
		list, err := store.List(ctx, "ann")
		if err != nil || len(list) != 2 {
			t.Fatalf("list: %d %v", len(list), err)
		}
		now = now.Add(2 * time.Hour)
		if n, err := store.Purge(ctx); err != nil || n != 3 {
			t.Fatalf("purge: %d %v", n, err)
		}
		var lines int
		if err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM customer_import_lines`).Scan(&lines); err != nil || lines != 0 {
			t.Fatalf("lines left after the purge: %d %v", lines, err)
		}
	})
}

// TestStoreTenThousandLines: the largest import is stored and its last page read.
func TestStoreTenThousandLines(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		store := NewStore(db, Options{})
		lines := make([]Line, MaxLines)
		for i := range lines {
			lines[i] = Line{Row: i + 2, Fields: customerrules.Fields{Name: fmt.Sprintf("C %d", i), TaxID: fmt.Sprintf("IT%011d", i), Segment: "BUSINESS"}}
		}
		imp, err := store.Create(ctx, "ann", "big.csv", DryRun(lines, existingOf(), func(string) bool { return true }))
		if err != nil {
			t.Fatal(err)
		}
		last, err := store.Lines(ctx, imp.ID, VerdictNew, MaxLines-PageSize)
		if err != nil || len(last.Lines) != PageSize || last.Next != -1 || last.Prev != MaxLines-2*PageSize || last.Lines[PageSize-1].Row != MaxLines+1 {
			t.Fatalf("last page: %d prev %d next %d %v", len(last.Lines), last.Prev, last.Next, err)
		}
	})
}
