package customerimport

import (
	"iter"
	"regexp"
	"strings"
	"unicode"

	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/textfold"
)

// Verdict is what the dry run found of a line.
type Verdict string

// The verdicts. A duplicate has a tax id that is already a customer's (the v2 API would refuse
// it) or an earlier line's; a possible duplicate has the name and city of a customer or of an
// earlier line, folded (case, accents and punctuation do not count); an invalid line fails the
// customer form's checks.
const (
	VerdictNew       Verdict = "new"
	VerdictDuplicate Verdict = "duplicate"
	VerdictPossible  Verdict = "possible"
	VerdictInvalid   Verdict = "invalid"
)

// Verdicts are the verdicts in the order the preview shows them.
var Verdicts = []Verdict{VerdictNew, VerdictPossible, VerdictDuplicate, VerdictInvalid}

// Includable reports whether a line of the verdict may be sent: an invalid line would be refused,
// and so would a tax id already used (A8), so only new lines and possible duplicates can be.
func (v Verdict) Includable() bool { return v == VerdictNew || v == VerdictPossible }

// Existing is a customer the person's token can list, as far as duplicates go.
type Existing struct {
	ID                int32
	Name, TaxID, City string
}

// Checked is a line with what the dry run found.
type Checked struct {
	Line
	Verdict  Verdict
	Problems []customerrules.Problem
	// MatchID and MatchName name the existing customer a duplicate matches; MatchRow the earlier
	// row of the file it matches (0 when it matches a customer).
	MatchID   int32
	MatchName string
	MatchRow  int
	// Included: the line will be sent by the run (by default the new lines).
	Included bool
}

// Reason is why a line has its verdict, in the reader's words ("" for a new line).
func (c Checked) Reason() []i18n.Message {
	switch c.Verdict {
	case VerdictInvalid:
		out := make([]i18n.Message, 0, len(c.Problems))
		for _, p := range c.Problems {
			out = append(out, p.Message())
		}
		return out
	case VerdictDuplicate:
		if c.MatchRow > 0 {
			return []i18n.Message{i18n.M("import.reason.same_tax_id_row", c.MatchRow)}
		}
		return []i18n.Message{i18n.M("import.reason.same_tax_id", c.MatchName, c.MatchID)}
	case VerdictPossible:
		if c.MatchRow > 0 {
			return []i18n.Message{i18n.M("import.reason.same_name_city_row", c.MatchRow)}
		}
		return []i18n.Message{i18n.M("import.reason.same_name_city", c.MatchName, c.MatchID)}
	}
	return nil
}

// legalForms are the words of company forms people write or leave out of a name (S.r.l.s.,
// GmbH & Co. KG, S.p.A., SARL, S.L., Ltd), as NameCityKey folds them.
var legalForms = map[string]bool{
	"srl": true, "srls": true, "spa": true, "snc": true, "sas": true, "sapa": true, "scarl": true, "scrl": true, "coop": true,
	"gmbh": true, "ag": true, "kg": true, "ohg": true, "gbr": true, "ug": true, "ev": true, "kgaa": true, "mbh": true, "haftungsbeschrankt": true,
	"sa": true, "sarl": true, "sasu": true, "eurl": true, "sl": true, "slu": true, "sll": true, "sc": true,
	"ltd": true, "limited": true, "llc": true, "inc": true, "plc": true, "llp": true, "co": true, "corp": true,
}

// NameCityKey is the form in which a name and a city are compared for a possible duplicate: the
// customer search's folding (case, accents, full stops and apostrophes: textfold), other
// punctuation, spaces and the words of legal forms dropped, so "Rossi & Figli S.r.l., Milano",
// "ROSSI  FIGLI SRL" in "milano" and "D Angelo & Galli Srls" / "D'Angelo & Galli S.r.l.s." are
// one. Empty when the name folds to nothing.
func NameCityKey(name, city string) string {
	fold := func(s string, dropForms bool) string {
		s = strings.Map(func(r rune) rune {
			if unicode.IsPunct(r) || unicode.IsSymbol(r) {
				return ' '
			}
			return r
		}, textfold.Fold(s))
		var b strings.Builder
		for _, word := range strings.Fields(s) {
			if !dropForms || !legalForms[word] {
				b.WriteString(word)
			}
		}
		return b.String()
	}
	n := fold(name, true)
	if n == "" {
		n = fold(name, false) // a name that is a legal form alone ("S.p.A.") is still a name
	}
	if n == "" {
		return ""
	}
	return n + "\x00" + fold(city, false)
}

