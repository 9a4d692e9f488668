// Package customerrules holds the checks a customer's data passes before it is sent to the v2 API
// (docs/v2-assumptions.md A8): the customer form (internal/handlers) and the customer import
// (internal/customerimport) check a customer with the same function, so a line the import calls
// valid is one the form would have accepted, and a rule changed in one place changes in both.
package customerrules

import (
	"encoding/json"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/textrules"
)

// Rules of A8 (the service checks them too).
var (
	taxIDPattern = regexp.MustCompile(`^[A-Z]{2}[A-Z0-9]{8,14}$`)
	phonePattern = regexp.MustCompile(`^\+?[0-9 ]{6,20}$`)
	// Segments are the segment codes of A8, in the order the form offers them.
	Segments = []string{"BUSINESS", "CONSUMER", "PUBLIC"}
)

const (
	// MaxTextRunes bounds name and address lines (A8 gives 200 for the name; the address has no
	// stated bound, the portal uses the same).
	MaxTextRunes = 200
	// MaxAttributesBytes bounds the attributes JSON.
	MaxAttributesBytes = 64 << 10
)

// Fields are a customer's data as a person typed them, trimmed, with the tax id and the country
// code in upper case (NormalizeTaxID; the form's country list sends codes).
type Fields struct {
	Name, TaxID, Email, Phone, Segment string
	Street, City, PostalCode, Country  string
	// Attributes is a JSON object or "".
	Attributes string
}

// Get is the field of f named name, its input name ("taxId", "postalCode"; "" for a name that is
// none): the customer form, the import's mapping and its fixes name fields so.
func (f Fields) Get(name string) string {
	if p := f.field(name); p != nil {
		return *p
	}
	return ""
}

// Set sets the field of f named name (its input name) to v; false for a name that is none.
func (f *Fields) Set(name, v string) bool {
	p := f.field(name)
	if p != nil {
		*p = v
	}
	return p != nil
}

// field is the field named name (nil for none).
func (f *Fields) field(name string) *string {
	switch name {
	case "name":
		return &f.Name
	case "taxId":
		return &f.TaxID
	case "email":
		return &f.Email
	case "phone":
		return &f.Phone
	case "segment":
		return &f.Segment
	case "street":
		return &f.Street
	case "city":
		return &f.City
	case "postalCode":
		return &f.PostalCode
	case "country":
		return &f.Country
	case "attributes":
		return &f.Attributes
	}
	return nil
}

// The kinds of problem.
const (
	KindRequired      = "required"
	KindTooLong       = "too_long"
	KindBadCharacters = "bad_characters"
	KindFormat        = "format"
	KindUnknown       = "unknown"
	KindTooLarge      = "too_large"
	// KindDate: a date where the field is no date (a spreadsheet's date cell in the postal code
	// column of an import); Value is the date as the file shows it.
	KindDate = "date"
)

// Problem is what is wrong with one field: the field's input name ("name", "taxId", "postalCode",
// ...), the kind of problem and, for an unknown country, the value (clipped). It is plain data, so
// the import can keep it in the state database and show it in the reader's language later.
type Problem struct {
	Field string `json:"field"`
	Kind  string `json:"kind"`
	Value string `json:"value,omitempty"`
}

// Label is a field's input name, written as the field's label in the reader's language.
type Label string

// In is the label in tr's language.
func (l Label) In(tr *i18n.Translator) string {
	switch l {
	case "name":
		return tr.T("customer.field.name")
	case "taxId":
		return tr.T("customer.field.tax_id")
	case "segment":
		return tr.T("customer.field.segment")
	case "email":
		return tr.T("customer.field.email")
	case "phone":
		return tr.T("customer.field.phone")
	case "street":
		return tr.T("customer.field.street")
	case "city":
		return tr.T("customer.field.city")
	case "postalCode":
		return tr.T("customer.field.postal_code")
	case "country":
		return tr.T("customer.field.country")
	case "attributes":
		return tr.T("customer.detail.attributes")
	}
	return string(l)
}

// Message is the problem in the reader's words, as the form shows it under its field.
func (p Problem) Message() i18n.Message {
	label := Label(p.Field)
	switch {
	case p.Kind == KindRequired && p.Field == "taxId":
		return i18n.M("customer.error.tax_id_required")
	case p.Kind == KindRequired:
		return i18n.M("customer.error.name_required")
	case p.Kind == KindTooLong:
		return i18n.M("customer.error.too_long", label, MaxTextRunes)
	case p.Kind == KindBadCharacters:
		return i18n.M("customer.error.bad_characters", label)
	case p.Kind == KindDate:
		return i18n.M("customer.error.date", label, p.Value)
	case p.Field == "taxId":
		return i18n.M("customer.error.tax_id_format")
	case p.Field == "segment":
		return i18n.M("customer.error.segment")
	case p.Field == "email":
		return i18n.M("customer.error.email")
	case p.Field == "phone":
		return i18n.M("customer.error.phone")
	case p.Field == "country":
		return i18n.M("customer.error.country", label, p.Value)
	case p.Field == "attributes" && p.Kind == KindTooLarge:
		return i18n.M("customer.error.attributes_size", MaxAttributesBytes>>10)
	case p.Field == "attributes":
		return i18n.M("customer.error.attributes_json")
	}
	return i18n.M("customer.error.bad_characters", label)
}

