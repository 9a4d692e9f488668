package customerimport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/cpqportal/portal/internal/countries"
	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs/jobstest"
)

func testReader(t testing.TB) *Reader {
	t.Helper()
	b, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	return NewReader(b, countries.New(i18n.Languages...).Resolve)
}

func inputKey(t *testing.T, err error) string {
	t.Helper()
	var input *InputError
	if !errors.As(err, &input) {
		t.Fatalf("want an InputError, got %v", err)
	}
	return input.Message.Key
}

// TestParseCSVSeparatorsAndBOM: the same customers read alike whether the file uses "," or ";",
// with or without a byte-order mark, and a ";" file with decimal commas in a cell is not split on
// its commas.
func TestParseCSVSeparatorsAndBOM(t *testing.T) {
	r := testReader(t)
	want := []Line{
		{Row: 2, Fields: customerrules.Fields{Name: "Rossi, Figli & C.", TaxID: "IT01234567890", Email: "a@example.com", Segment: "BUSINESS", City: "Milano", Country: "IT"}},
		{Row: 4, Fields: customerrules.Fields{Name: "Müller GmbH", TaxID: "DE123456789", Segment: "PUBLIC", City: "Köln", Country: "DE"}},
	}
	files := map[string]string{
		"comma":        "Name,Tax id,E-mail,Segment,City,Country\n\"Rossi, Figli & C.\",it 0123 4567 890,a@example.com,Business,Milano,it\n,,,,,\nMüller GmbH,DE123456789,,PUBLIC,Köln,DE\n",
		"semicolon":    "Name;Tax id;E-mail;Segment;City;Country\r\nRossi, Figli & C.;IT01234567890;a@example.com;business;Milano;IT\r\n;;;;;\r\nMüller GmbH;DE123456789;;public;Köln;DE\r\n",
		"semicolon+id": "id;nome;partita IVA;e-mail;segmento;città;paese;aggiornato (UTC)\n1,5;Rossi, Figli & C.;IT01234567890;a@example.com;Aziende;Milano;IT;1,25\n\n7;Müller GmbH;DE123456789;;Pubblica amministrazione;Köln;DE;\n",
	}
	for name, text := range files {
		for _, bom := range []string{"", "\xef\xbb\xbf"} {
			got, err := r.Parse(context.Background(), "customers.csv", []byte(bom+text))
			if err != nil {
				t.Fatalf("%s (bom %t): %v", name, bom != "", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s (bom %t):\n got %v\nwant %v", name, bom != "", got, want)
			}
		}
	}
}

// TestParseHeadingsInEveryLanguage: an export's headings in German, French or Spanish are read,
// as are the form's field labels (phone, street, postal code).
func TestParseHeadingsInEveryLanguage(t *testing.T) {
	r := testReader(t)
	b, _ := i18n.Load()
	for _, tag := range i18n.Languages {
		tr := b.Translator(tag)
		head := []string{tr.T("customers.export.col.name"), tr.T("customers.export.col.tax_id"), tr.T("customer.field.phone"),
			tr.T("customer.field.street"), tr.T("customer.field.postal_code"), tr.T("customers.export.col.segment")}
		text := strings.Join(head, ";") + "\nAcme;FR12345678901;+33 1 23 45 67;1 rue X;75001;" + tr.T("customer.segment.consumer") + "\n"
		got, err := r.Parse(context.Background(), "x.csv", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		f := got[0].Fields
		if f.Name != "Acme" || f.TaxID != "FR12345678901" || f.Phone != "+33 1 23 45 67" || f.Street != "1 rue X" || f.PostalCode != "75001" || f.Segment != "CONSUMER" {
			t.Errorf("%s: %+v", tag, f)
		}
	}
}

func xlsxOf(t testing.TB, rows [][]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		if err := sw.SetRow(fmt.Sprintf("A%d", i+1), row); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestParseXLSXOfTheExport: a workbook with the customer export's columns (numbers for the id,
// the segment as a word, owners and configurators) gives its customers; the columns the import
// does not use are left out.
func TestParseXLSXOfTheExport(t *testing.T) {
	r := testReader(t)
	data := xlsxOf(t, [][]any{
		{"id", "name", "tax id", "e-mail", "segment", "city", "country", "owners", "product catalogues", "updated (UTC)"},
		{int64(101), "Impianti S.p.A.", "IT09876543210", "info@impianti.example", "Business", "Torino", "IT", "Ann, Bob", "Catalogue 1", 45000.5},
	})
	got, err := r.Parse(context.Background(), "Customers.XLSX", data)
	if err != nil {
		t.Fatal(err)
	}
	want := customerrules.Fields{Name: "Impianti S.p.A.", TaxID: "IT09876543210", Email: "info@impianti.example", Segment: "BUSINESS", City: "Torino", Country: "IT"}
	if len(got) != 1 || got[0].Fields != want || got[0].Row != 2 {
		t.Fatalf("got %+v", got)
	}
}

// TestParseACRMExportInGerman: a file shaped like a CRM's export (German headings the portal's
// labels do not use, countries written as people write them, postal codes Excel stored as
// numbers, segments in words, an Italian VAT number without its prefix) gives every field: no postal code lost, every country a code, an unknown country kept
// as the file wrote it.
func TestParseACRMExportInGerman(t *testing.T) {
	r := testReader(t)
	data := xlsxOf(t, [][]any{
		{"Firmenname", "USt-IdNr.", "E-Mail-Adresse", "Straße", "Postleitzahl", "Ort", "Land", "Kundengruppe"},
		{"Müller GmbH", "DE123456789", "info@mueller.example", "Hauptstr. 1", int64(1067), "Dresden", "Deutschland", "Geschäftskunde"},
		{"Rossi S.r.l.", "02468135790", "", "Via Roma 2", int64(187), "Roma", "Italia", "Privatkunde"},
		{"Wiener AG", "ATU12345678", "", "", "1010", "Wien", "Österreich", "Öffentliche Hand"},
		{"Atlantis Ltd", "GB1", "", "", "1234", "", "Atlantis", "Stammkunde"},
	})
	got, err := r.Parse(context.Background(), "crm.xlsx", data)
	if err != nil {
		t.Fatal(err)
	}
	want := []customerrules.Fields{
		{Name: "Müller GmbH", TaxID: "DE123456789", Email: "info@mueller.example", Street: "Hauptstr. 1", PostalCode: "01067", City: "Dresden", Country: "DE", Segment: "BUSINESS"},
		{Name: "Rossi S.r.l.", TaxID: "IT02468135790", Street: "Via Roma 2", PostalCode: "00187", City: "Roma", Country: "IT", Segment: "CONSUMER"},
		{Name: "Wiener AG", TaxID: "ATU12345678", PostalCode: "1010", City: "Wien", Country: "AT", Segment: "PUBLIC"},
		{Name: "Atlantis Ltd", TaxID: "GB1", PostalCode: "1234", Country: "Atlantis", Segment: "Stammkunde"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines: %+v", len(got), got)
	}
	for i := range want {
		if got[i].Fields != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i+2, got[i].Fields, want[i])
		}
	}
}

// TestParseRefusesWhatItCannotUse: each unusable file gets its own message for the person.
func TestParseRefusesWhatItCannotUse(t *testing.T) {
	r := testReader(t)
	cases := map[string]struct {
		name string
		data []byte
		key  string
	}{
		"wrong type":  {"list.pdf", []byte("%PDF-1.7"), "import.file.wrong_type"},
		"not utf-8":   {"list.csv", []byte("Name;Tax id\nM\xfcller;DE123456789\n"), "import.file.not_utf8"},
		"no header":   {"list.csv", []byte("Acme;IT01234567890\n"), "import.file.no_header"},
		"header only": {"list.csv", []byte("Name;Tax id\n\n"), "import.file.empty"},
		"empty":       {"list.csv", nil, "import.file.empty"},
		"bad quotes":  {"list.csv", []byte("Name;Tax id\n\"Acme;IT01234567890\nx\"y;z\n"), "import.file.csv_line"},
		"not a zip":   {"list.xlsx", []byte("Name;Tax id\n"), "import.file.not_xlsx"},
		"too large":   {"list.csv", bytes.Repeat([]byte("a"), MaxFileBytes+1), "import.file.too_large"},
	}
	for name, c := range cases {
		_, err := r.Parse(context.Background(), c.name, c.data)
		if got := inputKey(t, err); got != c.key {
			t.Errorf("%s: %s, want %s", name, got, c.key)
		}
	}
}

// TestParseLineLimit: MaxLines customers are read, one more is refused (CSV and XLSX), and reading
// stops there.
func TestParseLineLimit(t *testing.T) {
	r := testReader(t)
	csvOf := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("Name;Tax id\n")
		for i := range n {
			fmt.Fprintf(&b, "Customer %d;IT%011d\n", i, i)
		}
		return b.Bytes()
	}
	if got, err := r.Parse(context.Background(), "a.csv", csvOf(MaxLines)); err != nil || len(got) != MaxLines {
		t.Fatalf("%d lines: %d, %v", MaxLines, len(got), err)
	}
	_, err := r.Parse(context.Background(), "a.csv", csvOf(MaxLines+1))
	if key := inputKey(t, err); key != "import.file.too_many_lines" {
		t.Fatalf("%d lines: %s", MaxLines+1, key)
	}
	rows := [][]any{{"Name", "Tax id"}}
	for i := range MaxLines + 1 {
		rows = append(rows, []any{fmt.Sprintf("Customer %d", i), fmt.Sprintf("IT%011d", i)})
	}
	_, err = r.Parse(context.Background(), "a.xlsx", xlsxOf(t, rows))
	if key := inputKey(t, err); key != "import.file.too_many_lines" {
		t.Fatalf("%d lines in a workbook: %s", MaxLines+1, key)
	}
}

// TestParseZipBombIsRefusedSmall: a workbook of a few hundred KB that inflates to 256 MiB is refused
// with a message for the person, and reading it allocates a few MiB, not the bomb.
func TestParseZipBombIsRefusedSmall(t *testing.T) {
	r := testReader(t)
	bomb, err := jobstest.ZipBombXLSX([]string{"Acme"}, 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = r.Parse(context.Background(), "bomb.xlsx", bomb)
	runtime.ReadMemStats(&after)
	if key := inputKey(t, err); key != "import.file.inflates_too_much" {
		t.Fatalf("bomb: %s", key)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 64<<20 {
		t.Fatalf("reading the bomb allocated %d MiB", allocated>>20)
	}
}

// TestParseHostileCells: a huge cell is cut (the check then calls it too long), extra columns (up
// to the column cap) and control characters are kept for the check to judge, never trusted.
func TestParseHostileCells(t *testing.T) {
	r := testReader(t)
	long := strings.Repeat("x", 100_000)
	text := "Name;Tax id;" + strings.Repeat("extra;", 50) + "\n" + long + ";IT01234567890\nA\x07b;IT01234567891\n"
	got, err := r.Parse(context.Background(), "h.csv", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(got[0].Fields.Name) != maxCellBytes {
		t.Errorf("long cell kept %d bytes", len(got[0].Fields.Name))
	}
	known := func(string) bool { return true }
	checked := DryRun(got, func(func(Existing) bool) {}, known)
	if checked[0].Verdict != VerdictInvalid || checked[1].Verdict != VerdictInvalid {
		t.Errorf("verdicts %s %s", checked[0].Verdict, checked[1].Verdict)
	}
}

// FuzzParse: no input makes the reader panic, return lines past the limit or lines without an
// error when it fails.
func FuzzParse(f *testing.F) {
	r := testReader(f)
	f.Add("a.csv", []byte("Name;Tax id\nAcme;IT01234567890\n"))
	f.Add("a.csv", []byte("\xef\xbb\xbfname,taxId,segment\n\"x\"\"y\",IT1,Business\n"))
	f.Add("a.xlsx", xlsxOf(f, [][]any{{"Name", "Tax id"}, {"Acme", "IT01234567890"}}))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		lines, err := r.Parse(context.Background(), name, data)
		if err != nil && lines != nil {
			t.Fatal("lines with an error")
		}
		if len(lines) > MaxLines {
			t.Fatalf("%d lines", len(lines))
		}
	})
}

// TestParseUndoesTheExportsFormulaGuard: a CSV cell the customer export guarded with an apostrophe
// ("'=Acme", "'+39 02 123456") is read as the value it was exported from; other apostrophes stay.
func TestParseUndoesTheExportsFormulaGuard(t *testing.T) {
	r := testReader(t)
	got, err := r.Parse(context.Background(), "x.csv", []byte("Name;Tax id;Phone;City\n'=Acme;IT01234567890;'+39 02 123456;'s-Hertogenbosch\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f := got[0].Fields; f.Name != "=Acme" || f.Phone != "+39 02 123456" || f.City != "'s-Hertogenbosch" {
		t.Errorf("%+v", f)
	}
}
