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

// TestScreenshots takes a 1280x800 screenshot of each main page. With SCREENSHOTS=1 (make
// screenshots) they are written to docs/screenshots/<page>.png for the README; otherwise to a
// temporary directory. Either way each must be a PNG of exactly 1280x800 showing its page.
func TestScreenshots(t *testing.T) {
	const width, height = 1280, 800
	dir := t.TempDir()
	if os.Getenv("SCREENSHOTS") == "1" {
		root, err := repoRoot()
		check(t, err, "find the repository root")
		dir = filepath.Join(root, "docs", "screenshots")
		check(t, os.MkdirAll(dir, 0o755), "create docs/screenshots")
	}
	page := newPageWith(t, pageOptions{width: width, height: height})
	login(t, page, salesUser, salesPassword)
	w := buildA11yWorld(t, page)

	shots := []struct {
		name, path, ready string
		prepare           func()
	}{
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
		file := filepath.Join(dir, s.name+".png")
		data, err := page.Screenshot(playwright.PageScreenshotOptions{
			Path:       playwright.String(file),
			Animations: playwright.ScreenshotAnimationsDisabled,
			Caret:      playwright.ScreenshotCaretHide,
		})
		check(t, err, "screenshot of "+s.name)
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		if err != nil || cfg.Width != width || cfg.Height != height {
			t.Errorf("%s: not a %dx%d PNG (%v, %dx%d)", s.name, width, height, err, cfg.Width, cfg.Height)
		}
		if info, err := os.Stat(file); err != nil || info.Size() != int64(len(data)) {
			t.Errorf("%s was not written to %s: %v", s.name, file, err)
		}
	}
	// The quote page in each language (docs/i18n.md): quote-it.png, quote-fr.png, ...
	for _, lang := range i18n.Languages[1:] {
		check(t, page.Context().AddCookies([]playwright.OptionalCookie{{
			Name: i18n.CookieName, Value: lang.String(), URL: playwright.String(suite.portalURL),
		}}), "choose "+lang.String())
		visit(t, page, w.quotePath, `[data-testid="cart"]`)
		check(t, suite.expect.Locator(page.Locator("html")).ToHaveAttribute("lang", lang.String()), "the quote in "+lang.String())
		name := "quote-" + lang.String()
		file := filepath.Join(dir, name+".png")
		data, err := page.Screenshot(playwright.PageScreenshotOptions{
			Path:       playwright.String(file),
			Animations: playwright.ScreenshotAnimationsDisabled,
			Caret:      playwright.ScreenshotCaretHide,
		})
		check(t, err, "screenshot of "+name)
		if cfg, err := png.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width != width || cfg.Height != height {
			t.Errorf("%s: not a %dx%d PNG (%v)", name, width, height, err)
		}
	}
	t.Logf("%d screenshots in %s", len(shots)+len(i18n.Languages)-1, dir)
}
