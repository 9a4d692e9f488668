package customerimport

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/sheetread"
	"github.com/cpqportal/portal/internal/sheetread/sheettest"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestImportMappingHostileSharedStringsRefused: a 259 KB workbook whose 128,000 cells all name
// one shared string of 4 KB (500 MB of text: stored, it took 1.9 GB and a minute to confirm) is
// refused as too much text, naming the limit, before anything is kept.
func TestImportMappingHostileSharedStringsRefused(t *testing.T) {
	r := testReader(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := r.ReadSheet(context.Background(), "notes.xlsx", sheettest.SharedStringFill(2_000, 64, 4096))
	runtime.ReadMemStats(&after)
	var input *InputError
	if !errors.As(err, &input) || input.Message.Key != "import.file.too_much_text" || fmt.Sprint(input.Message.Args) != fmt.Sprint([]any{int64(MaxKeptBytes)}) {
		t.Fatalf("want too much text, got %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
		t.Errorf("refusing allocated %d MiB", n>>20)
	}
	// The limit is what is kept, as stored: a cell of characters JSON escapes counts six times.
	if got := keptSize(`a<"`); got != 1+6+2+3 {
		t.Errorf("keptSize: %d", got)
	}
}

// TestImportMappingHostileWideRowsStoredTrimmed: a file whose heading row and rows reach column
// BL, every cell after B blank but the last heading's, keeps no blank cell at the end of a row
// (5,000 lines stored in about their text, not 62 empty cells each), and a column with values but
// no heading is a column of the mapping step, not dropped; on both engines.
func TestImportMappingHostileWideRowsStoredTrimmed(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Tax id</t></is></c>` +
		`<c r="BL1" t="inlineStr"><is><t>Notes</t></is></c></row>`)
	for i := 2; i <= 5001; i++ {
		fmt.Fprintf(&b, `<row r="%d"><c r="A%d" t="inlineStr"><is><t>Customer %d</t></is></c><c r="B%d" t="inlineStr"><is><t>IT%011d</t></is></c>`, i, i, i, i, i)
		for c := 3; c <= 64; c++ {
			fmt.Fprintf(&b, `<c r="%s%d" t="inlineStr"><is><t> </t></is></c>`, sheetread.ColumnName(c), i)
		}
		b.WriteString(`</row>`)
	}
	wide := sheettest.Sheet(b.String())
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		r := testReader(t)
		store := NewStore(db, Options{})
		sheet, err := r.ReadSheet(ctx, "wide.xlsx", wide)
		if err != nil {
			t.Fatal(err)
		}
		if len(sheet.Headers) != 64 || sheet.Headers[63] != "Notes" {
			t.Fatalf("headings %d, last %q", len(sheet.Headers), sheet.Headers[len(sheet.Headers)-1])
		}
		imp, err := store.CreateSheet(ctx, "ann", "wide.xlsx", r, sheet, r.Propose(sheet.Headers, nil))
		if err != nil {
			t.Fatal(err)
		}
		var lines, cellBytes int64
		if err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(*), SUM(LENGTH(cells)) FROM customer_import_lines WHERE import_id = $1`, imp.ID).Scan(&lines, &cellBytes); err != nil {
			t.Fatal(err)
		}
		if lines != 5000 || cellBytes > 5000*40 {
			t.Errorf("stored %d lines, %d bytes of cells (%d a line)", lines, cellBytes, cellBytes/max(lines, 1))
		}

		// A value in column BL under no heading: column BL is the file's last, named by its letter.
		sheet, err = r.ReadSheet(ctx, "sparse.xlsx", sheettest.WideSparseRows(50, 64))
		if err != nil {
			t.Fatal(err)
		}
		if len(sheet.Headers) != 64 || sheet.Headers[63] != "" || len(sheet.Rows[0].Cells) != 64 || sheet.Rows[0].Cells[63] != "x" {
			t.Fatalf("the value at column BL: %d headings, first row %q", len(sheet.Headers), sheet.Rows[0].Cells)
		}
	})
}

// TestImportMappingHostileFixWritesOnlyWhatChanged: a fix on an import of 2,000 lines writes the
// line fixed (and those whose verdict it changes), not every line of the import again (which took
// 3 to 5 seconds a fix at 10,000 lines): the other lines keep the row version the engine gave them
// (SQLite's rowid, PostgreSQL's xmin: an UPDATE keeps the one, changes the other); a new mapping still rechecks them all.
func TestImportMappingHostileFixWritesOnlyWhatChanged(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		r := testReader(t)
		store := NewStore(db, Options{})
		sheet := &Sheet{Headers: []string{"Name", "Tax id", "Country"}}
		for i := range 2000 {
			sheet.Rows = append(sheet.Rows, RawRow{Row: i + 2, Cells: []string{fmt.Sprintf("Customer %d", i), fmt.Sprintf("IT%011d", i+1), "IT"}})
		}
		sheet.Rows[7].Cells[0] = "" // invalid: no name
		m := r.Propose(sheet.Headers, nil)
		imp, err := store.CreateSheet(ctx, "ann", "many.csv", r, sheet, m)
		if err != nil {
			t.Fatal(err)
		}
		// Another import after it: rows written again get new rowids in SQLite (not those of the
		// rows deleted).
		if _, err := store.CreateSheet(ctx, "ann", "other.csv", r, sheet, m); err != nil {
			t.Fatal(err)
		}
		known := func(string) bool { return true }
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Mapping: m}, existingOf(), known); err != nil {
			t.Fatal(err)
		}
		version := `SELECT position, CAST(rowid AS TEXT) FROM customer_import_lines WHERE import_id = $1`
		if db.Engine() == statedb.Postgres {
			version = `SELECT position, xmin::text FROM customer_import_lines WHERE import_id = $1`
		}
		versions := func() map[int]string {
			rows, err := db.SQL.QueryContext(ctx, version, imp.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			out := map[int]string{}
			for rows.Next() {
				var p int
				var v string
				if err := rows.Scan(&p, &v); err != nil {
					t.Fatal(err)
				}
				out[p] = v
			}
			return out
		}
		before := versions()
		fix := &Fix{Position: 7}
		fix.Fields.Name, fix.Fields.TaxID, fix.Fields.Country = "Fixed", "IT00000000008", "IT"
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Fix: fix}, existingOf(), known); err != nil {
			t.Fatal(err)
		}
		after := versions()
		rewritten := 0
		for p, v := range before {
			if after[p] != v {
				rewritten++
			}
		}
		if rewritten > 1 {
			t.Errorf("a fix rewrote %d lines", rewritten)
		}
		page, err := store.Lines(ctx, imp.ID, "", 0)
		if err != nil || page.Lines[7].Fields.Name != "Fixed" || page.Lines[7].Edit == nil {
			t.Errorf("the line fixed: %+v %v", page.Lines[7], err)
		}
		// Another mapping reads every line again: the name from the tax id column.
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Mapping: Mapping{"taxId", "name", "country"}}, existingOf(), known); err != nil {
			t.Fatal(err)
		}
		page, err = store.Lines(ctx, imp.ID, "", 0)
		if err != nil || page.Lines[0].Fields.Name != "IT00000000001" {
			t.Errorf("after a new mapping: %+v %v", page.Lines[0].Fields, err)
		}
	})
}
