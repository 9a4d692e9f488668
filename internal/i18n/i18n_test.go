package i18n

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/language"
)

func loadBundle(t *testing.T) *Bundle {
	t.Helper()
	b, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMoneyIsWrittenTheLocaleWay(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	// CLDR's patterns; French and German group with (narrow) no-break spaces.
	for _, tc := range []struct {
		tag   language.Tag
		cents int64
		want  string
	}{
		{language.English, 1900, "€19.00"},
		{language.Italian, 1900, "19,00\u00a0€"},
		{language.French, 123450, "1\u202f234,50\u00a0€"},
		{language.German, 123450, "1.234,50\u00a0€"},
		{language.Spanish, 1900, "19,00\u00a0€"},
		{language.English, -598, "-€5.98"},
	} {
		if got := b.Translator(tc.tag).Money(tc.cents, "EUR"); got != tc.want {
			t.Errorf("%s: Money(%d) = %q, want %q", tc.tag, tc.cents, got, tc.want)
		}
	}
}

func TestDatesAndNumbersFollowTheLanguage(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	at := time.Date(2026, time.November, 24, 9, 5, 0, 0, time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		tag                        language.Tag
		date, dateTime, pct, large string
	}{
		{language.English, "24 Nov 2026", "24 Nov 2026, 08:05 UTC", "12.5%", "1,234,567"},
		{language.Italian, "24 nov 2026", "24 nov 2026, 08:05 UTC", "12,5%", "1.234.567"},
		{language.French, "24 nov. 2026", "24 nov. 2026 à 08:05 UTC", "12,5\u00a0%", "1\u00a0234\u00a0567"},
		{language.German, "24. Nov. 2026", "24. Nov. 2026, 08:05 UTC", "12,5\u00a0%", "1.234.567"},
		{language.Spanish, "24 nov 2026", "24 nov 2026, 08:05 UTC", "12,5\u00a0%", "1.234.567"},
	} {
		tr := b.Translator(tc.tag)
		if got := tr.Date(at); got != tc.date {
			t.Errorf("%s: Date = %q, want %q", tc.tag, got, tc.date)
		}
		if got := tr.DateTime(at); got != tc.dateTime {
			t.Errorf("%s: DateTime = %q, want %q", tc.tag, got, tc.dateTime)
		}
		if got := tr.Percent(0.125); got != tc.pct {
			t.Errorf("%s: Percent(0.125) = %q, want %q", tc.tag, got, tc.pct)
		}
		if got := tr.Integer(1234567); got != tc.large {
			t.Errorf("%s: Integer = %q, want %q", tc.tag, got, tc.large)
		}
	}
}

func TestParseDecimalTakesTheLocaleSeparator(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	for _, tc := range []struct {
		tag   language.Tag
		input string
		want  float64
		ok    bool
	}{
		{language.Italian, "12,5", 12.5, true},
		{language.Italian, "1.234,5", 1234.5, true},
		{language.Italian, "1.5", 0, false}, // the English separator: refused, not read as 15
		{language.English, "12.5", 12.5, true},
		{language.English, "12,5", 0, false},
		{language.English, "1,234.5", 1234.5, true},
		{language.French, "1 234,5", 1234.5, true},
		{language.French, "1\u202f234,5", 1234.5, true},
		{language.German, "-3,25", -3.25, true},
		{language.Spanish, "7", 7, true},
		{language.Italian, "", 0, false},
		{language.Italian, "1e3", 0, false},
		{language.Italian, "12,", 0, false},
		{language.Italian, "1--2", 0, false},
		{language.Italian, "abc", 0, false},
	} {
		got, err := b.Translator(tc.tag).ParseDecimal(tc.input)
		switch {
		case tc.ok && (err != nil || got != tc.want):
			t.Errorf("%s: ParseDecimal(%q) = %v, %v; want %v", tc.tag, tc.input, got, err, tc.want)
		case !tc.ok && (err == nil || !errors.Is(err, ErrNotANumber)):
			t.Errorf("%s: ParseDecimal(%q) = %v, %v; want ErrNotANumber", tc.tag, tc.input, got, err)
		}
	}
}

func TestMatchPrefersTheCookieThenTheBrowser(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	for _, tc := range []struct {
		cookie, accept string
		want           language.Tag
	}{
		{"", "it-IT,it;q=0.9,en;q=0.8", language.Italian},
		{"", "de-CH", language.German},
		{"", "pt-BR,es;q=0.5", language.Spanish},
		{"", "ja", language.English},
		{"", "", language.English},
		{"", "garbage;;;q=x", language.English},
		{"fr", "it", language.French},
		{"xx", "es", language.Spanish}, // a cookie naming no language is ignored
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.accept != "" {
			r.Header.Set("Accept-Language", tc.accept)
		}
		if tc.cookie != "" {
			r.Header.Set("Cookie", CookieName+"="+tc.cookie)
		}
		if got := b.Match(r); got != tc.want {
			t.Errorf("cookie %q, Accept-Language %q: %s, want %s", tc.cookie, tc.accept, got, tc.want)
		}
	}
}

func TestCataloguesAreCheckedWhole(t *testing.T) {
	t.Parallel()
	source := map[string]string{"a": "Quote %[1]d of %[2]s", "b": "Cart"}
	for name, tc := range map[string]struct {
		translation map[string]string
		wantErr     string
	}{
		"complete":           {map[string]string{"a": "Offerta %[1]d di %[2]s", "b": "Carrello"}, ""},
		"missing key":        {map[string]string{"a": "Offerta %[1]d di %[2]s"}, `key "b" is missing`},
		"extra key":          {map[string]string{"a": "Offerta %[1]d di %[2]s", "b": "Carrello", "c": "x"}, `key "c" is not in the source`},
		"empty message":      {map[string]string{"a": "Offerta %[1]d di %[2]s", "b": " "}, `key "b" is empty`},
		"other placeholders": {map[string]string{"a": "Offerta %[1]s", "b": "Carrello"}, `key "a" has the placeholders`},
	} {
		err := checkCatalogue(source, tc.translation)
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: %v, want %q", name, err, tc.wantErr)
		}
	}
	// The shipped catalogues pass the same check (Load runs it).
	if b := loadBundle(t); len(b.Keys()) == 0 {
		t.Error("the source catalogue has no keys")
	}
}