// vatBodies are the VAT numbers of countries as people there write their own, without the
// country's prefix (the EU's VIES formats): only a typed id of its country's shape gets the
// prefix, so a German Steuernummer typed in the VAT field is not made into a VAT number.
var vatBodies = map[string]*regexp.Regexp{
	"AT": regexp.MustCompile(`^U[0-9]{8}$`), "BE": regexp.MustCompile(`^[01][0-9]{9}$`), "CZ": regexp.MustCompile(`^[0-9]{8,10}$`),
	"DE": regexp.MustCompile(`^[0-9]{9}$`), "DK": regexp.MustCompile(`^[0-9]{8}$`), "ES": regexp.MustCompile(`^[0-9A-Z][0-9]{7}[0-9A-Z]$`),
	"FI": regexp.MustCompile(`^[0-9]{8}$`), "FR": regexp.MustCompile(`^[0-9A-Z]{2}[0-9]{9}$`), "GR": regexp.MustCompile(`^[0-9]{9}$`),
	"HU": regexp.MustCompile(`^[0-9]{8}$`), "IT": regexp.MustCompile(`^[0-9]{11}$`), "LU": regexp.MustCompile(`^[0-9]{8}$`),
	"NL": regexp.MustCompile(`^[0-9]{9}B[0-9]{2}$`), "PL": regexp.MustCompile(`^[0-9]{10}$`), "PT": regexp.MustCompile(`^[0-9]{9}$`),
	"SE": regexp.MustCompile(`^[0-9]{10}01$`), "SI": regexp.MustCompile(`^[0-9]{8}$`), "SK": regexp.MustCompile(`^[0-9]{10}$`),
}

// TaxID is a tax id as A8 stores it, from what a person typed for a customer in country: upper
// case without spaces, full stops, hyphens or slashes; and the VAT prefix added when the person
// typed their country's number without it, as people write their own ("02468135790" in Italy is
// IT02468135790; Greece's prefix is EL).
func TaxID(typed, country string) string {
	id := strings.ToUpper(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '.' || r == '-' || r == '/' {
			return -1
		}
		return r
	}, typed))
	country = strings.ToUpper(country)
	body, ok := vatBodies[country]
	if !ok || !body.MatchString(id) {
		return id
	}
	if country == "GR" {
		return "EL" + id
	}
	return country + id
}

// Check checks f against A8 and returns its problems, at most one a field, in the form's order
// (none: the v2 API should accept it, short of a tax id already used). Optional fields may be
// empty. A country must be a code of the list the form offers (knownCountry): A8's "two
// upper-case letters" alone took "GE" for Germany, and it is Georgia.
func Check(f Fields, knownCountry func(code string) bool) []Problem {
	var out []Problem
	add := func(field, kind string) { out = append(out, Problem{Field: field, Kind: kind}) }
	checkText := func(field, value string, required bool) {
		switch n := utf8.RuneCountInString(value); {
		case n == 0 && required:
			add(field, KindRequired)
		case n > MaxTextRunes:
			add(field, KindTooLong)
		case !textrules.Acceptable(value, false):
			// Bidirectional controls and other invisible format characters too (issue 38: a
			// name ending in U+202E reversed the amounts shown after it).
			add(field, KindBadCharacters)
		}
	}
	checkText("name", f.Name, true)
	switch {
	case f.TaxID == "":
		add("taxId", KindRequired)
	case !taxIDPattern.MatchString(f.TaxID):
		add("taxId", KindFormat)
	}
	if !slices.Contains(Segments, f.Segment) {
		add("segment", KindUnknown)
	}
	if f.Email != "" && !ValidEmail(f.Email) {
		add("email", KindFormat)
	}
	if f.Phone != "" && !ValidPhone(f.Phone) {
		add("phone", KindFormat)
	}
	checkText("street", f.Street, false)
	checkText("city", f.City, false)
	checkText("postalCode", f.PostalCode, false)
	if f.Country != "" && !knownCountry(f.Country) {
		out = append(out, Problem{Field: "country", Kind: KindUnknown, Value: Clip(f.Country)})
	}
	if f.Attributes != "" {
		var obj map[string]json.RawMessage
		switch {
		case len(f.Attributes) > MaxAttributesBytes:
			add("attributes", KindTooLarge)
		case json.Unmarshal([]byte(f.Attributes), &obj) != nil || obj == nil:
			add("attributes", KindFormat)
		case !jsonTextAcceptable([]byte(f.Attributes)):
			// A JSON escape ("\u202e") passes the form's own check as plain ASCII.
			add("attributes", KindBadCharacters)
		}
	}
	return out
}

// ValidEmail accepts a bare address with a dotted domain (A8: "email valid when given").
func ValidEmail(s string) bool {
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Name != "" || addr.Address != s {
		return false
	}
	_, domain, _ := strings.Cut(s, "@")
	return strings.Contains(domain, ".") && !strings.HasSuffix(domain, ".")
}

// ValidPhone accepts 6 to 20 digits or spaces, optionally after a + (A8).
func ValidPhone(s string) bool { return phonePattern.MatchString(s) }

// Clip shortens a value quoted in a message to 20 characters.
func Clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if r := []rune(s); len(r) > 20 {
		return string(r[:20]) + "…"
	}
	return s
}

// jsonTextAcceptable reports whether every key and string of the JSON document data passes
// textrules (line breaks and tabs allowed: the attributes are a multi-line field).
func jsonTextAcceptable(data []byte) bool {
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return textrules.Acceptable(v, true)
		case []any:
			for _, e := range v {
				if !walk(e) {
					return false
				}
			}
		case map[string]any:
			for k, e := range v {
				if !textrules.Acceptable(k, true) || !walk(e) {
					return false
				}
			}
		}
		return true
	}
	return walk(doc)
}
