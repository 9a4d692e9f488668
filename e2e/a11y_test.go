package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Accessibility, keyboard and responsive checks in the browser (issue "Speed of use and
// accessibility", docs/accessibility.md):
//   - TestA11y*: axe-core on every page and main state, in light and dark mode; a journey made
//     with the keyboard alone; the draft of the customer form surviving a new sign-in.
//   - TestPalette* (palette_test.go): the command palette.
//   - TestResponsive*: no horizontal scrolling on a tablet; the print stylesheet.
//   - TestScreenshots (screenshots_test.go): the README's screenshots.
//
// axe-core comes from npm (scripts/ensure-deps.sh puts axe.min.js into .cache/axe). The portal's
// CSP (script-src 'self') blocks inline scripts, so the source is not added as a <script> tag: it
// is evaluated through the DevTools protocol (page.Evaluate), which the CSP does not govern.

// axeDirSubdir is where make deps puts axe-core.
const axeDirSubdir = ".cache/axe"

// pageOptions are the browser context settings of a test page.
type pageOptions struct {
	dark          bool
	width, height int    // viewport; Playwright's 1280x720 when 0
	locale        string // the browser's language (Accept-Language); en-GB when empty
	touch         bool   // a phone: touch screen and mobile viewport (pointer: coarse)
	base          string // the portal (one a test started itself); the suite's when empty
}

// newPageWith opens a page like newPage (own context, artifacts on failure, browser complaints
// logged) with a colour scheme and viewport.
func newPageWith(t *testing.T, o pageOptions) playwright.Page {
	t.Helper()
	locale := o.locale
	if locale == "" {
		locale = "en-GB"
	}
	base := o.base
	if base == "" {
		base = suite.portalURL
	}
	opts := playwright.BrowserNewContextOptions{
		BaseURL: playwright.String(base),
		Locale:  playwright.String(locale),
	}
	if o.dark {
		opts.ColorScheme = playwright.ColorSchemeDark
	}
	if o.touch {
		opts.HasTouch = playwright.Bool(true)
		opts.IsMobile = playwright.Bool(true)
	}
	if o.width > 0 {
		opts.Viewport = &playwright.Size{Width: o.width, Height: o.height}
	}
	browserContext, err := suite.browser.NewContext(opts)
	if err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	page, err := browserContext.NewPage()
	if err != nil {
		_ = browserContext.Close()
		t.Fatalf("new page: %v", err)
	}
	var mu sync.Mutex
	var console []string
	page.OnConsole(func(m playwright.ConsoleMessage) {
		if m.Type() == "error" || m.Type() == "warning" {
			mu.Lock()
			console = append(console, m.Type()+": "+m.Text())
			mu.Unlock()
		}
	})
	page.OnPageError(func(err error) {
		mu.Lock()
		console = append(console, "page error: "+err.Error())
		mu.Unlock()
	})
	t.Cleanup(func() {
		if t.Failed() {
			saveArtifacts(t, page)
			mu.Lock()
			for _, line := range console {
				t.Logf("browser: %s", line)
			}
			mu.Unlock()
		}
		_ = browserContext.Close()
	})
	return page
}

// axeSource reads axe.min.js installed by scripts/ensure-deps.sh.
func axeSource(t *testing.T) string {
	t.Helper()
	root, err := repoRoot()
	check(t, err, "find the repository root")
	src, err := os.ReadFile(filepath.Join(root, axeDirSubdir, "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core is not installed (%v): run `make deps` (scripts/ensure-deps.sh)", err)
	}
	return string(src)
}

// axeViolation is one rule axe found broken, with the elements that break it.
type axeViolation struct {
	ID      string `json:"id"`
	Impact  string `json:"impact"`
	Help    string `json:"help"`
	HelpURL string `json:"helpUrl"`
	Nodes   []struct {
		Target         []any  `json:"target"`
		FailureSummary string `json:"failureSummary"`
	} `json:"nodes"`
}

// checkAxe runs axe-core on the page as it is now and fails the test on any serious or critical
// violation, listing each rule with its id, help URL and the elements concerned. Moderate and
// minor findings are logged.
func checkAxe(t *testing.T, page playwright.Page, src, state string) {
	t.Helper()
	checkAxeWithout(t, page, src, state)
}

// checkAxeWithout is checkAxe with the rules named left out (axe's rule ids).
func checkAxeWithout(t *testing.T, page playwright.Page, src, state string, left ...string) {
	t.Helper()
	rules := map[string]any{}
	for _, id := range left {
		rules[id] = map[string]any{"enabled": false}
	}
	loaded, err := page.Evaluate(`() => typeof window.axe === "object"`)
	check(t, err, "look for axe in "+state)
	if loaded != true {
		_, err := page.Evaluate(src)
		check(t, err, "load axe-core into "+state)
	}
	// The WCAG 2.0-2.2 A and AA rules and axe's best practices; wcag22aa turns on target-size (2.5.8),
	// which axe leaves off by default (issue 26).
	raw, err := page.Evaluate(`async (rules) => JSON.stringify((await axe.run(document, {resultTypes: ["violations"],
		runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}, rules})).violations)`, rules)
	check(t, err, "run axe on "+state)
	var violations []axeViolation
	if err := json.Unmarshal([]byte(raw.(string)), &violations); err != nil {
		t.Fatalf("axe on %s: %v", state, err)
	}
	var serious []string
	for _, v := range violations {
		var targets []string
		for _, n := range v.Nodes {
			targets = append(targets, fmt.Sprint(n.Target...)+" ("+strings.ReplaceAll(n.FailureSummary, "\n", " ")+")")
		}
		line := fmt.Sprintf("%s [%s] %s <%s>\n      %s", v.ID, v.Impact, v.Help, v.HelpURL, strings.Join(targets, "\n      "))
		if v.Impact == "serious" || v.Impact == "critical" {
			serious = append(serious, line)
		} else {
			t.Logf("axe on %s (not failing, %s): %s", state, v.Impact, line)
		}
	}
	if len(serious) > 0 {
		t.Errorf("axe found %d serious or critical violations on %s (%s):\n  %s", len(serious), state, page.URL(), strings.Join(serious, "\n  "))
	}
}

// a11yWorld is the data the checks visit: a customer of the test's own, a quote of theirs with
// two carts, and its contract.
type a11yWorld struct {
	customer     testCustomer
	quotePath    string // /quotes/{cpq}/{customer}/{quoteId}
	quoteID      string
	contractPath string // /contracts/{id}
	contractNum  string
}

// customerPath is the customer's page.
func (w a11yWorld) customerPath() string { return "/customers/" + strconv.Itoa(w.customer.ID) }

// buildA11yWorld makes a customer, a quote with two carts for them, and the quote's contract,
// through the portal's own endpoints with the page's cookies (the journeys the other browser
// tests make by hand).
func buildA11yWorld(t *testing.T, page playwright.Page) a11yWorld {
	t.Helper()
	req := page.Request()
	w := a11yWorld{customer: createTestCustomer(t, page, "Accessible")}
	var tofs []string
	w.quotePath, w.quoteID, tofs = createTestQuote(t, page, w.customer, "Head office")

	second, err := req.Post(portalURL(w.quotePath+"/carts"), playwright.APIRequestContextPostOptions{
		Form: map[string]any{"tofId": tofs[len(tofs)-1]}, Headers: map[string]string{"HX-Request": "true"},
	})
	check(t, err, "add a second cart")
	if second.Status() != 200 {
		text, _ := second.Text()
		t.Fatalf("adding a second cart answered %d: %.500s", second.Status(), text)
	}

	contract, err := generateContract(t, req, portalURL(w.quotePath))
	check(t, err, "generate the contract")
	w.contractPath = strings.TrimPrefix(contract.URL(), suite.portalURL)
	contractHTML, _ := contract.Text()
	w.contractNum = regexp.MustCompile(`C-\d{4}-\d+`).FindString(contractHTML)
	if contract.Status() != 200 || !regexp.MustCompile(`^/contracts/\d+$`).MatchString(w.contractPath) || w.contractNum == "" {
		t.Fatalf("generating the contract ended at %s with %d", contract.URL(), contract.Status())
	}
	return w
}

// visit opens path and waits until what marks the page's main state is visible.
func visit(t *testing.T, page playwright.Page, path, ready string) {
	t.Helper()
	_, err := page.Goto(path)
	check(t, err, "open "+path)
	check(t, suite.expect.Locator(page.Locator(ready).First()).ToBeVisible(), path+" shows "+ready)
}

// Every page and main state, in light and in dark mode, has no serious or critical axe violation.
func TestA11yEveryPageAndStateLightAndDark(t *testing.T) {
	src := axeSource(t)
	for _, scheme := range []struct {
		name string
		dark bool
	}{{"light", false}, {"dark", true}} {
		t.Run(scheme.name, func(t *testing.T) {
			page := newPageWith(t, pageOptions{dark: scheme.dark})
			// The world's quote has a contract: each change of it asks first (issue 25); yes.
			page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
			// The back office: the pages include its tools (batch archive, import), which reps are not offered.
			login(t, page, backofficeUser, backofficePass)
			w := buildA11yWorld(t, page)
			state := func(name string) string { return name + " (" + scheme.name + ")" }

			visit(t, page, "/customers", `[data-testid="customer-row"]`)
			checkAxe(t, page, src, state("customer list"))

			check(t, page.Locator(`[data-testid="customer-link"]`).First().Click(), "open the first customer")
			check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToBeVisible(), "the customer's page")
			checkAxe(t, page, src, state("customer detail"))

			visit(t, page, "/customers/new", `[data-testid="customer-form"]`)
			check(t, page.Locator(`[data-testid="customer-form"] [name="name"]`).Fill("Axe Check S.r.l."), "fill the name")
			check(t, page.Locator(`[data-testid="customer-form"] [name="taxId"]`).Fill("12"), "fill a bad tax id")
			check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "submit")
			check(t, suite.expect.Locator(page.Locator(`[data-testid="error-summary"]`)).ToBeVisible(), "the error summary")
			checkAxe(t, page, src, state("customer form with errors"))

			visit(t, page, "/customers/import", `[data-testid="import-form"]`)
			checkAxe(t, page, src, state("customer import form"))
			check(t, page.GetByTestId("import-file").SetInputFiles([]playwright.InputFile{{Name: "bad.csv", MimeType: "text/csv", Buffer: []byte("a;b\n1;2\n")}}), "choose a file without headings")
			check(t, page.GetByTestId("import-check").Click(), "check it")
			check(t, suite.expect.Locator(page.GetByTestId("import-file-error")).ToBeVisible(), "the file's problem")
			checkAxe(t, page, src, state("customer import refused"))
			check(t, page.GetByTestId("import-file").SetInputFiles([]playwright.InputFile{{Name: "axe.csv", MimeType: "text/csv",
				Buffer: []byte("Name;Tax id;Segment;City\nAxe Import S.r.l.;IT98765432109;Business;Roma\nAxe Bad;12;Business;Roma\n")}}), "choose a file")
			check(t, page.GetByTestId("import-check").Click(), "check it")
			check(t, suite.expect.Locator(page.GetByTestId("import-mapping-confirm")).ToBeVisible(), "the mapping step")
			checkAxe(t, page, src, state("customer import mapping"))
			check(t, page.GetByTestId("import-mapping-confirm").Click(), "confirm the mapping")
			check(t, suite.expect.Locator(page.GetByTestId("import-count-invalid")).ToHaveText("1"), "the dry run")
			checkAxe(t, page, src, state("customer import dry run"))

			visit(t, page, "/quotes/new", `[data-testid="quote-customer-option"]`)
			checkAxe(t, page, src, state("quote start"))

			visit(t, page, w.quotePath, `[data-testid="documents-region"]`)
			check(t, suite.expect.Locator(page.Locator(`[data-testid="cart"]`)).ToHaveCount(2), "the quote has two carts")
			checkAxe(t, page, src, state("quote with carts"))

			quantity := page.Locator(`[data-testid="cart-quantity"]`).First()
			check(t, quantity.Fill("2"), "change the quantity")
			check(t, quantity.Press("Enter"), "submit the quantity")
			check(t, suite.expect.Locator(page.Locator(`[data-testid="cart-quantity-was"]`).First()).ToBeVisible(), "the change is highlighted")
			checkAxe(t, page, src, state("quote with a change highlighted"))

			check(t, page.Locator(`[data-testid="quote-discounts-open"]`).Click(), "open the discounts")
			check(t, suite.expect.Locator(page.Locator(`[data-testid="discount-option"]`).First()).ToBeVisible(), "the discounts panel")
			checkAxe(t, page, src, state("discounts panel"))

			visit(t, page, w.contractPath, `[data-testid="contract-details"]`)
			checkAxe(t, page, src, state("contract page"))

			visit(t, page, w.contractPath+"/evidence", `[data-testid="page-title"]`)
			checkAxe(t, page, src, state("contract evidence page"))

			visit(t, page, "/audits/"+w.quoteID, `[data-testid="audit-timeline"]`)
			checkAxe(t, page, src, state("audit page"))

			visit(t, page, "/contracts", `[data-testid="contract-search"]`)
			checkAxe(t, page, src, state("contract search"))
			visit(t, page, "/audits", `[data-testid="audit-search"]`)
			checkAxe(t, page, src, state("audit search"))

			visit(t, page, "/contracts/batch-archive", `[data-testid="batch-form"]`)
			checkAxe(t, page, src, state("batch archive form"))
			check(t, page.GetByTestId("batch-numbers").Fill(w.contractNum+"\nnot/a/number"), "paste numbers")
			// The contract was never sent for signature: left out unless included explicitly.
			check(t, page.GetByTestId("batch-include-unsent-box").Check(), "include contracts never sent for signature")
			check(t, page.GetByTestId("batch-check").Click(), "check the list")
			check(t, suite.expect.Locator(page.GetByTestId("batch-preview")).ToBeVisible(), "the batch preview")
			checkAxe(t, page, src, state("batch archive preview"))
			check(t, page.GetByTestId("batch-start").Click(), "start the batch")
			check(t, suite.expect.Locator(page.GetByTestId("batch-status")).ToHaveText("Finished"), "the batch finished")
			checkAxe(t, page, src, state("batch archive result"))

			visit(t, page, "/audits/worklist?quotes="+w.quoteID, `[data-testid="worklist-table"]`)
			checkAxe(t, page, src, state("audit worklist"))
			visit(t, page, "/audits/worklist?changed=1&from="+time.Now().UTC().Format("2006-01-02"), `[data-testid="worklist-changed-note"]`)
			checkAxe(t, page, src, state("audit worklist of the quotes changed today"))
			visit(t, page, "/work/contracts", `[data-testid="work-archive-matching"]`)
			checkAxe(t, page, src, state("contracts list with select all"))

			openPaletteWithKeys(t, page)
			typeInPalette(t, page, "new")
			check(t, page.Keyboard().Press("ArrowDown"), "move to the next result")
			checkAxe(t, page, src, state("palette open"))

			visit(t, page, "/palette?q=new", `[data-testid="palette-page-result"]`)
			checkAxe(t, page, src, state("palette page"))
		})
	}
}

