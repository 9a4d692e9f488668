package export

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

func TestNeutralise(t *testing.T) {
	for in, want := range map[string]string{
		"=1+1": "'=1+1", "+33 1": "'+33 1", "-2": "'-2", "@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\rx": "'\rx",
		"": "", "C-2026-1": "C-2026-1", "a=b": "a=b",
	} {
		if got := Neutralise(in); got != want {
			t.Errorf("Neutralise(%q) = %q, want %q", in, got, want)
		}
	}
}

var testColumns = []Column{{Header: "text"}, {Header: "id", Kind: Integer}, {Header: "amount", Kind: Money}, {Header: "rate", Kind: Decimal}, {Header: "when", Kind: DateTime}}

func writeAll(t *testing.T, f Format, opts Options, rows [][]any) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := New(f, &b, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.WriteRow(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCSVInTheReadersConvention(t *testing.T) {
	rome, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	at := time.Date(2026, 11, 25, 13, 4, 5, 0, time.UTC)
	rows := [][]any{{"=HYPERLINK(\"x\")", int64(-12), 1234.5, 2.25, at}, {"Müller; \"GmbH\"", 7, -3.0, nil, time.Time{}}}
	for _, tc := range []struct {
		decimal string
		comma   rune
		want    [][]string
	}{
		{",", ';', [][]string{{"text", "id", "amount", "rate", "when"}, {"'=HYPERLINK(\"x\")", "-12", "1234,50", "2,25", "2026-11-25 14:04:05"}, {"Müller; \"GmbH\"", "7", "-3,00", "", ""}}},
		{".", ',', [][]string{{"text", "id", "amount", "rate", "when"}, {"'=HYPERLINK(\"x\")", "-12", "1234.50", "2.25", "2026-11-25 14:04:05"}, {"Müller; \"GmbH\"", "7", "-3.00", "", ""}}},
	} {
		data := writeAll(t, CSV, Options{Columns: testColumns, CSV: ConventionFor(tc.decimal), Zone: rome}, rows)
		rest, ok := bytes.CutPrefix(data, []byte("\xEF\xBB\xBF"))
		if !ok {
			t.Fatalf("%s: no byte-order mark", tc.decimal)
		}
		r := csv.NewReader(bytes.NewReader(rest))
		r.Comma = tc.comma
		got, err := r.ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", tc.decimal, err)
		}
		for i := range tc.want {
			if strings.Join(got[i], "|") != strings.Join(tc.want[i], "|") {
				t.Errorf("decimal %q row %d: %q, want %q", tc.decimal, i, got[i], tc.want[i])
			}
		}
	}
}

func TestXLSXIsTyped(t *testing.T) {
	rome, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	at := time.Date(2026, 11, 25, 13, 4, 5, 0, time.UTC)
	var rows [][]any
	for i := range 1000 {
		rows = append(rows, []any{"=1+1", int64(i), 1234.5, 0.5, at})
	}
	data := writeAll(t, XLSX, Options{Sheet: "Customers", Columns: testColumns, Zone: rome}, rows)
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const sheet = "Customers"
	xrows, err := f.GetRows(sheet)
	if err != nil || len(xrows) != 1001 || xrows[1000][1] != "999" || xrows[1][0] != "=1+1" {
		t.Fatalf("xlsx rows %d %v", len(xrows), err)
	}
	if formula, _ := f.GetCellFormula(sheet, "A2"); formula != "" {
		t.Fatalf("A2 became a formula: %q", formula)
	}
	for cell, want := range map[string]struct {
		typ    excelize.CellType
		numFmt int
		raw    float64
	}{
		"B3": {excelize.CellTypeUnset, 1, 1},
		"C2": {excelize.CellTypeUnset, 4, 1234.5},
		"D2": {excelize.CellTypeUnset, 2, 0.5},
		// 25 Nov 2026 14:04:05 in Rome: Excel's serial day 46351 and 14:04:05 of it.
		"E2": {excelize.CellTypeUnset, 22, 46351 + (14*3600+4*60+5)/86400.0},
	} {
		typ, err := f.GetCellType(sheet, cell)
		if err != nil || (typ != want.typ && typ != excelize.CellTypeNumber) {
			t.Errorf("%s: type %v %v, want a number", cell, typ, err)
		}
		raw, _ := f.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true})
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil || v-want.raw > 1e-6 || want.raw-v > 1e-6 {
			t.Errorf("%s: raw %q, want %v", cell, raw, want.raw)
		}
		styleID, _ := f.GetCellStyle(sheet, cell)
		style, err := f.GetStyle(styleID)
		if err != nil || style.NumFmt != want.numFmt {
			t.Errorf("%s: number format %v %v, want %d", cell, style, err, want.numFmt)
		}
	}
	if typ, _ := f.GetCellType(sheet, "A2"); typ != excelize.CellTypeInlineString && typ != excelize.CellTypeSharedString {
		t.Errorf("A2 type %v, want text", typ)
	}
	panes, err := f.GetPanes(sheet)
	if err != nil || !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("the header row is not frozen: %+v %v", panes, err)
	}
	tables, err := f.GetTables(sheet)
	if err != nil || len(tables) != 1 || tables[0].Range != "A1:E1001" {
		t.Errorf("no table with filters over the rows: %+v %v", tables, err)
	}
	if w, _ := f.GetColWidth(sheet, "A"); w < 10 {
		t.Errorf("column A width %v", w)
	}
}
