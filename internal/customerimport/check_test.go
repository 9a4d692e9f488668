package customerimport

import (
	"slices"
	"testing"

	"github.com/cpqportal/portal/internal/customerrules"
)

func existingOf(list ...Existing) func(func(Existing) bool) {
	return slices.Values(list)
}

func line(row int, name, tax, city string) Line {
	return Line{Row: row, Fields: customerrules.Fields{Name: name, TaxID: tax, Segment: "BUSINESS", City: city}}
}

// TestDryRunVerdicts: each line gets the verdict of the first rule it meets (invalid, same tax id as
// a customer or an earlier line, same folded name and city as a customer or an earlier line), with
// its reason, and only new lines are included at first.
func TestDryRunVerdicts(t *testing.T) {
	existing := existingOf(
		Existing{ID: 7, Name: "Acme Srl", TaxID: "IT00000000007", City: "Roma"},
		Existing{ID: 8, Name: "Impianti S.p.A.", TaxID: "IT00000000008", City: "Milano"},
	)
	lines := []Line{
		line(2, "Brand new", "IT11111111111", "Bari"),
		line(3, "Other name", "IT00000000007", "Bari"),           // tax id of customer 7
		line(4, "IMPIANTI SPA", "IT22222222222", "milano"),       // name and city of customer 8, folded
		line(5, "Brand-New!", "IT33333333333", "BARI"),           // name and city of row 2, folded
		line(6, "Copy of row 2", "IT11111111111", "Bari"),        // tax id of row 2
		line(7, "", "IT44444444444", "Bari"),                     // no name
		line(8, "Bad tax", "12", "Bari"),                         // tax id format
		line(9, "Later", "IT55555555555", ""),                    // new: no city is fine
		line(10, "Impianti S.p.A.", "IT66666666666", "Torino"),   // same name, other city: new
		line(11, "Invalid twin", "IT77777777777", "Bari"),        // invalid below (segment)
		line(12, "Valid after invalid", "IT77777777777", "Bari"), // the invalid line claims nothing
	}
	lines[9].Fields.Segment = "WHOLESALE"
	got := DryRun(lines, existing, func(string) bool { return true })
	want := []struct {
		verdict  Verdict
		matchID  int32
		matchRow int
		included bool
	}{
		{VerdictNew, 0, 0, true},
		{VerdictDuplicate, 7, 0, false},
		{VerdictPossible, 8, 0, false},
		{VerdictPossible, 0, 2, false},
		{VerdictDuplicate, 0, 2, false},
		{VerdictInvalid, 0, 0, false},
		{VerdictInvalid, 0, 0, false},
		{VerdictNew, 0, 0, true},
		{VerdictNew, 0, 0, true},
		{VerdictInvalid, 0, 0, false},
		{VerdictNew, 0, 0, true},
	}
	for i, w := range want {
		g := got[i]
		if g.Verdict != w.verdict || g.MatchID != w.matchID || g.MatchRow != w.matchRow || g.Included != w.included {
			t.Errorf("row %d: %s id %d row %d included %t, want %+v", g.Row, g.Verdict, g.MatchID, g.MatchRow, g.Included, w)
		}
	}
	if p := got[5].Problems; len(p) != 1 || p[0].Field != "name" || p[0].Kind != customerrules.KindRequired {
		t.Errorf("row 7 problems %+v", p)
	}
	if r := got[6].Reason(); len(r) != 1 || r[0].Key != "customer.error.tax_id_format" {
		t.Errorf("row 8 reason %+v", r)
	}
	if r := got[1].Reason(); len(r) != 1 || r[0].Key != "import.reason.same_tax_id" {
		t.Errorf("row 3 reason %+v", r)
	}
	if r := got[3].Reason(); len(r) != 1 || r[0].Key != "import.reason.same_name_city_row" {
		t.Errorf("row 5 reason %+v", r)
	}
}

// TestDryRunChecksAsTheForm: a line is judged by the form's own rules (customerrules.Check), the
// country by the list it is given.
func TestDryRunChecksAsTheForm(t *testing.T) {
	l := Line{Row: 2, Fields: customerrules.Fields{Name: "A", TaxID: "IT01234567890", Segment: "BUSINESS", Email: "not-an-address",
		Phone: "12", Country: "GE"}}
	got := DryRun([]Line{l}, existingOf(), func(code string) bool { return code == "DE" })[0]
	var fields []string
	for _, p := range got.Problems {
		fields = append(fields, p.Field)
	}
	if got.Verdict != VerdictInvalid || !slices.Equal(fields, []string{"email", "phone", "country"}) {
		t.Fatalf("%s %v", got.Verdict, fields)
	}
	if want := customerrules.Check(l.Fields, func(code string) bool { return code == "DE" }); !slices.Equal(want, got.Problems) {
		t.Fatalf("problems %v, the form's %v", got.Problems, want)
	}
}

// TestNameCityKeyFolds: case, accents, punctuation, spaces and legal forms do not count.
func TestNameCityKeyFolds(t *testing.T) {
	same := [][2][2]string{
		{{"Rossi & Figli S.r.l.", "Milano"}, {"ROSSI FIGLI SRL", "milano"}},
		{{"Café Müller", "Köln"}, {"cafe muller", "koln"}},
		{{"D'Angelo, Mario", "São Paulo"}, {"dangelo mario", "sao paulo"}},
		{{"D Angelo & Galli Srls", "Bari"}, {"D'Angelo & Galli S.r.l.s.", "Bari"}},
		{{"Impianti S.p.A.", "Torino"}, {"Impianti", "Torino"}},
		{{"Müller GmbH & Co. KG", "Köln"}, {"Müller", "Köln"}},
		{{"Gómez Distribuciones S.L.", "Madrid"}, {"Gomez Distribuciones SL", "Madrid"}},
	}
	for _, pair := range same {
		if a, b := NameCityKey(pair[0][0], pair[0][1]), NameCityKey(pair[1][0], pair[1][1]); a != b {
			t.Errorf("%q != %q", a, b)
		}
	}
	if NameCityKey("Rossi Impianti", "Roma") == NameCityKey("Rossi Infissi", "Roma") {
		t.Error("different names are one")
	}
	if NameCityKey("S.p.A.", "Roma") == "" {
		t.Error("a name that is a legal form alone is no key")
	}
	if NameCityKey("Acme", "Roma") == NameCityKey("Acme", "Milano") {
		t.Error("cities do count")
	}
	if NameCityKey("...", "Roma") != "" {
		t.Error("a name of punctuation only is no key")
	}
}
