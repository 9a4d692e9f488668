package customerimport

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/sheetread/sheettest"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// peakHeap runs fn and reports the most heap it had in use (sampled every 2 ms), what it
// allocated in all and how long it took.
func peakHeap(fn func()) (peak, total uint64, took time.Duration) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var mu sync.Mutex
	peak = before.HeapAlloc
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				mu.Lock()
				peak = max(peak, m.HeapAlloc)
				mu.Unlock()
			}
		}
	}()
	start := time.Now()
	fn()
	took = time.Since(start)
	close(done)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return peak - before.HeapAlloc, after.TotalAlloc - before.TotalAlloc, took
}

// TestHostileMeasure prints what hostile files cost through the mapping step (HOSTILE_MEASURE=1):
// the read, the stored import, the confirmation and a series of fixes.
func TestHostileMeasure(t *testing.T) {
	if os.Getenv("HOSTILE_MEASURE") == "" {
		t.Skip("HOSTILE_MEASURE not set")
	}
	var csv200 strings.Builder
	for c := range 200 {
		if c > 0 {
			csv200.WriteString(";")
		}
		switch c {
		case 0:
			csv200.WriteString("Name")
		case 1:
			csv200.WriteString("Tax id")
		default:
			fmt.Fprintf(&csv200, "Note %d", c)
		}
	}
	csv200.WriteString("\n")
	for i := range 10_000 {
		fmt.Fprintf(&csv200, "Customer %d;IT%011d%s\n", i, i, strings.Repeat(";v", 198))
	}
	var csvEmpty strings.Builder // 200 columns, all but two blank: under the file size
	csvEmpty.WriteString(strings.SplitN(csv200.String(), "\n", 2)[0] + "\n")
	for i := range 10_000 {
		fmt.Fprintf(&csvEmpty, "Customer %d;IT%011d%s\n", i, i, strings.Repeat(";", 198))
	}
	var csv64 strings.Builder
	csv64.WriteString("Name;Tax id" + strings.Repeat(";Note", 62) + "\n")
	for i := range 10_000 {
		fmt.Fprintf(&csv64, "Customer %d;IT%011d%s\n", i, i, strings.Repeat(";v", 62))
	}
	files := []struct {
		name string
		data []byte
	}{
		{"a.xlsx", sheettest.XFDPerRow(5000)},
		{"a-customers.xlsx", sheettest.WideSparseRows(5000, 16384)},
		{"a-bl.xlsx", sheettest.WideSparseRows(5000, 64)},
		{"b.xlsx", sheettest.BlankRows(1_000_000)},
		{"b-within.xlsx", sheettest.BlankRows(19_000)},
		{"c.csv", []byte(csv200.String())},
		{"c-blank.csv", []byte(csvEmpty.String())},
		{"c64.csv", []byte(csv64.String())},
		{"shared.xlsx", sheettest.SharedStringFill(10_000, 64, 4096)},
		{"shared-small.xlsx", sheettest.SharedStringFill(2_000, 64, 4096)},
	}
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		r := testReader(t)
		store := NewStore(db, Options{MaxDrafts: 100})
		for _, f := range files {
			var sheet *Sheet
			var err error
			peak, total, took := peakHeap(func() { sheet, err = r.ReadSheet(ctx, f.name, f.data) })
			t.Logf("%s (%d KB): read: peak %d MiB, alloc %d MiB, %v, err %v", f.name, len(f.data)>>10, peak>>20, total>>20, took, err)
			if err != nil {
				continue
			}
			var imp *Import
			peak, total, took = peakHeap(func() { imp, err = store.CreateSheet(ctx, "ann", f.name, r, sheet, r.Propose(sheet.Headers, nil)) })
			t.Logf("%s: store: peak %d MiB, alloc %d MiB, %v, err %v", f.name, peak>>20, total>>20, took, err)
			if err != nil {
				continue
			}
			var rows, cellBytes int64
			_ = db.SQL.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(LENGTH(cells)), 0) FROM customer_import_lines WHERE import_id = $1`, imp.ID).Scan(&rows, &cellBytes)
			t.Logf("%s: stored %d lines, %d KiB of cells (%d columns)", f.name, rows, cellBytes>>10, len(sheet.Headers))
			sheet = nil
			m := r.Propose(imp.Headers, nil)
			peak, total, took = peakHeap(func() {
				err = store.Recheck(ctx, imp.ID, "ann", r, Change{Mapping: m}, existingOf(), func(string) bool { return true })
			})
			t.Logf("%s: confirm: peak %d MiB, alloc %d MiB, %v, err %v", f.name, peak>>20, total>>20, took, err)
		}
		// (d) 20 fixes in a row on a 10,000-line import.
		var b strings.Builder
		b.WriteString("Name;Tax id;Segment;City;Country\n")
		for i := range 10_000 {
			fmt.Fprintf(&b, "Customer %05d S.r.l.;IT%011d;Business;City %d;IT\n", i, i, i%97)
		}
		sheet, err := r.ReadSheet(ctx, "d.csv", []byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		imp, err := store.CreateSheet(ctx, "ann", "d.csv", r, sheet, r.Propose(sheet.Headers, nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Mapping: r.Propose(sheet.Headers, nil)}, existingOf(), func(string) bool { return true }); err != nil {
			t.Fatal(err)
		}
		peak, total, took := peakHeap(func() {
			for i := range 20 {
				fix := &Fix{Position: i * 100}
				fix.Fields.Name, fix.Fields.TaxID, fix.Fields.Country = fmt.Sprintf("Fixed %d", i), fmt.Sprintf("IT%011d", 900_000+i), "IT"
				if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Fix: fix}, existingOf(), func(string) bool { return true }); err != nil {
					t.Fatal(err)
				}
			}
		})
		t.Logf("d: 20 fixes on 10,000 lines: peak %d MiB, alloc %d MiB, %v (%v each)", peak>>20, total>>20, took, took/20)
	})
}
