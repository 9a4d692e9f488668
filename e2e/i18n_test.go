package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
	"golang.org/x/text/language"

	"github.com/cpqportal/portal/internal/i18n"
)

// Languages in the browser (issue 15, docs/i18n.md): a quote journey and a contract journey in
// Italian, switching language on a quote, and axe with the layout at 390 px and 1280 px in every
// language. Expected words come from the catalogues themselves (internal/i18n), so a translation
// can be reworded without touching the tests, while a page that shows the wrong language, the
// wrong formats or a raw key fails.

// i18nTranslator is the catalogue's translator of lang.
func i18nTranslator(t *testing.T, lang language.Tag) *i18n.Translator {
	t.Helper()
	bundle, err := i18n.Load()
	check(t, err, "load the catalogues")
	return bundle.Translator(lang)
}

// i18nExpectLang waits until the page is in lang (<html lang>) and its header's sign-out button
// says so in that language.
func i18nExpectLang(t *testing.T, page playwright.Page, tr *i18n.Translator, what string) {
	t.Helper()
	check(t, suite.expect.Locator(page.Locator("html")).ToHaveAttribute("lang", tr.Lang()), what+": <html lang="+tr.Lang()+">")
	check(t, suite.expect.Locator(page.GetByTestId("logout")).ToHaveText(tr.T("layout.sign_out")), what+": the header speaks "+tr.Lang())
}

// i18nItalianDate matches a date as the Italian pages write it: "25 nov 2026".
var i18nItalianDate = regexp.MustCompile(`\d{1,2} (gen|feb|mar|apr|mag|giu|lug|ago|set|ott|nov|dic) \d{4}\b`)

// A sales rep whose browser speaks Italian builds a quote: the sign-in, every label and every
// amount in Italian ("1.234,50 €"), a quantity, an extra discount typed the Italian way ("12,5")
// and a price typed with a decimal comma; then switches to German on the same quote, which keeps
// its carts and totals.
func TestI18nQuoteJourneyInItalian(t *testing.T) {
	it := i18nTranslator(t, language.Italian)
	page := newPageWith(t, pageOptions{locale: "it-IT"})
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	login(t, page, salesUser, salesPassword)
	i18nExpectLang(t, page, it, "after signing in")

	quotePath, _, mainA, mainR := qtStartQuote(t, page, "Mobile plans", "Business Mobile 50GB", "Sede di Milano")
	i18nExpectLang(t, page, it, "the new quote")
	head := &qtCart{title: "Sede di Milano", quantity: 1, items: []*qtItem{{name: "Business Mobile 50GB", unitA: mainA, unitR: mainR}}}
	m := &qtModel{carts: []*qtCart{head}, money: func(cents int64) string { return it.Money(cents, "EUR") }}
	qtCheckTotals(t, page, m, "creating the quote in Italian")
	if got := qtText(t, page.Locator(`#quote-summary [data-testid="quote-net-recurring"]`), "monthly total"); !strings.HasSuffix(got, "\u00a0€") || !strings.Contains(got, ",") {
		t.Errorf("the monthly total reads %q, not an Italian amount such as 1.234,50 €", got)
	}

	headCart := qtCartLocator(page, "Sede di Milano")
	qtSetQuantity(t, headCart, 3)
	head.quantity = 3
	qtCheckTotals(t, page, m, "changing the quantity in Italian")
	check(t, suite.expect.Locator(page.Locator("#announcer")).ToContainText(m.eur(mustNet(m))), "the announcement gives the Italian total")

	// An extra discount typed with a decimal comma: 12,5 %.
	check(t, page.GetByTestId("quote-discounts-open").Click(), "open the discounts")
	negotiated := page.Locator(`[data-testid="extra-option"]:has(label:text("Negotiated"))`)
	check(t, suite.expect.Locator(negotiated).ToBeVisible(), "the extra discounts are offered")
	check(t, negotiated.GetByTestId("extra-value").Fill("12,5"), "type 12,5")
	check(t, page.GetByTestId("discounts-submit").Press("Enter"), "apply the discounts")
	m.extras = append(m.extras, qtDiscount{bp: 1250, sides: qtSides{activation: true, recurring: true}})
	qtCheckTotals(t, page, m, "an extra discount of 12,5 %")

	// A monthly price typed the Italian way on the reprice form.
	line := qtLineLocator(headCart, "Business Mobile 50GB")
	check(t, line.Locator("summary").Click(), "open the reprice form")
	newR := mainR - 155
	typed := strings.TrimSpace(strings.TrimSuffix(it.Money(newR, "EUR"), "€"))
	check(t, line.GetByTestId("reprice-recurring").Fill(strings.TrimSpace(typed)), "type the monthly price "+typed)
	check(t, line.GetByTestId("reprice-submit").Click(), "save the price")
	head.items[0].unitR = newR
	check(t, suite.expect.Locator(line.GetByTestId("line-repriced")).ToBeVisible(), "the line is marked repriced")
	qtCheckTotals(t, page, m, "repricing with a decimal comma")

	// Switch to German in the header: the same quote, its carts and totals, in German.
	de := i18nTranslator(t, language.German)
	check(t, page.Locator(`[data-testid="language-menu"] summary`).Click(), "open the language menu")
	check(t, page.GetByTestId("language-de").Click(), "choose Deutsch")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL(quotePath)), "the switch comes back to the quote")
	i18nExpectLang(t, page, de, "after switching to German")
	m.money = func(cents int64) string { return de.Money(cents, "EUR") }
	qtCheckTotals(t, page, m, "switching to German")
	check(t, suite.expect.Locator(headCart.GetByTestId("cart-quantity")).ToHaveValue("3"), "the cart keeps its quantity")
}

