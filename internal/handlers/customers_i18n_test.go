package handlers

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
)

// testTranslator is the catalogues' translator of lang ("en", "it", ...), for tests of helpers
// that take one.
func testTranslator(t testing.TB, lang string) *i18n.Translator {
	t.Helper()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	tag, ok := bundle.Supported(lang)
	if !ok {
		t.Fatalf("no language %q", lang)
	}
	return bundle.Translator(tag)
}

// italianDateTime is a date-time as Italian pages write it: "3 mar 2026, 10:04 UTC".
var italianDateTime = regexp.MustCompile(`^\d{1,2} (gen|feb|mar|apr|mag|giu|lug|ago|set|ott|nov|dic) \d{4}, \d{2}:\d{2} UTC$`)

// TestCustomersPaletteAndSessionsSpeakItalian: with an Italian browser (Accept-Language) or the
// Italian preference cookie, the customer list, a customer, the customer form's validation, the
// palette and the sessions page are in Italian, with Italian number and date formats.
func TestCustomersPaletteAndSessionsSpeakItalian(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{simCustomers: 1200, customerCacheTTL: time.Minute})
	user := p.login(t, "sales", "sales-demo")

	page := p.get(t, user, "/customers", map[string]string{"Accept-Language": "it-IT,it;q=0.9"})
	doc := parseHTML(t, page.body)
	if lang := doc.Find("html").AttrOr("lang", ""); lang != "it" {
		t.Fatalf("<html lang=%q>, want it", lang)
	}
	if got := doc.Find(`[data-testid="page-title"]`).Text(); got != "Clienti" {
		t.Errorf("list title %q", got)
	}
	if got := doc.Find(`[data-testid="result-count"]`).Text(); got != "1.200 clienti in tutto, visualizzati 1–25." {
		t.Errorf("result count %q: not Italian, or 1200 not grouped the Italian way", got)
	}
	if got := doc.Find(`[data-testid="sort-name"]`).Text(); !strings.Contains(got, "Nome") {
		t.Errorf("name column %q", got)
	}
	updated := strings.TrimSpace(doc.Find(`[data-testid="customer-row"] td[data-label="Aggiornato"]`).First().Text())
	if !italianDateTime.MatchString(updated) {
		t.Errorf("updated %q is not an Italian date-time", updated)
	}
	if got := doc.Find("body").AttrOr("data-i18n", ""); !strings.Contains(got, "Nessuna corrispondenza") {
		t.Errorf("app.js messages are not Italian: %.200s", got)
	}

	// From here on the preference cookie speaks Italian.
	base, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	user.Jar.SetCookies(base, []*http.Cookie{{Name: i18n.CookieName, Value: "it", Path: "/"}})

	href := doc.Find(`[data-testid="customer-link"]`).First().AttrOr("href", "")
	detail := parseHTML(t, p.get(t, user, href, nil).body)
	if got := detail.Find(`[data-testid="start-quote"]`).Text(); got != "Crea un’offerta per questo cliente" {
		t.Errorf("start-quote button %q", got)
	}
	if got := detail.Find(`#customer-owners-title`).Text(); got != "Responsabili" {
		t.Errorf("owners title %q", got)
	}

	form := validCustomerForm("Ferramenta Rossi", "12")
	resp := p.postForm(t, user, "/customers", form, false)
	fdoc := parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.HasPrefix(fieldError(fdoc, "taxId"), "Errore: Inserisci la partita IVA") {
		t.Errorf("bad tax id: %d, field error %q", resp.StatusCode, fieldError(fdoc, "taxId"))
	}
	if got := fdoc.Find(`[data-testid="error-summary"] h2`).Text(); got != "C’è un problema" {
		t.Errorf("error summary %q", got)
	}
	if got := fdoc.Find(`label[for="field-taxId"]`).Text(); !strings.Contains(got, "Partita IVA") {
		t.Errorf("tax id label %q", got)
	}

	pal := parseHTML(t, p.get(t, user, "/palette?q=zzzz", nil).body)
	if got := pal.Find("h1").Text(); got != "Vai a" {
		t.Errorf("palette title %q", got)
	}
	if got := pal.Find(`[data-testid="palette-page-summary"]`).Text(); got != "Nessun risultato per «zzzz»." {
		t.Errorf("palette summary %q", got)
	}

	sessions := parseHTML(t, p.get(t, user, "/sessions", nil).body)
	if got := sessions.Find(`[data-testid="page-title"]`).Text(); got != "Le tue sessioni" {
		t.Errorf("sessions title %q", got)
	}
	started := strings.TrimSpace(sessions.Find(`[data-testid="session-row"] td[data-label="Iniziata"]`).First().Text())
	if !italianDateTime.MatchString(started) {
		t.Errorf("session start %q is not an Italian date-time", started)
	}
}
