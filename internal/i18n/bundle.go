package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/bojanz/currency"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
)

// Source is the language the catalogues are written from; its catalogue defines the keys.
var Source = language.English

// Languages are the languages the portal speaks, the source first.
var Languages = []language.Tag{language.English, language.Italian, language.French, language.German, language.Spanish}

// CookieName is the long-lived preference cookie that keeps a person's choice of language. It is
// not tied to the session, so the sign-in page is in that language too.
const CookieName = "portal_lang"

//go:embed locales/*.json
var localeFiles embed.FS

// Bundle holds the loaded catalogues and matches requests to a language. It is read-only after
// Load and safe for concurrent use.
type Bundle struct {
	catalog     *catalog.Builder
	matcher     language.Matcher
	keys        []string // the source catalogue's keys, sorted
	translators map[language.Tag]*Translator
	pseudo      bool // serve Pseudo too
	zones       zones
}

// verbPattern finds the printf verbs of a message (with explicit argument indexes, flags, width
// and precision), so translations can be checked to take the same arguments.
var verbPattern = regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[a-zA-Z%]`)

// Pseudo is the pseudo-locale (English with every message wrapped in ⟦ ⟧), served only by a bundle
// loaded WithPseudo: the pseudo-locale test renders every page in it, and any visible English
// outside the brackets is text that did not go through the translator.
var Pseudo = language.MustParse("en-XA")

// Option changes how Load builds the bundle.
type Option func(*Bundle)

// WithPseudo adds the Pseudo language (tests only: it is never offered in the language menu).
func WithPseudo() Option { return func(b *Bundle) { b.pseudo = true } }

// Load reads and checks the embedded catalogues. An error names the language and the key.
func Load(opts ...Option) (*Bundle, error) {
	b := &Bundle{
		catalog:     catalog.NewBuilder(catalog.Fallback(Source)),
		matcher:     language.NewMatcher(Languages),
		translators: map[language.Tag]*Translator{},
	}
	for _, opt := range opts {
		opt(b)
	}
	messages := map[language.Tag]map[string]string{}
	for _, tag := range Languages {
		raw, err := localeFiles.ReadFile("locales/" + tag.String() + ".json")
		if err != nil {
			return nil, fmt.Errorf("i18n: catalogue of %s: %w", tag, err)
		}
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("i18n: catalogue of %s: %w", tag, err)
		}
		messages[tag] = m
	}
	for key := range messages[Source] {
		b.keys = append(b.keys, key)
	}
	sort.Strings(b.keys)
	for _, tag := range Languages {
		m := messages[tag]
		if err := checkCatalogue(messages[Source], m); err != nil {
			return nil, fmt.Errorf("i18n: catalogue of %s: %w", tag, err)
		}
		for key, msg := range m {
			if err := b.catalog.SetString(tag, key, msg); err != nil {
				return nil, fmt.Errorf("i18n: catalogue of %s, key %q: %w", tag, key, err)
			}
		}
	}
	for _, tag := range Languages {
		b.translators[tag] = newTranslator(tag, message.NewPrinter(tag, message.Catalog(b.catalog)), currency.NewLocale(tag.String()), messages[tag])
	}
	if b.pseudo {
		pseudo := make(map[string]string, len(messages[Source]))
		for key, msg := range messages[Source] {
			pseudo[key] = "⟦" + msg + "⟧"
			if err := b.catalog.SetString(Pseudo, key, pseudo[key]); err != nil {
				return nil, fmt.Errorf("i18n: pseudo-locale, key %q: %w", key, err)
			}
		}
		b.translators[Pseudo] = newTranslator(Pseudo, message.NewPrinter(Pseudo, message.Catalog(b.catalog)), currency.NewLocale(Source.String()), pseudo)
	}
	return b, nil
}

// checkCatalogue reports the first difference between a translation and the source: a key
// missing or extra, an empty message, or other printf verbs.
func checkCatalogue(source, translation map[string]string) error {
	for key, msg := range source {
		got, ok := translation[key]
		switch {
		case !ok:
			return fmt.Errorf("key %q is missing", key)
		case strings.TrimSpace(got) == "":
			return fmt.Errorf("key %q is empty", key)
		case !slices.Equal(verbPattern.FindAllString(msg, -1), verbPattern.FindAllString(got, -1)):
			return fmt.Errorf("key %q has the placeholders %q, the source has %q", key,
				verbPattern.FindAllString(got, -1), verbPattern.FindAllString(msg, -1))
		}
	}
	for key := range translation {
		if _, ok := source[key]; !ok {
			return fmt.Errorf("key %q is not in the source catalogue", key)
		}
	}
	return nil
}

// Keys are the catalogue's keys, sorted (for the check that every key is used, and used keys exist).
func (b *Bundle) Keys() []string { return slices.Clone(b.keys) }

// Translator is the translator of tag, which must be one of Languages (else the source's).
func (b *Bundle) Translator(tag language.Tag) *Translator {
	if tr, ok := b.translators[tag]; ok {
		return tr
	}
	return b.translators[Source]
}

// Match picks the language for a request: the preference cookie when it names a language the
// portal speaks, else the best match of Accept-Language, else the source language.
func (b *Bundle) Match(r *http.Request) language.Tag {
	if c, err := r.Cookie(CookieName); err == nil {
		if tag, ok := b.Supported(c.Value); ok {
			return tag
		}
	}
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return Source
	}
	_, index, confidence := b.matcher.Match(tags...)
	if confidence == language.No {
		return Source
	}
	return Languages[index]
}

// Supported reports whether code (e.g. "it") names a language the portal speaks, and which.
func (b *Bundle) Supported(code string) (language.Tag, bool) {
	if b.pseudo && code == Pseudo.String() {
		return Pseudo, true
	}
	for _, tag := range Languages {
		if tag.String() == code {
			return tag, true
		}
	}
	return language.Und, false
}

// Choice is one entry of the language menu: the code and the language's own name for itself.
type Choice struct {
	Code string // "it"
	Name string // "Italiano"
}

// Choices are the languages of the menu, in Languages order, each named in its own language.
func (b *Bundle) Choices() []Choice {
	choices := make([]Choice, 0, len(Languages))
	for _, tag := range Languages {
		choices = append(choices, Choice{Code: tag.String(), Name: b.translators[tag].T("language.name")})
	}
	return choices
}
