package customerimport

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestImportMappingProposedFromHeadings: German headings and the export's own map to their
// fields, a heading nobody knows maps to nothing, a field goes to its first column only; the shape
// of a file is its set of headings, whatever their order and case.
func TestImportMappingProposedFromHeadings(t *testing.T) {
	r := testReader(t)
	headers := []string{"Firmenname", "USt-IdNr.", "Postleitzahl", "Land", "Bemerkung", "Kundensegment", "Firma", "Ort"}
	got := r.Propose(headers, nil)
	want := Mapping{"name", "taxId", "postalCode", "country", "", "segment", "", "city"}
	if !slices.Equal(got, want) {
		t.Fatalf("proposed %q, want %q", got, want)
	}
	if Shape(headers) != Shape([]string{"ort", "firma", "KUNDENSEGMENT", "Bemerkung", "land", "Postleitzahl", "USt-IdNr", "firmenname"}) {
		t.Error("the same headings in another order and case are another shape")
	}
	if Shape(headers) == Shape(headers[:7]) {
		t.Error("a file without a column has the same shape")
	}
	remembered := map[string]string{headingKey("Firmenname"): "name", headingKey("USt-IdNr."): "taxId", headingKey("Bemerkung"): "street",
		headingKey("Postleitzahl"): ""}
	got = r.Propose(headers, remembered)
	want = Mapping{"name", "taxId", "", "", "street", "", "", ""}
	if !slices.Equal(got, want) {
		t.Fatalf("proposed from the remembered mapping %q, want %q", got, want)
	}
}

// TestImportMappingCheckRefuses: a mapping with more (or fewer) columns than the file, an unknown
// field, a field twice or without the name or tax id is refused with the person's message.
func TestImportMappingCheckRefuses(t *testing.T) {
	for _, c := range []struct {
		m    Mapping
		want string
	}{
		{Mapping{"name", "taxId", "", "city"}, "import.mapping.error.columns"},
		{Mapping{"name", "taxId"}, "import.mapping.error.columns"},
		{Mapping{"name", "taxId", "owner"}, "import.mapping.error.field"},
		{Mapping{"name", "taxId", "name"}, "import.mapping.error.twice"},
		{Mapping{"name", "", "city"}, "import.mapping.error.required"},
	} {
		if got := inputKey(t, CheckMapping(c.m, 3)); got != c.want {
			t.Errorf("%q: %s, want %s", c.m, got, c.want)
		}
	}
	if err := CheckMapping(Mapping{"", "taxId", "name"}, 3); err != nil {
		t.Errorf("a good mapping: %v", err)
	}
	if got := inputKey(t, CheckValue(string(make([]byte, MaxValueLength+1)))); got != "import.error.value_too_long" {
		t.Errorf("a value too long: %s", got)
	}
}

