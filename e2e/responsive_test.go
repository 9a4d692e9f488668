package e2e

import (
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Tablet and print: sales staff at a customer's desk use a tablet (768x1024), and quotes and
// contracts get printed.

// tabletPages are the main pages, each with what marks it loaded.
func tabletPages(w a11yWorld) []struct{ path, ready string } {
	return []struct{ path, ready string }{
		{"/customers", `[data-testid="customer-row"]`},
		{w.customerPath(), `[data-testid="customer-name"]`},
		{"/customers/new", `[data-testid="customer-form"]`},
		{"/quotes/new", `[data-testid="quote-customer-option"]`},
		{w.quotePath, `[data-testid="documents-region"]`},
		{"/contracts", `[data-testid="contract-search"]`},
		{w.contractPath, `[data-testid="contract-details"]`},
		{w.contractPath + "/evidence", `[data-testid="page-title"]`},
		{"/audits", `[data-testid="audit-search"]`},
		{"/audits/" + w.quoteID, `[data-testid="audit-timeline"]`},
		{"/palette?q=new", `[data-testid="palette-page-result"]`},
	}
}

// overflowJS answers "" when the page does not scroll sideways, else the widths and the elements
// that stick out on the right (the outermost ones), to say what to fix.
const overflowJS = `() => {
	const doc = document.documentElement;
	if (doc.scrollWidth <= window.innerWidth) return "";
	const out = [];
	for (const el of document.querySelectorAll("body *")) {
		const r = el.getBoundingClientRect();
		if (r.right > window.innerWidth + 1 && !(el.parentElement && el.parentElement.getBoundingClientRect().right > window.innerWidth + 1)) {
			out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") + " (right " + Math.round(r.right) + ")");
		}
		if (out.length >= 8) break;
	}
	return "scrollWidth " + doc.scrollWidth + " > innerWidth " + window.innerWidth + "; sticking out: " + out.join(", ");
}`

// On a tablet (768x1024, portrait) no main page scrolls sideways, with the quote's discounts
// panel open too, and the tablet layout (tables as cards) passes axe as well.
func TestResponsiveTabletHasNoHorizontalScrolling(t *testing.T) {
	src := axeSource(t)
	page := newPageWith(t, pageOptions{width: 768, height: 1024})
	login(t, page, salesUser, salesPassword)
	w := buildA11yWorld(t, page)
	for _, p := range tabletPages(w) {
		visit(t, page, p.path, p.ready)
		checkNoSidewaysScroll(t, page, p.path)
		checkAxe(t, page, src, p.path+" at 768 px")
	}
	visit(t, page, "/customers", `[data-testid="customer-row"]`)
	check(t, suite.expect.Locator(page.Locator(`.table-wrap:has([data-testid="customer-table"])`)).ToHaveClass(regexp.MustCompile(`\bis-collapsed\b`)),
		"the customer table, too wide for a tablet, is shown as cards")
	visit(t, page, w.quotePath, `[data-testid="cart"]`)
	check(t, page.Locator(`[data-testid="quote-discounts-open"]`).Click(), "open the discounts")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="discount-option"]`).First()).ToBeVisible(), "the discounts panel")
	checkNoSidewaysScroll(t, page, w.quotePath+" with the discounts panel")
	openPaletteWithKeys(t, page)
	typeInPalette(t, page, "new")
	checkNoSidewaysScroll(t, page, "the palette")
}

func checkNoSidewaysScroll(t *testing.T, page playwright.Page, what string) {
	t.Helper()
	problem, err := page.Evaluate(overflowJS)
	check(t, err, "measure "+what)
	if problem != "" {
		t.Errorf("%s scrolls sideways at 768 px: %v", what, problem)
	}
}

// Printing a quote or a contract shows the content and the totals, without navigation, buttons
// or forms.
func TestResponsivePrintShowsQuoteAndContractWithoutControls(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	w := buildA11yWorld(t, page)
	check(t, page.EmulateMedia(playwright.PageEmulateMediaOptions{Media: playwright.MediaPrint}), "print media")

	visit(t, page, w.quotePath, `[data-testid="quote-summary"]`)
	for _, hidden := range []string{"header.site-header", `[data-testid="main-nav"]`, `[data-testid="cart-remove"]`,
		`[data-testid="cart-quantity-submit"]`, `[data-testid="quote-discounts-open"]`, `[data-testid="upload-form"]`, "#palette-trigger"} {
		check(t, suite.expect.Locator(page.Locator(hidden).First()).ToBeHidden(), "printing the quote hides "+hidden)
	}
	for _, shown := range []string{`[data-testid="quote-total"]`, `[data-testid="cart-total"]`, `[data-testid="line-name"]`} {
		check(t, suite.expect.Locator(page.Locator(shown).First()).ToBeVisible(), "printing the quote shows "+shown)
	}

	visit(t, page, w.contractPath, `[data-testid="contract-details"]`)
	for _, hidden := range []string{"header.site-header", `[data-testid="signature-form"]`, `[data-testid="archive-button"]`} {
		check(t, suite.expect.Locator(page.Locator(hidden).First()).ToBeHidden(), "printing the contract hides "+hidden)
	}
	check(t, suite.expect.Locator(page.Locator(`[data-testid="contract-details"]`)).ToContainText(w.contractNum), "printing the contract shows its details")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="contract-details"]`)).ToContainText("total (net)"), "printing the contract shows its totals")
}
