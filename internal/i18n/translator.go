package i18n

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bojanz/currency"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/number"
)

// Translator speaks one language: messages of the catalogue and formats of the locale.
type Translator struct {
	tag     language.Tag
	printer *message.Printer
	money   *currency.Formatter
	locale  currency.Locale

	// plain holds every catalogue message formatted without arguments (key to text), made when
	// the translator is: most of a page's words are such messages, and formatting one through
	// the printer each time was about 5 % of the customer page's CPU (docs/performance.md). It is
	// never written afterwards, so reading it needs no lock.
	plain map[string]string
	// templates holds the messages that take only strings (%s, %[n]s), formatted without the
	// printer when their arguments are strings.
	templates map[string]*stringTemplate

	// derived holds texts built from the catalogue alone (Derived), by name; shared by the
	// translator's copies in other time zones (InZone).
	derived *sync.Map

	// zone is where times are shown (UTC unless InZone said otherwise).
	zone *time.Location
}

// newTranslator returns the translator of tag; messages are its catalogue (key to message; none
// for a translator without a catalogue).
func newTranslator(tag language.Tag, printer *message.Printer, locale currency.Locale, messages map[string]string) *Translator {
	money := currency.NewFormatter(locale)
	money.MaxDigits = 2
	t := &Translator{tag: tag, printer: printer, money: money, locale: locale,
		plain: make(map[string]string, len(messages)), templates: map[string]*stringTemplate{},
		derived: &sync.Map{}, zone: time.UTC}
	for key, msg := range messages {
		t.plain[key] = printer.Sprintf(key)
		if tpl, ok := compileStringTemplate(msg); ok {
			t.templates[key] = &tpl
		}
	}
	return t
}

// InZone is the translator showing times in zone (the person's time zone, docs/i18n.md): a
// shallow copy sharing the catalogue, formats and caches. A nil zone or UTC gives t itself.
func (t *Translator) InZone(zone *time.Location) *Translator {
	if zone == nil || zone == t.zone || zone.String() == t.zone.String() {
		return t
	}
	c := *t
	c.zone = zone
	return &c
}

// Zone is where the translator shows times.
func (t *Translator) Zone() *time.Location { return t.zone }

// Tag is the translator's language.
func (t *Translator) Tag() language.Tag { return t.tag }

// Lang is the language's code for <html lang> and the preference cookie ("en", "it", ...).
func (t *Translator) Lang() string { return t.tag.String() }

// T translates the catalogue's key with printf arguments (numbers in them are localised). A key
// the catalogue lacks is shown as itself: the catalogue tests make that a failing test, never a
// blank page.
func (t *Translator) T(key string, args ...any) string {
	if len(args) > 0 {
		args = t.resolve(args)
		if tpl, ok := t.templates[key]; ok && len(args) == tpl.n {
			if text, ok := tpl.format(args); ok {
				return text
			}
		}
		return t.printer.Sprintf(key, args...)
	}
	if text, ok := t.plain[key]; ok {
		return text
	}
	return t.printer.Sprintf(key)
}

// resolve writes the Localized arguments (a byte size) in t's language, so a caller may pass one
// to T as it passes it to M (issue 33: "Uploaded annex.pdf (%!s(i18n.Bytes=385))"). The caller's
// slice is left as it is: a copy is made at the first Localized argument.
func (t *Translator) resolve(args []any) []any {
	var localized []any
	for i, arg := range args {
		if l, ok := arg.(Localized); ok {
			if localized == nil {
				localized = slices.Clone(args)
			}
			localized[i] = l.In(t)
		}
	}
	if localized == nil {
		return args
	}
	return localized
}

// Derived returns build(t), built the first time name is asked for and reused afterwards. It is
// for texts made from the catalogue alone, the same for every request in one language (app.js's
// message object cost about 3 % of the customer page's CPU when encoded per request). name must
// be a constant of the code, never request data, so the map stays as small as the code.
func (t *Translator) Derived(name string, build func(*Translator) string) string {
	if text, ok := t.derived.Load(name); ok {
		return text.(string)
	}
	text, _ := t.derived.LoadOrStore(name, build(t))
	return text.(string)
}

// Money formats an amount of cents in the currency (an ISO 4217 code such as "EUR") the way the
// locale writes it: "€1,234.50" in English, "1.234,50 €" in German, "12.345,50 €" in Italian (CLDR groups
// Italian and Spanish amounts only from five digits: "1234,50 €"). An unknown currency is
// written with its code after a localised number.
func (t *Translator) Money(cents int64, currencyCode string) string {
	amount, err := currency.NewAmountFromInt64(cents, currencyCode)
	if err != nil {
		return t.Decimal(float64(cents)/100, 2) + " " + currencyCode
	}
	return t.money.Format(amount)
}

// Decimal formats v with exactly digits fraction digits and the locale's separators.
func (t *Translator) Decimal(v float64, digits int) string {
	return t.printer.Sprint(number.Decimal(v, number.Scale(digits)))
}