// TestImportMappingRecheck: a file kept for its mapping is checked once the mapping is confirmed
// (a column moved to another field reads that field), a segment the portal does not know is
// named and, treated as a segment, makes every line with it valid; a line fixed in the dry run
// is checked again and kept fixed through another recheck and into the run's lines; the mapping
// is remembered for the next file of the same headings; a run is named by its file.
func TestImportMappingRecheck(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		r := testReader(t)
		store := NewStore(db, Options{})
		sheet := &Sheet{Headers: []string{"Firmenname", "USt-IdNr.", "Bemerkung", "Kundentyp", "Land", "E-Mail"}, Rows: []RawRow{
			{Row: 2, Cells: []string{"Alpha GmbH", "DE123456788", "Hauptstr. 1", "Geschäftsfreund", "Deutschland", "a@example.com"}},
			{Row: 3, Cells: []string{"Beta S.r.l.", "02468135790", "Via Roma 2", "Geschäftsfreund", "Italia", "b@example.com"}},
			{Row: 4, Cells: []string{"Gamma GmbH", "DE223456787", "Ring 3", "Privatkunde", "Deutschland", "keine-adresse"}},
		}}
		proposed := r.Propose(sheet.Headers, nil)
		imp, err := store.CreateSheet(ctx, "ann", "kunden.xlsx", r, sheet, proposed)
		if err != nil {
			t.Fatal(err)
		}
		got, err := store.Get(ctx, imp.ID, "ann")
		if err != nil || got.Status != StatusMapping || !slices.Equal(got.Headers, sheet.Headers) || !slices.Equal(got.Mapping, proposed) {
			t.Fatalf("the import waiting for its mapping: %+v %v", got, err)
		}
		known := func(code string) bool { return code == "DE" || code == "IT" }
		confirmed := slices.Clone(proposed)
		confirmed[2] = "street" // "Bemerkung" holds the street in this file
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Mapping: confirmed}, existingOf(), known); err != nil {
			t.Fatal(err)
		}
		page, err := store.Lines(ctx, imp.ID, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		verdicts := func(p Page) []Verdict {
			var out []Verdict
			for _, l := range p.Lines {
				out = append(out, l.Verdict)
			}
			return out
		}
		if v := verdicts(page); !slices.Equal(v, []Verdict{VerdictInvalid, VerdictInvalid, VerdictInvalid}) {
			t.Fatalf("verdicts after the mapping %v", v)
		}
		if page.Lines[0].Fields.Street != "Hauptstr. 1" || page.Lines[0].Fields.Country != "DE" || page.Lines[1].Fields.Country != "IT" ||
			page.Lines[1].Fields.TaxID != "IT02468135790" {
			t.Fatalf("the lines as read through the mapping: %+v", page.Lines[:2])
		}
		unknown, err := store.UnknownValues(ctx, imp.ID, known, 20)
		if err != nil || !slices.Equal(unknown["segment"], []string{"Geschäftsfreund"}) || len(unknown["country"]) != 0 {
			t.Fatalf("unknown values %v %v", unknown, err)
		}
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Value: &ValueChoice{Field: "segment", From: "geschäftsfreund", To: "BUSINESS"}}, existingOf(), known); err != nil {
			t.Fatal(err)
		}
		page, _ = store.Lines(ctx, imp.ID, "", 0)
		if v := verdicts(page); !slices.Equal(v, []Verdict{VerdictNew, VerdictNew, VerdictInvalid}) || page.Lines[1].Fields.Segment != "BUSINESS" {
			t.Fatalf("verdicts after treating the segment %v (%+v)", v, page.Lines[1].Fields)
		}
		// The person skips line 2, then fixes line 4's e-mail: line 4 is new and included, line 2
		// stays skipped.
		if err := store.SetIncluded(ctx, imp.ID, "ann", nil, []int{1}); err != nil {
			t.Fatal(err)
		}
		fixed := page.Lines[2].Fields
		fixed.Email = "gamma@example.com"
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Fix: &Fix{Position: 2, Fields: fixed}}, existingOf(), known); err != nil {
			t.Fatal(err)
		}
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Fix: &Fix{Position: 7, Fields: fixed}}, existingOf(), known); !errors.Is(err, ErrNoLine) {
			t.Fatalf("a fix of a line the import does not have: %v", err)
		}
		if err := store.Recheck(ctx, imp.ID, "bob", r, Change{}, existingOf(), known); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another person's recheck: %v", err)
		}
		// Another recheck (a mapping confirmed again) keeps the fix.
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Mapping: confirmed}, existingOf(), known); err != nil {
			t.Fatal(err)
		}
		page, _ = store.Lines(ctx, imp.ID, "", 0)
		if v := verdicts(page); !slices.Equal(v, []Verdict{VerdictNew, VerdictNew, VerdictNew}) {
			t.Fatalf("verdicts after the fix %v", v)
		}
		if page.Lines[1].Included || !page.Lines[2].Included || page.Lines[2].Fields.Email != "gamma@example.com" {
			t.Fatalf("includes after the fix: %+v", page.Lines)
		}
		run, err := store.BeginRun(ctx, imp.ID, "ann")
		if err != nil || len(run) != 3 || run[2].Fields.Email != "gamma@example.com" || !run[2].Included {
			t.Fatalf("the run's lines %+v %v", run, err)
		}

		if err := store.RememberMapping(ctx, "ann", sheet.Headers, confirmed); err != nil {
			t.Fatal(err)
		}
		reordered := []string{"E-Mail", "Land", "Kundentyp", "Bemerkung", "USt-IdNr.", "Firmenname"}
		remembered, err := store.RememberedMapping(ctx, "ann", reordered)
		if err != nil {
			t.Fatal(err)
		}
		if m := r.Propose(reordered, remembered); !slices.Equal(m, Mapping{"email", "country", "segment", "street", "taxId", "name"}) {
			t.Fatalf("the next file of the same shape is proposed %q", m)
		}
		if other, err := store.RememberedMapping(ctx, "bob", reordered); err != nil || other != nil {
			t.Fatalf("another person's mapping: %v %v", other, err)
		}

		if err := store.RecordRun(ctx, "job1", "ann", "kunden.xlsx"); err != nil {
			t.Fatal(err)
		}
		names, err := store.RunNames(ctx, "ann")
		if err != nil || names["job1"] != "kunden.xlsx" {
			t.Fatalf("run names %v %v", names, err)
		}
		if names, _ := store.RunNames(ctx, "bob"); len(names) != 0 {
			t.Fatalf("another person's run names %v", names)
		}
	})
}