// openPaletteWithKeys presses Ctrl+K and waits for the palette's input to have the focus.
func openPaletteWithKeys(t *testing.T, page playwright.Page) {
	t.Helper()
	// app.js marks the dialog once its keyboard handling is set up (the page may still be loading).
	check(t, suite.expect.Locator(page.Locator(`#palette[data-palette-ready="1"]`)).ToBeAttached(), "the palette is ready")
	check(t, page.Keyboard().Press("Control+k"), "press Ctrl+K")
	check(t, suite.expect.Locator(page.Locator("#palette")).ToBeVisible(), "Ctrl+K opens the palette")
	check(t, suite.expect.Locator(page.Locator("#palette-input")).ToBeFocused(), "the palette's input has the focus")
}

// typeInPalette types text into the open palette and waits for the results of exactly that text.
func typeInPalette(t *testing.T, page playwright.Page, text string) {
	t.Helper()
	check(t, page.Keyboard().Type(text), "type "+text+" in the palette")
	found := page.Locator(`#palette [data-palette-found]`)
	check(t, suite.expect.Locator(found).ToHaveAttribute("data-query", text), "the palette shows the results of "+text)
}

// focusProblem says what is wrong with the focused element: nothing focused, or no visible
// focus indicator (outline or box shadow). "" when all is well.
const focusProblemJS = `() => {
	const el = document.activeElement;
	if (!el || el === document.body) return "nothing has the focus";
	const s = getComputedStyle(el);
	const outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0;
	if (!outline && s.boxShadow === "none") return "no visible focus on " + el.outerHTML.slice(0, 160);
	return "";
}`

