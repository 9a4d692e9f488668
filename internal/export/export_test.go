package export

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"

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

func TestCSVAndXLSXRoundTrip(t *testing.T) {
	rows := [][]string{{"=HYPERLINK(\"x\")", "Müller, \"GmbH\""}, {"2", "@evil"}}
	var b bytes.Buffer
	w, err := New(CSV, &b, "", []string{"a", "b"})
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
	got, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(got) != 3 || got[1][0] != "'=HYPERLINK(\"x\")" || got[1][1] != "Müller, \"GmbH\"" || got[2][1] != "'@evil" {
		t.Fatalf("csv: %q %v", got, err)
	}

	b.Reset()
	w, err = New(XLSX, &b, "Customers", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := w.WriteRow([]string{strconv.Itoa(i), "=1+1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	xrows, err := f.GetRows("Customers")
	if err != nil || len(xrows) != 1001 || xrows[1001-1][0] != "999" || xrows[1][1] != "=1+1" {
		t.Fatalf("xlsx rows %d %v", len(xrows), err)
	}
	if formula, _ := f.GetCellFormula("Customers", "B2"); formula != "" {
		t.Fatalf("B2 became a formula: %q", formula)
	}
}