// TestImportMappingFixReadsAsTheFormDoes: a fix is read as a person's typing is (the country
// written as people write it, the tax id normalised) and overrides the line's cells.
func TestImportMappingFixReadsAsTheFormDoes(t *testing.T) {
	r := testReader(t)
	m := Mapping{"name", "taxId", "country"}
	l := r.LineOf(2, []string{"Alpha", "x", "Atlantis"}, m, nil, &customerrules.Fields{Name: "Alpha", TaxID: "de 123 456 788", Country: "Deutschland"})
	if l.Fields.Country != "DE" || l.Fields.TaxID != "DE123456788" {
		t.Fatalf("fixed line %+v", l.Fields)
	}
	l = r.LineOf(2, []string{"Alpha", "DE123456788", "Atlantis"}, m, ValueMap{"country": {ValueKey("ATLANTIS"): "IT"}}, nil)
	if l.Fields.Country != "IT" {
		t.Fatalf("a country treated as another %+v", l.Fields)
	}
}

// TestImportMappingDateInPostalCodeFlagged: a date cell in the postal code column of a workbook
// is no postal code: its line is invalid with a problem that shows the date as the file does
// ("14.03.2019", not Excel's 43538), while the numeric postal codes of the other lines get their
// leading zeros back; the line fixed in place is new.
func TestImportMappingDateInPostalCodeFlagged(t *testing.T) {
	book := excelize.NewFile()
	german := "dd.mm.yyyy"
	style, err := book.NewStyle(&excelize.Style{CustomNumFmt: &german})
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]any{
		{"Firmenname", "USt-IdNr.", "Postleitzahl", "Land", "Kundentyp"},
		{"Eins GmbH", "DE111111125", 1067, "Deutschland", "Geschäftskunde"},
		{"Zwei GmbH", "DE222222224", time.Date(2019, 3, 14, 0, 0, 0, 0, time.UTC), "Deutschland", "Geschäftskunde"},
	}
	for r, row := range rows {
		for c, v := range row {
			cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
			if err := book.SetCellValue("Sheet1", cell, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := book.SetCellStyle("Sheet1", "C3", "C3", style); err != nil {
		t.Fatal(err)
	}
	var data bytes.Buffer
	if _, err := book.WriteTo(&data); err != nil {
		t.Fatal(err)
	}
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		r := testReader(t)
		store := NewStore(db, Options{})
		sheet, err := r.ReadSheet(ctx, "kunden.xlsx", data.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		m := r.Propose(sheet.Headers, nil)
		imp, err := store.CreateSheet(ctx, "ann", "kunden.xlsx", r, sheet, m)
		if err != nil {
			t.Fatal(err)
		}
		known := func(string) bool { return true }
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Mapping: m}, existingOf(), known); err != nil {
			t.Fatal(err)
		}
		page, err := store.Lines(ctx, imp.ID, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if l := page.Lines[0]; l.Verdict != VerdictNew || l.Fields.PostalCode != "01067" {
			t.Errorf("the numeric postal code: %s %q", l.Verdict, l.Fields.PostalCode)
		}
		l := page.Lines[1]
		want := customerrules.Problem{Field: "postalCode", Kind: customerrules.KindDate, Value: "14.03.2019"}
		if l.Verdict != VerdictInvalid || len(l.Problems) != 1 || l.Problems[0] != want {
			t.Fatalf("the date in the postal code column: %s %+v", l.Verdict, l.Problems)
		}
		fix := &Fix{Position: 1, Fields: l.Fields}
		fix.Fields.PostalCode = "80331"
		if err := store.Recheck(ctx, imp.ID, "ann", r, Change{Fix: fix}, existingOf(), known); err != nil {
			t.Fatal(err)
		}
		page, err = store.Lines(ctx, imp.ID, "", 0)
		if err != nil || page.Lines[1].Verdict != VerdictNew || page.Lines[1].Fields.PostalCode != "80331" {
			t.Fatalf("fixed: %+v %v", page.Lines[1], err)
		}
	})
	for _, v := range []string{"00-950", "12345-6789", "1000-001", "SW1A 1AA", "01067", "D-01067"} {
		if looksLikeDate(v) {
			t.Errorf("%q read as a date", v)
		}
	}
}