// DryRun checks every line as the customer form checks it (customerrules.Check with
// knownCountry) and finds its duplicates among the existing customers and the file's earlier
// lines. New lines are included, every other line is skipped; the person may change that.
func DryRun(lines []Line, existing iter.Seq[Existing], knownCountry func(code string) bool) []Checked {
	byTax := map[string]Existing{}
	byNameCity := map[string]Existing{}
	for c := range existing {
		if tax := customercache.NormalizeTaxID(c.TaxID); tax != "" {
			if _, ok := byTax[tax]; !ok {
				byTax[tax] = c
			}
		}
		if key := NameCityKey(c.Name, c.City); key != "" {
			if _, ok := byNameCity[key]; !ok {
				byNameCity[key] = c
			}
		}
	}
	rowByTax := map[string]int{}
	rowByNameCity := map[string]int{}
	out := make([]Checked, len(lines))
	for i, l := range lines {
		c := Checked{Line: l, Verdict: VerdictNew}
		c.Problems = customerrules.Check(l.Fields, knownCountry)
		if looksLikeDate(l.Fields.PostalCode) {
			c.Problems = append(c.Problems, customerrules.Problem{Field: "postalCode", Kind: customerrules.KindDate, Value: l.Fields.PostalCode})
		}
		key := NameCityKey(l.Fields.Name, l.Fields.City)
		tax := l.Fields.TaxID
		switch match, byCustomer := byTax[tax]; {
		case len(c.Problems) > 0:
			c.Verdict = VerdictInvalid
		case byCustomer:
			c.Verdict, c.MatchID, c.MatchName = VerdictDuplicate, match.ID, match.Name
		case rowByTax[tax] > 0:
			c.Verdict, c.MatchRow = VerdictDuplicate, rowByTax[tax]
		case key != "" && byNameCity[key].ID != 0:
			c.Verdict, c.MatchID, c.MatchName = VerdictPossible, byNameCity[key].ID, byNameCity[key].Name
		case key != "" && rowByNameCity[key] > 0:
			c.Verdict, c.MatchRow = VerdictPossible, rowByNameCity[key]
		}
		// Only valid lines claim their tax id and name: a later valid line with the tax id of an
		// invalid one is not a duplicate of a line that will never be sent.
		if c.Verdict != VerdictInvalid {
			if _, ok := rowByTax[tax]; !ok {
				rowByTax[tax] = l.Row
			}
			if _, ok := rowByNameCity[key]; !ok && key != "" {
				rowByNameCity[key] = l.Row
			}
		}
		c.Included = c.Verdict == VerdictNew
		out[i] = c
	}
	return out
}

// dateShape is a date as a spreadsheet shows one (internal/sheetread reads a date cell so:
// "14.03.2019", "3/14/2019 0:00", "2019-03-14", "14-Mar-19"): three parts of digits or a month's
// name. No country's postal code has that shape (Poland's "00-950" and the United States' ZIP+4
// have two parts).
var dateShape = regexp.MustCompile(`^(\d{1,4}[./-](\d{1,2}|[A-Za-z]{3,9})[./-]\d{1,4}|\d{1,2}-[A-Za-z]{3,9}|[A-Za-z]{3,9}-\d{2})( \d{1,2}:\d{2}(:\d{2})?( [AP]M)?)?$`)

// looksLikeDate: v has the shape of a date, not of a postal code.
func looksLikeDate(v string) bool { return v != "" && dateShape.MatchString(v) }