// mustNet is the quote's monthly net total in the model.
func mustNet(m *qtModel) int64 {
	_, r := m.totals()
	return r.net
}

// A back-office clerk whose browser speaks Italian generates a contract from a quote, sends and
// removes a signature request, and archives it: the contract page, its dates, statuses and
// confirmations in Italian.
func TestI18nContractJourneyInItalian(t *testing.T) {
	it := i18nTranslator(t, language.Italian)
	page := newPageWith(t, pageOptions{locale: "it-IT"})
	docsAcceptDialogs(page)
	login(t, page, salesUser, salesPassword)
	_, quotePath := docsCreateQuote(t, page, "Contratto")
	region := docsOpenDocuments(t, page, quotePath)
	i18nExpectLang(t, page, it, "the quote's documents")

	check(t, region.Locator(`[data-testid="generate-contract"]`).Click(), "generate the contract")
	result := page.Locator(`[data-testid="generate-result"]`)
	check(t, suite.expect.Locator(result).ToContainText(regexp.MustCompile(`C-\d{4}-\d+`)), "the contract is generated")
	check(t, page.Locator(`[data-testid="contract-link"]`).Click(), "open the contract")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="contract-details"]`)).ToBeVisible(), "the contract page")
	i18nExpectLang(t, page, it, "the contract page")
	details := qtText(t, page.Locator(`[data-testid="contract-details"]`), "contract details")
	if !i18nItalianDate.MatchString(details) {
		t.Errorf("the contract's details show no Italian date (such as 25 nov 2026): %q", details)
	}

	sig := page.Locator(`[data-testid="signature-section"]`)
	check(t, sig.Locator(`[data-testid="signature-email"]`).Fill("firmatario@example.com"), "fill the e-mail")
	check(t, sig.Locator(`[data-testid="signature-signer"]`).Fill("Sergio Firmatario"), "fill the name")
	// The page previews the PDF: clicks that need a scroll wait for the frames to settle.
	clickSettled(t, page, sig.Locator(`[data-testid="signature-send"]`), "send the signature request")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="signature-active"]`)).ToContainText("firmatario@example.com"), "the request is shown")
	clickSettled(t, page, page.Locator(`[data-testid="signature-remove"]`), "remove the request (and confirm)")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="signature-form"]`)).ToBeVisible(), "the form is offered again")

	clickSettled(t, page, page.Locator(`[data-testid="archive-button"]`), "archive (and confirm)")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="archive-result"]`)).ToBeVisible(), "the contract is archived")
	i18nExpectLang(t, page, it, "after archiving")
	archived := qtText(t, page.Locator(`[data-testid="archive-result"]`), "archive result")
	if strings.Contains(archived, "archived") || strings.Contains(archived, "Archived") {
		t.Errorf("the archive result is in English: %q", archived)
	}
}