func checkVisibleFocus(t *testing.T, page playwright.Page, what string) {
	t.Helper()
	problem, err := page.Evaluate(focusProblemJS)
	check(t, err, "inspect the focus")
	if problem != "" {
		t.Errorf("%s: %v", what, problem)
	}
}

// tabUntil presses Tab until the focused element matches selector, checking that every element
// on the way shows its focus. It gives up after max presses.
func tabUntil(t *testing.T, page playwright.Page, selector string, max int) {
	t.Helper()
	pressUntil(t, page, "Tab", selector, max)
}

// pressUntil presses key (Tab, Shift+Tab) until the focus is on selector, at most max times, with
// the focus visible at each step.
func pressUntil(t *testing.T, page playwright.Page, key, selector string, max int) {
	t.Helper()
	for i := 0; i < max; i++ {
		check(t, page.Keyboard().Press(key), "press "+key)
		checkVisibleFocus(t, page, fmt.Sprintf("%s %d towards %s", key, i+1, selector))
		hit, err := page.Evaluate(`sel => document.activeElement && document.activeElement.matches(sel)`, selector)
		check(t, err, "inspect the focus")
		if hit == true {
			return
		}
	}
	t.Fatalf("%d presses of %s never reached %s", max, key, selector)
}

// The journeys of the browser tests, made with the keyboard alone: skip link, search, open a
// customer, the palette, a customer form with an error fixed through the error summary, and a
// quote's quantity; focus is always visible and lands where the user expects after each update.
func TestA11yKeyboardOnlyJourney(t *testing.T) {
	page := newPage(t)
	// The world's quote has a contract: each change of it asks first (issue 25); yes.
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	login(t, page, salesUser, salesPassword)
	w := buildA11yWorld(t, page)

	// A page without a field of its own to focus: after the load the focus is on its main heading
	// (issue 33); back from there, the header and the skip link, which leads to the main content.
	visit(t, page, w.customerPath(), `[data-testid="customer-name"]`)
	check(t, suite.expect.Locator(page.Locator("main h1")).ToBeFocused(), "the main heading has the focus after the load")
	pressUntil(t, page, "Shift+Tab", `[data-testid="skip-link"]`, 40)
	checkVisibleFocus(t, page, "skip link")
	check(t, page.Keyboard().Press("Enter"), "follow the skip link")
	check(t, suite.expect.Locator(page.Locator("main#main")).ToBeFocused(), "the skip link moves the focus to the main content")

	// The list (its search has the focus); "/" focuses the search again after moving away;
	// typing narrows the list; Tab reaches the first customer.
	visit(t, page, "/customers", `[data-testid="customer-row"]`)
	// Sorting by a column header with Enter: the list is replaced, the focus stays on the header.
	tabUntil(t, page, `[data-testid="sort-name"]`, 20)
	check(t, page.Keyboard().Press("Enter"), "sort by name")
	check(t, suite.expect.Locator(page.Locator(`th:has([data-testid="sort-name"])`)).ToHaveAttribute("aria-sort", "descending"), "the list is sorted by name, descending")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="sort-name"]`)).ToBeFocused(), "the focus stays on the column header after the update")
	checkVisibleFocus(t, page, "the sort link after the update")
	check(t, page.Keyboard().Press("Enter"), "sort by name again")
	check(t, suite.expect.Locator(page.Locator(`th:has([data-testid="sort-name"])`)).ToHaveAttribute("aria-sort", "ascending"), "ascending again")
	check(t, page.Locator("main#main").Focus(), "move the focus away from the search")
	name, err := page.Locator(`[data-testid="customer-link"]`).First().TextContent()
	check(t, err, "read the first customer's name")
	check(t, page.Keyboard().Press("/"), "press /")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-q"]`)).ToBeFocused(), "/ focuses the search")
	check(t, page.Keyboard().Type(strings.TrimSpace(name)), "type the name")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-link"]`).First()).ToHaveText(strings.TrimSpace(name)), "the list narrows")
	tabUntil(t, page, `[data-testid="customer-link"]`, 25)
	check(t, page.Keyboard().Press("Enter"), "open the customer")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToHaveText(strings.TrimSpace(name)), "the customer's page opens")

	// The palette to a page, then a new customer with a mistake fixed from the error summary.
	openPaletteWithKeys(t, page)
	check(t, page.Keyboard().Type("new customer"), "type in the palette")
	check(t, suite.expect.Locator(page.Locator(`#palette [role="option"][aria-selected="true"]`)).ToContainText("New customer"), "the first result is chosen")
	check(t, page.Keyboard().Press("Enter"), "open it")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL("/customers/new")), "Enter opens the new customer form")

	customer := fmt.Sprintf("Keyboard Only %08d S.r.l.", rand.IntN(1e8))
	tabUntil(t, page, `[data-testid="customer-form"] [name="name"]`, 30)
	check(t, page.Keyboard().Type(customer), "type the name")
	tabUntil(t, page, `[data-testid="customer-form"] [name="taxId"]`, 5)
	check(t, page.Keyboard().Type("12"), "type a bad tax id")
	check(t, page.Keyboard().Press("Enter"), "submit with Enter")
	summary := page.Locator(`[data-testid="error-summary"]`)
	check(t, suite.expect.Locator(summary).ToBeFocused(), "the error summary gets the focus")
	check(t, page.Keyboard().Press("Tab"), "Tab into the summary")
	check(t, suite.expect.Locator(summary.Locator("a").First()).ToBeFocused(), "the first error link has the focus")
	check(t, page.Keyboard().Press("Enter"), "follow the error link")
	taxID := page.Locator(`[data-testid="customer-form"] [name="taxId"]`)
	check(t, suite.expect.Locator(taxID).ToBeFocused(), "the link moves the focus to the field")
	check(t, suite.expect.Locator(taxID).ToHaveAttribute("aria-invalid", "true"), "the field is marked invalid")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-form"] [name="name"]`)).ToHaveValue(customer), "the name typed is kept")
	check(t, page.Keyboard().Press("Control+a"), "select the tax id")
	check(t, page.Keyboard().Type(fmt.Sprintf("IT%011d", rand.Int64N(1e11))), "type a good tax id")
	check(t, page.Keyboard().Press("Enter"), "submit again")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToHaveText(customer), "the customer is created")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToBeFocused(), "the focus moves to the new customer's heading")
	check(t, suite.expect.Locator(page.Locator(`#toasts [data-testid="toast"]`).First()).ToContainText("created"),
		"the creation is announced (the toast region is a polite live region)")

	// A quote's quantity: the new total is announced and the focus is not lost.
	visit(t, page, w.quotePath, `[data-testid="cart"]`)
	tabUntil(t, page, `[data-testid="cart-quantity"]`, 60)
	check(t, page.Keyboard().Press("Control+a"), "select the quantity")
	check(t, page.Keyboard().Type("3"), "type 3")
	check(t, page.Keyboard().Press("Enter"), "submit the quantity")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="cart-quantity-was"]`).First()).ToBeVisible(), "the change is shown")
	check(t, suite.expect.Locator(page.Locator("#announcer")).ToContainText("Quote total"), "the new total is announced")
	checkVisibleFocus(t, page, "after the quantity changed")
}

// The customer form keeps a draft in sessionStorage: when the session has expired, signing in
// again brings the user back to the form with everything typed, and a successful save clears it.
func TestA11yCustomerDraftSurvivesSigningInAgain(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	visit(t, page, "/customers/new", `form[data-draft][data-testid="customer-form"]`)
	draftName, err := page.Locator(`[data-testid="customer-form"]`).GetAttribute("data-draft")
	check(t, err, "read the draft name")

	name := fmt.Sprintf("Draft Kept %08d S.p.A.", rand.IntN(1e8))
	taxID := fmt.Sprintf("IT%011d", rand.Int64N(1e11))
	check(t, page.Locator(`[data-testid="customer-form"] [name="name"]`).Fill(name), "type the name")
	check(t, page.Locator(`[data-testid="customer-form"] [name="taxId"]`).Fill(taxID), "type the tax id")
	check(t, page.Locator(`[data-testid="customer-form"] [name="city"]`).Fill("Torino"), "type the city")
	stored := func() string {
		v, err := page.Evaluate(`key => sessionStorage.getItem(key) || ""`, "cpq-draft:"+draftName)
		check(t, err, "read sessionStorage")
		return v.(string)
	}
	check(t, page.Locator(`[data-testid="customer-form"] [name="city"]`).Press("Tab"), "leave the field")
	if s := stored(); !strings.Contains(s, "Torino") || !strings.Contains(s, taxID) {
		t.Fatalf("leaving a field did not save the draft: %q", s)
	}

	// The session ends (cookies gone); the save sends the user to sign in, then back to the form.
	check(t, page.Context().ClearCookies(), "end the session")
	check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "save")
	signIn(t, page, salesUser, salesPassword)
	check(t, suite.expect.Page(page).ToHaveURL(exactURL("/customers/new")), "back on the form after signing in")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="draft-notice"]`)).ToBeVisible(), "the form says the draft was restored")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-form"] [name="name"]`)).ToHaveValue(name), "the name is back")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-form"] [name="taxId"]`)).ToHaveValue(taxID), "the tax id is back")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-form"] [name="city"]`)).ToHaveValue("Torino"), "the city is back")

	check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "save again")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToHaveText(name), "the customer is created")
	if s := stored(); s != "" {
		t.Errorf("the draft is still stored after the customer was created: %s", s)
	}
	visit(t, page, "/customers/new", `[data-testid="customer-form"]`)
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-form"] [name="name"]`)).ToHaveValue(""), "a new form starts empty")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="draft-notice"]`)).ToHaveCount(0), "no draft notice")
}
