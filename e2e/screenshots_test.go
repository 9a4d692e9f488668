package e2e

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/i18n"
)

// TestScreenshots takes a 1280x800 screenshot of each main page, and 390x844 ones of a phone in
// Italian (phone-*.png), written to docs/screenshots/<page>.png for the README; each must be a PNG
// of exactly its size showing its page. It runs with SCREENSHOTS=1 (make screenshots) only: every
// state it waits for is asserted by another browser test of make test (the pages and the palette
// by TestA11yEveryPageAndStateLightAndDark, the add-ons by TestQuoteJourney, the home page by the
// pipeline tests, the quote in each language by TestI18nEveryLanguageAxeAndLayout, the phone in
// Italian by TestPhoneItalianTargetsAndMenus and TestPipelineFollowUpHomeOnAPhoneInItalian), so in
// make test it would only check the capture, for 50 s.
func TestScreenshots(t *testing.T) {
	const width, height = 1280, 800
	dir := screenshotsDir(t)
	page := newPageWith(t, pageOptions{width: width, height: height})
	login(t, page, salesUser, salesPassword)
	w := buildA11yWorld(t, page)

	shots := []struct {
		name, path, ready string
		prepare           func()
	}{
		{"home", "/", `[data-testid="home-pipeline-svg"]`, nil},
		{"customers", "/customers", `[data-testid="customer-row"]`, nil},
		{"customer", w.customerPath(), `[data-testid="customer-name"]`, nil},
		{"customer-form-errors", "/customers/new", `[data-testid="customer-form"]`, func() {
			check(t, page.Locator(`[data-testid="customer-form"] [name="name"]`).Fill("Rossi Impianti S.r.l."), "fill the name")
			check(t, page.Locator(`[data-testid="customer-form"] [name="taxId"]`).Fill("IT123"), "fill a bad tax id")
			check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "submit")
			check(t, suite.expect.Locator(page.Locator(`[data-testid="error-summary"]`)).ToBeFocused(), "the error summary")
		}},
		{"quote-start", "/quotes/new", `[data-testid="quote-customer-option"]`, nil},
		{"quote", w.quotePath, `[data-testid="cart"]`, nil},
		{"quote-discounts", w.quotePath, `[data-testid="cart"]`, func() {
			check(t, page.Locator(`[data-testid="quote-discounts-open"]`).Click(), "open the discounts")
			check(t, suite.expect.Locator(page.Locator(`[data-testid="discount-option"]`).First()).ToBeVisible(), "the discounts")
		}},
		{"quote-addons", w.quotePath, `[data-testid="cart"]`, func() {
			check(t, page.GetByTestId("line-add-addon").First().Click(), "open the add-ons of the first line")
			check(t, suite.expect.Locator(page.GetByTestId("addon-panel")).ToBeVisible(), "the add-on chooser")
		}},
		{"contract", w.contractPath, `[data-testid="contract-details"]`, nil},
		{"evidence", w.contractPath + "/evidence", `[data-testid="page-title"]`, nil},
		{"audit", "/audits/" + w.quoteID, `[data-testid="audit-timeline"]`, nil},
		{"palette", "/customers", `[data-testid="customer-row"]`, func() {
			openPaletteWithKeys(t, page)
			typeInPalette(t, page, "ro")
			check(t, page.Keyboard().Press("ArrowDown"), "choose the second result")
		}},
	}
	for _, s := range shots {
		visit(t, page, s.path, s.ready)
		if s.prepare != nil {
			s.prepare()
		}
		writeScreenshot(t, page, dir, s.name, width, height)
	}
	// The quote page in each language (docs/i18n.md): quote-it.png, quote-fr.png, ...
	for _, lang := range i18n.Languages[1:] {
		check(t, page.Context().AddCookies([]playwright.OptionalCookie{{
			Name: i18n.CookieName, Value: lang.String(), URL: playwright.String(suite.portalURL),
		}}), "choose "+lang.String())
		visit(t, page, w.quotePath, `[data-testid="cart"]`)
		check(t, suite.expect.Locator(page.Locator("html")).ToHaveAttribute("lang", lang.String()), "the quote in "+lang.String())
		writeScreenshot(t, page, dir, "quote-"+lang.String(), width, height)
	}
	// A phone in Italian (390x844, touch; issue 26): phone-<page>.png.
	const phoneW, phoneH = 390, 844
	phone := newPageWith(t, pageOptions{width: phoneW, height: phoneH, locale: "it-IT", touch: true})
	check(t, phone.Context().AddCookies([]playwright.OptionalCookie{{
		Name: i18n.CookieName, Value: "it", URL: playwright.String(suite.portalURL),
	}}), "choose Italian on the phone")
	login(t, phone, salesUser, salesPassword)
	phoneShots := []struct {
		name, path, ready string
		prepare           func()
	}{
		{"phone-home", "/", `[data-testid="home-pipeline-svg"]`, nil},
		{"phone-customers", "/customers", `[data-testid="customer-row"]`, nil},
		{"phone-language-menu", "/customers", `[data-testid="customer-row"]`, func() {
			check(t, phone.Locator(`[data-testid="language-menu"] summary`).Click(), "open the language menu")
			check(t, suite.expect.Locator(phone.GetByTestId("language-de")).ToBeVisible(), "the languages")
		}},
		{"phone-customer", w.customerPath(), `[data-testid="customer-name"]`, nil},
		{"phone-quote", w.quotePath, `[data-testid="cart"]`, nil},
		{"phone-quote-cart", w.quotePath, `[data-testid="cart"]`, func() {
			check(t, phone.GetByTestId("cart").First().GetByTestId("cart-quantity").ScrollIntoViewIfNeeded(), "scroll to a cart")
		}},
		{"phone-contract", w.contractPath, `[data-testid="contract-details"]`, nil},
	}
	for _, s := range phoneShots {
		visit(t, phone, s.path, s.ready)
		if s.prepare != nil {
			s.prepare()
		}
		writeScreenshot(t, phone, dir, s.name, phoneW, phoneH)
	}
	t.Logf("%d screenshots in %s", len(shots)+len(i18n.Languages)-1+len(phoneShots), dir)
}

// screenshotsDir is docs/screenshots with SCREENSHOTS=1 (make screenshots); without it the test
// skips (the states the screenshots show are asserted by other tests, named at each).
func screenshotsDir(t *testing.T) string {
	t.Helper()
	if os.Getenv("SCREENSHOTS") != "1" {
		t.Skip("writes the README's screenshots: make screenshots (SCREENSHOTS=1)")
	}
	root, err := repoRoot()
	check(t, err, "find the repository root")
	dir := filepath.Join(root, "docs", "screenshots")
	check(t, os.MkdirAll(dir, 0o755), "create docs/screenshots")
	return dir
}

// writeScreenshot writes the page as dir/name.png and fails unless it is a PNG of exactly
// width x height, written whole.
func writeScreenshot(t *testing.T, page playwright.Page, dir, name string, width, height int) {
	t.Helper()
	file := filepath.Join(dir, name+".png")
	data, err := page.Screenshot(playwright.PageScreenshotOptions{
		Path:       playwright.String(file),
		Animations: playwright.ScreenshotAnimationsDisabled,
		Caret:      playwright.ScreenshotCaretHide,
	})
	check(t, err, "screenshot of "+name)
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != width || cfg.Height != height {
		t.Errorf("%s: not a %dx%d PNG (%v, %dx%d)", name, width, height, err, cfg.Width, cfg.Height)
	}
	if info, err := os.Stat(file); err != nil || info.Size() != int64(len(data)) {
		t.Errorf("%s was not written to %s: %v", name, file, err)
	}
}
