package customerrules

import (
	"slices"
	"strings"
	"testing"
)

// TestCheck: each rule of A8 names its field and kind; a valid customer has no problem.
func TestCheck(t *testing.T) {
	t.Parallel()
	valid := Fields{Name: "Acme S.r.l.", TaxID: "IT01234567890", Segment: "BUSINESS", Email: "a@example.com", Phone: "+39 02 1234567",
		City: "Milano", Country: "IT", Attributes: `{"tier":"gold"}`}
	known := func(code string) bool { return code == "IT" || code == "DE" }
	if p := Check(valid, known); len(p) != 0 {
		t.Fatalf("a valid customer: %v", p)
	}
	cases := []struct {
		change func(*Fields)
		want   Problem
	}{
		{func(f *Fields) { f.Name = "" }, Problem{Field: "name", Kind: KindRequired}},
		{func(f *Fields) { f.Name = strings.Repeat("x", MaxTextRunes+1) }, Problem{Field: "name", Kind: KindTooLong}},
		{func(f *Fields) { f.Name = "A\x00B" }, Problem{Field: "name", Kind: KindBadCharacters}},
		{func(f *Fields) { f.Name = "Acme\u202e" }, Problem{Field: "name", Kind: KindBadCharacters}},
		{func(f *Fields) { f.Street = "Via\u2066 Roma" }, Problem{Field: "street", Kind: KindBadCharacters}},
		{func(f *Fields) { f.Attributes = `{"note":"ok\u202e"}` }, Problem{Field: "attributes", Kind: KindBadCharacters}},
		{func(f *Fields) { f.TaxID = "" }, Problem{Field: "taxId", Kind: KindRequired}},
		{func(f *Fields) { f.TaxID = "IT123" }, Problem{Field: "taxId", Kind: KindFormat}},
		{func(f *Fields) { f.Segment = "WHOLESALE" }, Problem{Field: "segment", Kind: KindUnknown}},
		{func(f *Fields) { f.Email = "Ann <a@example.com>" }, Problem{Field: "email", Kind: KindFormat}},
		{func(f *Fields) { f.Email = "a@localhost" }, Problem{Field: "email", Kind: KindFormat}},
		{func(f *Fields) { f.Phone = "12" }, Problem{Field: "phone", Kind: KindFormat}},
		{func(f *Fields) { f.City = "Mi\nlano" }, Problem{Field: "city", Kind: KindBadCharacters}},
		{func(f *Fields) { f.PostalCode = strings.Repeat("1", MaxTextRunes+1) }, Problem{Field: "postalCode", Kind: KindTooLong}},
		{func(f *Fields) { f.Country = "GE" }, Problem{Field: "country", Kind: KindUnknown, Value: "GE"}},
		{func(f *Fields) { f.Attributes = "[1]" }, Problem{Field: "attributes", Kind: KindFormat}},
		{func(f *Fields) { f.Attributes = `{"a":"` + strings.Repeat("x", MaxAttributesBytes) + `"}` }, Problem{Field: "attributes", Kind: KindTooLarge}},
	}
	for _, c := range cases {
		f := valid
		c.change(&f)
		got := Check(f, known)
		if !slices.Equal(got, []Problem{c.want}) {
			t.Errorf("%+v: %v, want %v", c.want, got, c.want)
		}
		if c.want.Message().Key == "" {
			t.Errorf("%+v has no message", c.want)
		}
	}
	// Optional fields may be empty.
	if p := Check(Fields{Name: "A", TaxID: "IT01234567890", Segment: "PUBLIC"}, known); len(p) != 0 {
		t.Errorf("only the required fields: %v", p)
	}
}

// TestCheckAcceptsEveryScriptAndEmoji: the refusal of hidden characters leaves emoji (with U+200D
// sequences), Hebrew, Arabic and CJK names alone.
func TestCheckAcceptsEveryScriptAndEmoji(t *testing.T) {
	t.Parallel()
	known := func(code string) bool { return code == "IT" }
	for _, name := range []string{"Caffè 😀", "Team 👩\u200d💻", "שלום בע״מ", "شركة سلام", "株式会社", "می\u200cخواهم"} {
		f := Fields{Name: name, TaxID: "IT01234567890", Segment: "BUSINESS", Attributes: `{"note":"line one\nline two"}`}
		if p := Check(f, known); len(p) != 0 {
			t.Errorf("%q: %v", name, p)
		}
	}
}

// A VAT number typed as people of its country type their own gets the prefix A8 stores; what is
// not of the country's shape is left as typed (upper case, without separators).
func TestTaxIDAsPeopleTypeIt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ typed, country, want string }{
		{"02468135790", "IT", "IT02468135790"},
		{"IT 024 681 357 90", "IT", "IT02468135790"},
		{"123456789", "DE", "DE123456789"},
		{"de 123.456.789", "DE", "DE123456789"},
		{"U12345678", "AT", "ATU12345678"},
		{"094259216", "GR", "EL094259216"},
		{"123456789B01", "NL", "NL123456789B01"},
		{"CHE-123.456.789", "CH", "CHE123456789"},
		{"21/815/08150", "DE", "2181508150"}, // a Steuernummer is not a VAT number: A8's check refuses it
		{"02468135790", "", "02468135790"},
		{"02468135790", "DE", "02468135790"},
	} {
		if got := TaxID(c.typed, c.country); got != c.want {
			t.Errorf("TaxID(%q, %q) = %q, want %q", c.typed, c.country, got, c.want)
		}
	}
}