// Byte sizes are written in the reader's language, in a message argument too (Message.In resolves
// Localized arguments without changing the caller's).
func TestBytesInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	en, it, fr := b.Translator(language.English), b.Translator(language.Italian), b.Translator(language.French)
	for _, tt := range []struct {
		tr   *Translator
		n    int64
		want string
	}{
		{en, 512, "512 bytes"}, {en, 1024, "1 KiB"}, {en, 1536, "1.5 KiB"}, {en, 1 << 20, "1 MiB"},
		{en, 25 << 20, "25 MiB"}, {en, 1 << 30, "1 GiB"},
		{it, 1536, "1,5 KiB"}, {it, 1, "1 byte"}, {fr, 1536, "1,5 Kio"}, {fr, 10 << 20, "10 Mio"},
	} {
		if got := Bytes(tt.n).In(tt.tr); got != tt.want {
			t.Errorf("%s: Bytes(%d) = %q, want %q", tt.tr.Lang(), tt.n, got, tt.want)
		}
	}
	m := M("error.too_large.message", Bytes(1536))
	if got := m.In(it); got != "La richiesta è più grande di quanto il portale accetti (1,5 KiB)." {
		t.Errorf("a Bytes argument in Italian: %q", got)
	}
	if _, still := m.Args[0].(Bytes); !still {
		t.Errorf("translating changed the message's own argument to %T", m.Args[0])
	}
}

// Plural picks the "one" form by each language's CLDR rule: 1 everywhere, and 0 too in French.
func TestPluralFollowsTheLanguagesRule(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	for _, tt := range []struct {
		lang language.Tag
		n    int
		one  bool
	}{
		{language.English, 1, true}, {language.English, 0, false}, {language.English, 2, false},
		{language.French, 0, true}, {language.French, 1, true}, {language.French, 2, false},
		{language.Italian, 0, false}, {language.German, 1, true}, {language.Spanish, 21, false},
	} {
		got := b.Translator(tt.lang).Plural(tt.n, "common.bytes.b", "common.bytes.kib")
		want := b.Translator(tt.lang).T("common.bytes.kib", tt.n)
		if tt.one {
			want = b.Translator(tt.lang).T("common.bytes.b", tt.n)
		}
		if got != want {
			t.Errorf("%s, %d: %q, want %q", tt.lang, tt.n, got, want)
		}
	}
}

func TestDerivedIsBuiltOncePerLanguage(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	builds := 0
	build := func(tr *Translator) string {
		builds++
		return tr.T("common.bytes.b", 7)
	}
	en, it := b.Translator(language.English), b.Translator(language.Italian)
	for range 3 {
		if got, want := en.Derived("test derived", build), en.T("common.bytes.b", 7); got != want {
			t.Fatalf("English: %q, want %q", got, want)
		}
	}
	if got, want := it.Derived("test derived", build), it.T("common.bytes.b", 7); got != want {
		t.Fatalf("Italian: %q, want %q (each language keeps its own)", got, want)
	}
	if builds != 2 {
		t.Fatalf("built %d times, want once per language (2)", builds)
	}
}

// The messages formatted without the printer (string arguments only) read exactly as the printer
// writes them, in every language, whatever the arguments hold.
func TestStringTemplatesWriteWhatThePrinterWrites(t *testing.T) {
	t.Parallel()
	b, err := Load(WithPseudo())
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, tag := range append(slices.Clone(Languages), Pseudo) {
		tr := b.Translator(tag)
		for key, tpl := range tr.templates {
			args := make([]any, tpl.n)
			for i := range args {
				args[i] = fmt.Sprintf("‹%d %%d ${x} %%[1]s›", i+1)
			}
			if got, want := tr.T(key, args...), tr.printer.Sprintf(key, args...); got != want {
				t.Errorf("%s %s: %q, printer %q", tag, key, got, want)
			}
			checked++
		}
	}
	if checked < 500 {
		t.Fatalf("only %d messages take the string path; expected most of the catalogue's", checked)
	}
	// A non-string argument goes through the printer (numbers are localised).
	it := b.Translator(language.Italian)
	if got, want := it.T("common.bytes.b", 1234), it.printer.Sprintf("common.bytes.b", 1234); got != want {
		t.Errorf("number argument: %q, want %q", got, want)
	}
}

func TestCompileStringTemplate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		msg string
		ok  bool
		n   int
	}{
		{"Hello %s, 100%% sure", true, 1}, {"%[2]s before %[1]s", true, 2}, {"%[1]s and %[1]s", true, 1},
		{"%d items", false, 0}, {"%s and %[1]s", false, 0}, {"%[2]s only", false, 0}, {"%q", false, 0},
		{"no verbs", false, 0}, {"trailing %", false, 0}, {"%[x]s", false, 0},
	} {
		tpl, ok := compileStringTemplate(c.msg)
		if ok != c.ok || ok && tpl.n != c.n {
			t.Errorf("compileStringTemplate(%q) = n %d, %v; want n %d, %v", c.msg, tpl.n, ok, c.n, c.ok)
		}
	}
}
