package sheetread

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/cpqportal/portal/internal/sheetread/sheettest"
)

var testLimits = Limits{MaxRows: 20_000, MaxColumns: 64, MaxCells: 200_000, MaxInflated: 16 << 20}

// wideBudget lets a 1.5-million-row sheet (75 MB of XML) be read, to show the other limits at work.
var wideBudget = func() Limits { l := testLimits; l.MaxInflated = 128 << 20; return l }()

func readAll(ctx context.Context, name string, data []byte, lim Limits) (map[int][]string, error) {
	rows := map[int][]string{}
	err := Read(ctx, name, data, Options{Limits: lim}, func(line int, cells []string) error {
		rows[line] = cells
		return nil
	})
	return rows, err
}

func kindOf(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want a sheetread.Error, got %v", err)
	}
	return e
}

// allocated is what f allocates on the heap, in all (a bound on what it can hold at once).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadsAnExcelizeWorkbook: a workbook excelize writes (shared strings, numbers, a gap of blank
// rows, a cell left of another) reads as its cells, each row from column A to its last cell.
func TestReadsAnExcelizeWorkbook(t *testing.T) {
	f := excelize.NewFile()
	defer f.Close()
	_ = f.SetCellValue("Sheet1", "A1", "Name")
	_ = f.SetCellValue("Sheet1", "C1", "Tax id")
	_ = f.SetCellValue("Sheet1", "A4", "Rossi & Figli")
	_ = f.SetCellValue("Sheet1", "C4", 12345678901)
	_ = f.SetCellValue("Sheet1", "B5", "Müller <GmbH>")
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readAll(context.Background(), "list.XLSX", buf.Bytes(), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]string{1: {"Name", "", "Tax id"}, 4: {"Rossi & Figli", "", "12345678901"}, 5: {"", "Müller <GmbH>"}}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", rows, want)
	}
}

// TestXFDCellsAreRefusedBeforeAnyPadding: the batch archive's hostile list (5,000 rows with a cell
// at column XFD) and the import's (20,000 and 1.5 million rows of blank formulas at XFD) are
// refused at their first far cell, allocating under a MiB (excelize padded each row to 16,384
// cells: 1.6 GB for the first).
func TestXFDCellsAreRefusedBeforeAnyPadding(t *testing.T) {
	files := map[string][]byte{
		"5,000 rows with a cell at XFD":   sheettest.XFDPerRow(5000),
		"20,000 blank formulas at XFD":    sheettest.BlankFormulaRows(20_000),
		"1,500,000 blank formulas at XFD": sheettest.BlankFormulaRows(1_500_000),
	}
	for name, data := range files {
		t.Logf("%s: %d bytes", name, len(data))
		var err error
		if n := allocated(func() { _, err = readAll(context.Background(), "hostile.xlsx", data, wideBudget) }); n > 1<<20 {
			t.Errorf("%s: reading allocated %d KiB", name, n>>10)
		}
		e := kindOf(t, err)
		if e.Kind != TooManyColumns || e.Line != 2 || e.Column != 16384 || e.Limit != 64 {
			t.Errorf("%s: %+v", name, e)
		}
		// With the usual budget, the sizes the zip declares refuse the largest before any XML.
		if _, err := readAll(context.Background(), "hostile.xlsx", data, testLimits); len(data) > 100<<10 && kindOf(t, err).Kind != InflatesTooMuch {
			t.Errorf("%s within 16 MiB: %v", name, err)
		}
		if ColumnName(e.Column) != "XFD" {
			t.Errorf("column %d is %s", e.Column, ColumnName(e.Column))
		}
	}
}

// TestBlankRowsCount: 1.5 million rows of blank cells (no column too far) are refused once the
// rows pass the limit, blank or not, without reading the rest.
func TestBlankRowsCount(t *testing.T) {
	data := sheettest.BlankRows(1_500_000)
	var err error
	n := allocated(func() { _, err = readAll(context.Background(), "blank.xlsx", data, wideBudget) })
	if e := kindOf(t, err); e.Kind != TooManyRows || e.Limit != 20_000 {
		t.Fatalf("%+v", e)
	}
	if n > 16<<20 {
		t.Fatalf("reading allocated %d MiB", n>>20)
	}
	// Within the limit, the same rows read (and pass nothing: their cells are blank).
	rows, err := readAll(context.Background(), "blank.xlsx", sheettest.BlankRows(1000), testLimits)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}

// TestCellsAndInflationAreBounded: more cells than the limit, and a sheet that inflates past the
// budget, are refused.
func TestCellsAndInflationAreBounded(t *testing.T) {
	lim := testLimits
	lim.MaxCells = 10
	if _, err := readAll(context.Background(), "x.xlsx", sheettest.XFDPerRow(0), lim); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(context.Background(), "x.xlsx", sheettest.BlankRows(20), lim); kindOf(t, err).Kind != TooManyCells {
		t.Fatalf("cells: %v", err)
	}
	lim = testLimits
	lim.MaxInflated = 64 << 10
	if _, err := readAll(context.Background(), "x.xlsx", sheettest.BlankRows(10_000), lim); kindOf(t, err).Kind != InflatesTooMuch {
		t.Fatalf("inflated: %v", err)
	}
	var csv []byte
	for range 70 {
		csv = append(csv, "a,"...)
	}
	if e := kindOf(t, Read(context.Background(), "x.csv", csv, Options{Limits: testLimits}, func(int, []string) error { return nil })); e.Kind != TooManyColumns || e.Line != 1 {
		t.Fatalf("CSV columns: %+v", e)
	}
}

// TestNULIsRefusedWithItsLine: a NUL character in a CSV cell or a workbook's cell is refused with
// the line it is on.
func TestNULIsRefusedWithItsLine(t *testing.T) {
	err := Read(context.Background(), "x.csv", []byte("Contract number\nC-1\nC-\x002\n"), Options{Limits: testLimits}, func(int, []string) error { return nil })
	if e := kindOf(t, err); e.Kind != NUL || e.Line != 3 {
		t.Fatalf("CSV: %+v", e)
	}
	data := sheettest.Sheet(`<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c></row><row r="7"><c r="A7" t="inlineStr"><is><t>a` + "\x00" + `b</t></is></c></row>`)
	if e := kindOf(t, Read(context.Background(), "x.xlsx", data, Options{Limits: testLimits}, func(int, []string) error { return nil })); e.Kind != NUL || e.Line != 7 {
		t.Fatalf("XLSX: %+v", e)
	}
}

// TestContextEndsTheRead: a cancelled context ends a read as Cancelled, a passed deadline as
// TooSlow, both at once rather than at the file's end.
func TestContextEndsTheRead(t *testing.T) {
	lim := wideBudget
	lim.MaxRows = 2_000_000
	data := sheettest.BlankRows(1_500_000)
	ctx, cancel := context.WithCancel(context.Background())
	seen := 0
	err := Read(ctx, "x.xlsx", data, Options{Limits: lim}, func(int, []string) error { seen++; cancel(); return nil })
	if e := kindOf(t, err); e.Kind != Cancelled || e.Line > 200 {
		t.Fatalf("cancelled: %+v", e)
	}
	dead, stop := context.WithDeadline(context.Background(), time.Unix(946684800, 0))
	defer stop()
	if e := kindOf(t, Read(dead, "x.xlsx", data, Options{Limits: lim}, func(int, []string) error { return nil })); e.Kind != TooSlow || e.Line > 200 {
		t.Fatalf("deadline: %+v", e)
	}
}
