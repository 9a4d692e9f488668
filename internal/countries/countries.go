// Package countries is the list of countries a customer's address may name: the ISO 3166-1
// alpha-2 codes (what the v2 API stores, docs/v2-assumptions.md A8: "country two upper-case
// letters"), each named in the reader's language (CLDR names through golang.org/x/text) and
// listed in that language's alphabetical order. The form offers this list, so a name typed in
// full can never be cut to two letters that name another country (issue 33: "Germany" saved as
// "GE", Georgia).
package countries

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/cpqportal/portal/internal/textfold"
)

// isoCodes are the 249 officially assigned ISO 3166-1 alpha-2 codes. The list is fixed here
// rather than taken from x/text, whose regions also hold CLDR-only ones (EU, EZ, UN, XK, AC, IC…)
// that are not codes of the standard.
const isoCodes = "" +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ " +
	"BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
	"DE DJ DK DM DO DZ " +
	"EC EE EG EH ER ES ET " +
	"FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY " +
	"HK HM HN HR HT HU " +
	"ID IE IL IM IN IO IQ IR IS IT " +
	"JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ " +
	"LA LB LC LI LK LR LS LT LU LV LY " +
	"MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
	"NA NC NE NF NG NI NL NO NP NR NU NZ " +
	"OM " +
	"PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
	"QA " +
	"RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ " +
	"TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
	"UA UG UM US UY UZ " +
	"VA VC VE VG VI VN VU " +
	"WF WS " +
	"YE YT " +
	"ZA ZM ZW"

// Country is a code and its name in one language.
type Country struct {
	Code string // "DE"
	Name string // "Deutschland", "Germania"
}

// List holds the countries named and sorted per language, each built the first time a language
// asks (about 250 names and a sort) and shared afterwards. Safe for concurrent use.
type List struct {
	codes     []string
	byLang    sync.Map // language.Tag -> []Country
	languages []language.Tag

	namesOnce sync.Once
	names     map[string]string // Resolve's keys to codes, built on its first call
}

// New returns the list; Resolve reads names in the languages given (and English).
func New(languages ...language.Tag) *List {
	return &List{codes: strings.Fields(isoCodes), languages: languages}
}

// Has reports whether code is one of the list's codes (upper case, as the v2 API stores them).
func (l *List) Has(code string) bool {
	_, found := slices.BinarySearch(l.codes, code)
	return found
}

// In is every country named in tag's language and sorted by those names the language's way
// ("Österreich" between "Oman" and "Pakistan" in German). The caller must not change it.
func (l *List) In(tag language.Tag) []Country {
	if list, ok := l.byLang.Load(tag); ok {
		return list.([]Country)
	}
	namer := display.Regions(tag)
	list := make([]Country, 0, len(l.codes))
	for _, code := range l.codes {
		list = append(list, Country{Code: code, Name: name(namer, code)})
	}
	order := collate.New(tag)
	slices.SortStableFunc(list, func(a, b Country) int { return order.CompareString(a.Name, b.Name) })
	stored, _ := l.byLang.LoadOrStore(tag, list)
	return stored.([]Country)
}

// Name is code's name in tag's language; a code the list does not have is written as it is.
func (l *List) Name(tag language.Tag, code string) string {
	if !l.Has(code) {
		return code
	}
	return name(display.Regions(tag), code)
}

func name(namer display.Namer, code string) string {
	region, err := language.ParseRegion(code)
	if err != nil {
		return code
	}
	if n := namer.Name(region); n != "" {
		return n
	}
	return code
}

// variants are names people write for a country that CLDR does not give in the portal's
// languages (a shorter or older name, an abbreviation), folded as Resolve folds.
var variants = map[string]string{
	"uk": "GB", "greatbritain": "GB", "england": "GB", "scotland": "GB", "wales": "GB", "grossbritannien": "GB",
	"granbretagna": "GB", "granbretana": "GB", "grandebretagne": "GB", "inghilterra": "GB", "angleterre": "GB",
	"usa": "US", "unitedstatesofamerica": "US", "america": "US", "vereinigtestaaten": "US", "statiuniti": "US",
	"etatsunis": "US", "estadosunidos": "US", "eeuu": "US",
	"holland": "NL", "thenetherlands": "NL", "olanda": "NL", "hollande": "NL", "holanda": "NL",
	"czechrepublic": "CZ", "tschechischerepublik": "CZ", "repubblicaceca": "CZ", "republiquetcheque": "CZ", "republicacheca": "CZ",
	"brd": "DE", "bundesrepublikdeutschland": "DE", "germania": "DE",
	"republicofireland": "IE", "eire": "IE",
	"vatican": "VA", "vaticano": "VA", "vatikan": "VA",
	"russianfederation": "RU", "southkorea": "KR", "northkorea": "KP",
}

// resolveKey is the form Resolve compares names in: folded (textfold: case, accents, full stops,
// apostrophes) and without spaces or other punctuation, so "U.S.A.", "Etats-Unis" and "ÉTATS UNIS"
// are one.
func resolveKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, textfold.Fold(s))
}

// Resolve is the code of the country text names, written as people write it in a file: an ISO
// code (alpha-2 "DE", alpha-3 "DEU", any case), the country's name in one of the given languages
// (CLDR: "Deutschland", "Germania", "Allemagne", "Alemania", "Germany"), or a common variant
// ("UK", "USA", "Holland"). ok is false when text names no country of the list, or names two.
func (l *List) Resolve(text string) (code string, ok bool) {
	key := resolveKey(text)
	if key == "" {
		return "", false
	}
	if code := strings.ToUpper(key); len(code) == 2 && l.Has(code) {
		return code, true
	}
	l.namesOnce.Do(l.buildNames)
	code, ok = l.names[key]
	return code, ok && code != ""
}

// buildNames fills l.names: every code's alpha-3 code and its names in l.languages and English,
// then the variants. A key two countries share (none is known in CLDR's names today) maps to ""
// so it resolves to neither.
func (l *List) buildNames() {
	l.names = map[string]string{}
	put := func(key, code string) {
		if key == "" {
			return
		}
		if prev, seen := l.names[key]; seen && prev != code {
			l.names[key] = ""
			return
		}
		l.names[key] = code
	}
	namers := []display.Namer{display.Regions(language.English)}
	for _, tag := range l.languages {
		namers = append(namers, display.Regions(tag))
	}
	for _, code := range l.codes {
		region, err := language.ParseRegion(code)
		if err != nil {
			continue
		}
		put(strings.ToLower(region.ISO3()), code)
		for _, namer := range namers {
			put(resolveKey(namer.Name(region)), code)
		}
	}
	for key, code := range variants {
		if _, seen := l.names[key]; !seen {
			l.names[key] = code
		}
	}
}
