package sheetread

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// TestDateCellsReadAsTheFileShowsThem: a number in a date style is read as the date the file
// shows (its custom format, or a built-in one as Excel shows it in English), not as the serial
// number Excel stores; a number in no date style stays the number.
func TestDateCellsReadAsTheFileShowsThem(t *testing.T) {
	book := excelize.NewFile()
	german := "dd.mm.yyyy"
	style, err := book.NewStyle(&excelize.Style{CustomNumFmt: &german})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2019, 3, 14, 0, 0, 0, 0, time.UTC)
	for cell, v := range map[string]any{"A1": "Postleitzahl", "A2": day, "A3": 1067, "A4": day, "A5": 43538.5} {
		if err := book.SetCellValue("Sheet1", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := book.SetCellStyle("Sheet1", "A2", "A2", style); err != nil {
		t.Fatal(err)
	}
	var data bytes.Buffer
	if _, err := book.WriteTo(&data); err != nil {
		t.Fatal(err)
	}
	var got []string
	err = Read(context.Background(), "d.xlsx", data.Bytes(), Options{Limits: Limits{MaxRows: 10, MaxColumns: 4, MaxCells: 20, MaxInflated: 1 << 20}},
		func(_ int, cells []string) error { got = append(got, cells[0]); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Postleitzahl", "14.03.2019", "1067", "3/14/2019", "43538.5"}
	if len(got) != len(want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %q, want %q", i+1, got[i], want[i])
		}
	}
	for code, want := range map[string]string{"d-mmm-yy": "14-Mar-19", "yyyy-mm-dd hh:mm:ss": "2019-03-14 12:30:00",
		`dddd, d. mmmm yyyy;@`: "Thursday, 14. March 2019", "[$-407]dd/mm/yy h:mm AM/PM": "14/03/19 12:30 PM"} {
		if got := formatDate("43538.520833333336", code); got != want {
			t.Errorf("%s: %q, want %q", code, got, want)
		}
	}
}