// i18nPages are the main pages checked in every language, each with what marks it loaded.
func i18nPages(w a11yWorld) []struct{ name, path, ready string } {
	return []struct{ name, path, ready string }{
		{"customer list", "/customers", `[data-testid="customer-row"]`},
		{"customer form", "/customers/new", `[data-testid="customer-form"]`},
		{"quote", w.quotePath, `[data-testid="documents-region"]`},
		{"contract", w.contractPath, `[data-testid="contract-details"]`},
		{"batch archive", "/contracts/batch-archive", `main h1`},
		{"audit", "/audits/" + w.quoteID, `[data-testid="audit-timeline"]`},
		{"customer import", "/customers/import", `[data-testid="import-form"]`},
	}
}

// i18nSameInEveryLanguage are the axe rules whose inputs a translation does not change, run on
// the English pages only (at both widths here, and in light and dark at 1280 px by
// TestA11yEveryPageAndStateLightAndDark). colour-contrast compares each text's colour with the
// background behind it and its size with the large-text threshold: the colours and sizes are the
// style sheet's, the same in every language. What this leaves unchecked in the other languages:
// a translation long enough to leave its box onto another background without making the page
// scroll sideways (the layout check below catches what sticks out of the page). It is about a third of axe's own time on these pages (2026-11-29, in the
// page, the eight pages in German at 390 and 1280 px: 8.1 s with every rule, 5.2 s without it).
// Every other rule runs in every language: names and labels (a missing or empty translation),
// lang attributes, headings and table headers with text, target sizes and scrollable regions
// (their sizes follow the text's length).
var i18nSameInEveryLanguage = []string{"color-contrast"}

// Every main page in every language, on a phone (390 px) and a laptop (1280 px): no serious axe
// violation, no sideways scrolling (long German labels must wrap), the page in that language.
// axe's rules that a translation cannot change run in English only (i18nSameInEveryLanguage).
func TestI18nEveryLanguageAxeAndLayout(t *testing.T) {
	src := axeSource(t)
	page := newPageWith(t, pageOptions{width: 1280, height: 800})
	// The back office: the pages include its tools (batch archive, import), which reps are not offered.
	login(t, page, backofficeUser, backofficePass)
	w := buildA11yWorld(t, page)
	importUpload(t, page, "clienti.csv", "text/csv",
		[]byte("Name;Tax id;Segment;City\nLingue S.r.l.;IT12312312312;Business;Roma\nLingue Bad;12;Business;Roma\n"))
	pages := append(i18nPages(w), struct{ name, path, ready string }{"customer import dry run",
		strings.TrimPrefix(page.URL(), suite.portalURL), `[data-testid="import-summary"]`})
	for _, lang := range i18n.Languages {
		tr := i18nTranslator(t, lang)
		check(t, page.Context().AddCookies([]playwright.OptionalCookie{{
			Name: i18n.CookieName, Value: lang.String(), URL: playwright.String(suite.portalURL),
		}}), "choose "+lang.String())
		for _, width := range []int{390, 1280} {
			check(t, page.SetViewportSize(width, 800), fmt.Sprintf("a %d px window", width))
			for _, p := range pages {
				what := fmt.Sprintf("%s in %s at %d px", p.name, lang, width)
				visit(t, page, p.path, p.ready)
				i18nExpectLang(t, page, tr, what)
				if lang == i18n.Languages[0] {
					checkAxe(t, page, src, what)
				} else {
					checkAxeWithout(t, page, src, what, i18nSameInEveryLanguage...)
				}
				problem, err := page.Evaluate(overflowJS)
				check(t, err, "measure "+what)
				if problem != "" {
					t.Errorf("%s scrolls sideways: %v", what, problem)
				}
			}
		}
	}
}
