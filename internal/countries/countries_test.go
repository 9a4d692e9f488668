package countries

import (
	"slices"
	"testing"

	"golang.org/x/text/language"
)

var languages = []language.Tag{language.English, language.Italian, language.French, language.German, language.Spanish}

func TestEveryCodeIsNamedInEveryLanguage(t *testing.T) {
	t.Parallel()
	l := New()
	if n := len(l.codes); n != 249 {
		t.Errorf("%d codes, ISO 3166-1 assigns 249", n)
	}
	if !slices.IsSorted(l.codes) || len(slices.Compact(slices.Clone(l.codes))) != len(l.codes) {
		t.Error("the codes are not sorted and unique (Has searches them)")
	}
	for _, tag := range languages {
		list := l.In(tag)
		if len(list) != len(l.codes) {
			t.Fatalf("%s: %d countries", tag, len(list))
		}
		for _, c := range list {
			if c.Name == "" || c.Name == c.Code {
				t.Errorf("%s: %s has no name", tag, c.Code)
			}
		}
	}
}

func TestNamesInTheReadersLanguageAndOrder(t *testing.T) {
	t.Parallel()
	l := New()
	for _, tt := range []struct {
		tag        language.Tag
		code, want string
	}{
		{language.English, "DE", "Germany"}, {language.German, "DE", "Deutschland"}, {language.Italian, "DE", "Germania"},
		{language.French, "DE", "Allemagne"}, {language.Spanish, "DE", "Alemania"}, {language.English, "GE", "Georgia"},
		{language.Italian, "ZZ", "ZZ"},
	} {
		if got := l.Name(tt.tag, tt.code); got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.tag, tt.code, got, tt.want)
		}
	}
	// German sorts "Österreich" with the O's, not after "Z".
	de := l.In(language.German)
	at := slices.IndexFunc(de, func(c Country) bool { return c.Code == "AT" })
	om := slices.IndexFunc(de, func(c Country) bool { return c.Code == "OM" })
	pk := slices.IndexFunc(de, func(c Country) bool { return c.Code == "PK" })
	if !(om < at && at < pk) {
		t.Errorf("German order: Oman %d, Österreich %d, Pakistan %d", om, at, pk)
	}
	if !l.Has("IT") || l.Has("EU") || l.Has("it") || l.Has("GERMANY") || l.Has("") {
		t.Error("Has answers wrongly")
	}
}

// Countries as people write them in a file resolve to their code; what names none, or two, does not.
func TestResolveReadsCountriesAsPeopleWriteThem(t *testing.T) {
	t.Parallel()
	l := New(language.English, language.Italian, language.French, language.German, language.Spanish)
	for text, want := range map[string]string{
		"DE": "DE", "de": "DE", "DEU": "DE", "Deutschland": "DE", "DEUTSCHLAND": "DE", "Germany": "DE", "Germania": "DE",
		"Allemagne": "DE", "Alemania": "DE", "Italia": "IT", "Italien": "IT", "Italie": "IT", "ITA": "IT", "Österreich": "AT",
		"osterreich": "AT", "Schweiz": "CH", "Svizzera": "CH", "Suisse": "CH", "España": "ES", "Spanien": "ES",
		"United Kingdom": "GB", "UK": "GB", "U.S.A.": "US", "États-Unis": "US", "Holland": "NL", " Niederlande ": "NL",
		"Repubblica Ceca": "CZ", "Czech Republic": "CZ",
	} {
		if got, ok := l.Resolve(text); !ok || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
	for _, text := range []string{"", "  ", "Atlantis", "XX", "EU", "Deutschlandd", "123"} {
		if got, ok := l.Resolve(text); ok {
			t.Errorf("Resolve(%q) = %q, want none", text, got)
		}
	}
}