// Integer formats n with the locale's grouping.
func (t *Translator) Integer(n int64) string { return t.printer.Sprint(number.Decimal(n)) }

// Percent formats a fraction (0.1 is 10 %) with up to two fraction digits, as the locale writes it.
func (t *Translator) Percent(fraction float64) string {
	return t.printer.Sprint(number.Percent(fraction, number.MaxFractionDigits(2)))
}

// Date writes the day, the month's abbreviation and the year in the language's order, in the
// translator's time zone: "25 Nov 2026", "25 nov 2026", "25. Nov. 2026".
func (t *Translator) Date(at time.Time) string {
	at = at.In(t.zone)
	// Day and year as plain digits: the printer would group a year's digits ("2,026").
	return t.T("date.pattern", strconv.Itoa(at.Day()), t.T(monthKeys[at.Month()-1]), strconv.Itoa(at.Year()))
}

// DateTime is Date with the time of day (24 hours) and the time zone's abbreviation ("UTC",
// "CET", or an offset such as "+03" where the zone has no abbreviation), in the translator's zone.
func (t *Translator) DateTime(at time.Time) string {
	at = at.In(t.zone)
	return t.T("datetime.pattern", t.Date(at), at.Format("15:04"), at.Format("MST"))
}

// Timestamp is DateTime to the second, for records such as audits where the order of events
// within a minute matters.
func (t *Translator) Timestamp(at time.Time) string {
	at = at.In(t.zone)
	return t.T("datetime.pattern", t.Date(at), at.Format("15:04:05"), at.Format("MST"))
}

var monthKeys = [12]string{
	"month.jan", "month.feb", "month.mar", "month.apr", "month.may", "month.jun",
	"month.jul", "month.aug", "month.sep", "month.oct", "month.nov", "month.dec",
}

// ErrNotANumber is wrapped by ParseDecimal's errors.
var ErrNotANumber = errors.New("i18n: not a number")

// ParseDecimal reads a number typed in the locale's way: its decimal separator ("12,5" in
// Italian, "12.5" in English), its grouping separator between groups of three digits, an optional
// leading minus. The other separator is refused, so "1.5" in Italian is an error, not 15.
func (t *Translator) ParseDecimal(s string) (float64, error) {
	decimal, group := t.separators()
	// Typed spaces stand for the locale's space-like grouping (U+202F in French).
	s = strings.TrimSpace(strings.NewReplacer("\u00a0", " ", "\u202f", " ").Replace(s))
	if group == "\u00a0" || group == "\u202f" {
		group = " "
	}
	if s == "" {
		return 0, fmt.Errorf("%w: empty", ErrNotANumber)
	}
	intPart, fracPart, hasFrac := strings.Cut(s, decimal)
	if hasFrac && (fracPart == "" || strings.ContainsAny(fracPart, group+decimal+" ")) {
		return 0, fmt.Errorf("%w: %q", ErrNotANumber, s)
	}
	if groups := strings.Split(intPart, group); len(groups) > 1 {
		for i, g := range groups {
			digits := strings.TrimPrefix(g, "-")
			if (i == 0 && (digits == "" || len(digits) > 3)) || (i > 0 && len(g) != 3) {
				return 0, fmt.Errorf("%w: %q", ErrNotANumber, s)
			}
		}
		intPart = strings.Join(groups, "")
	}
	plain := intPart
	if hasFrac {
		plain += "." + fracPart
	}
	if strings.ContainsAny(plain, "eE+xX_") || strings.Count(plain, "-") > 1 || strings.LastIndex(plain, "-") > 0 {
		return 0, fmt.Errorf("%w: %q", ErrNotANumber, s)
	}
	v, err := strconv.ParseFloat(plain, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrNotANumber, s)
	}
	return v, nil
}

// DecimalSeparator is the locale's decimal mark: "." (en) or "," (it, fr, de, es). It decides the
// CSV convention of exports (internal/export.ConventionFor).
func (t *Translator) DecimalSeparator() string {
	decimal, _ := t.separators()
	return decimal
}

// separators are the locale's decimal and grouping separators, read from how it writes 12345.5
// ("12<group>345<decimal>5"; five digits, since some locales do not group four).
func (t *Translator) separators() (decimal, group string) {
	written := t.printer.Sprint(number.Decimal(12345.5, number.Scale(1)))
	decimal = written[len(written)-2 : len(written)-1]
	group = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(written, decimal+"5"), "12"), "345")
	return decimal, group
}

// Plural is the message about n things in the plural form tr's language uses for n (CLDR's
// cardinal rules, golang.org/x/text/feature/plural): the one key for the "one" form (1, and 0 in
// French: "0 contrat"), the other key otherwise. Both messages take n first, then args; the five
// languages of the portal need only these two forms for whole numbers.
func (t *Translator) Plural(n int, one, other string, args ...any) string {
	key := other
	if plural.Cardinal.MatchPlural(t.tag, n, 0, 0, 0, 0) == plural.One {
		key = one
	}
	return t.T(key, append([]any{n}, args...)...)
}
