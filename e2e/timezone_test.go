package e2e

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// TestTimesInTheBrowsersTimeZone: a browser in Tokyo (the context's time zone) sees the audit's
// times in Tokyo time, to the second, with the zone named (docs/i18n.md: app.js keeps the
// browser's zone in the portal_tz cookie). Works against an external v2 API: the test makes its
// own customer and quote and reads the times the audit gives.
func TestTimesInTheBrowsersTimeZone(t *testing.T) {
	const zone = "Asia/Tokyo" // no daylight saving time: the expected text never depends on the date
	tokyo, err := time.LoadLocation(zone)
	check(t, err, "load "+zone)
	browserContext, err := suite.browser.NewContext(playwright.BrowserNewContextOptions{
		BaseURL:    playwright.String(suite.portalURL),
		Locale:     playwright.String("en-GB"),
		TimezoneId: playwright.String(zone),
	})
	check(t, err, "a browser context in "+zone)
	page, err := browserContext.NewPage()
	check(t, err, "new page")
	t.Cleanup(func() {
		if t.Failed() {
			saveArtifacts(t, page)
		}
		_ = browserContext.Close()
	})

	login(t, page, salesUser, salesPassword)
	_, err = page.WaitForFunction(`() => document.cookie.includes("portal_tz=`+zone+`")`, nil)
	check(t, err, "app.js keeps the browser's time zone")
	customer := createTestCustomer(t, page, "Zone")
	_, quoteID, _ := createTestQuote(t, page, customer, "Zone")

	_, err = page.Goto("/audits/" + quoteID)
	check(t, err, "open the audit")
	check(t, suite.expect.Locator(page.GetByTestId("audit-zone")).ToContainText(zone), "the audit names the time zone")
	entry := page.GetByTestId("audit-entry").First().Locator("time")
	check(t, suite.expect.Locator(entry).ToBeVisible(), "the audit has an entry")
	iso, err := entry.GetAttribute("datetime")
	check(t, err, "the entry's time")
	at, err := time.Parse(time.RFC3339, iso)
	check(t, err, "parse "+iso)
	want := at.In(tokyo).Format("15:04:05") + " JST"
	check(t, suite.expect.Locator(entry).ToContainText(want), "the entry's time in Tokyo, to the second")
}

// TestFirstPageInTheBrowsersTimeZone: a deep link to a quote's audit, opened in a fresh browser in
// Tokyo, goes through the sign-in and lands on a page the server rendered before it knew the zone
// (no portal_tz cookie yet): that very page shows its times in Tokyo time, to the second, with the
// zone named (app.js shows the <time> elements of a page rendered in another zone in the
// browser's, docs/i18n.md). Works against an external v2 API: the test makes its own quote.
func TestFirstPageInTheBrowsersTimeZone(t *testing.T) {
	const zone = "Asia/Tokyo" // no daylight saving time: the offset is always +9
	tokyo, err := time.LoadLocation(zone)
	check(t, err, "load "+zone)
	setup := newPage(t)
	login(t, setup, salesUser, salesPassword)
	customer := createTestCustomer(t, setup, "FirstZone")
	_, quoteID, _ := createTestQuote(t, setup, customer, "FirstZone")

	browserContext, err := suite.browser.NewContext(playwright.BrowserNewContextOptions{
		BaseURL:    playwright.String(suite.portalURL),
		Locale:     playwright.String("en-GB"),
		TimezoneId: playwright.String(zone),
	})
	check(t, err, "a fresh browser context in "+zone)
	page, err := browserContext.NewPage()
	check(t, err, "new page")
	t.Cleanup(func() {
		if t.Failed() {
			saveArtifacts(t, page)
		}
		_ = browserContext.Close()
	})
	_, err = page.Goto("/audits/" + quoteID)
	check(t, err, "open the deep link")
	check(t, suite.expect.Locator(page.Locator("input[name=username]")).ToBeVisible(), "the deep link asks to sign in")
	cookies, err := browserContext.Cookies(suite.portalURL)
	check(t, err, "the browser's cookies")
	for _, c := range cookies {
		if c.Name == "portal_tz" {
			t.Fatalf("the browser knows the portal's zone cookie before any portal page ran: %+v", c)
		}
	}
	signIn(t, page, salesUser, salesPassword)
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/audits/`+quoteID+`$`)), "the sign-in comes back to the deep link")

	entry := page.GetByTestId("audit-entry").First().Locator("time")
	check(t, suite.expect.Locator(entry).ToBeVisible(), "the audit has an entry")
	iso, err := entry.GetAttribute("datetime")
	check(t, err, "the entry's time")
	at, err := time.Parse(time.RFC3339, iso)
	check(t, err, "parse "+iso)
	// Shown by the browser: "26 Nov 2026, 22:05:09 GMT+9" (Chromium names Tokyo's zone by its
	// offset in English); by the server once the cookie is there: "…, 22:05:09 JST".
	local := at.In(tokyo)
	shown := regexp.MustCompile(regexp.QuoteMeta(local.Format("15:04:05")) + ` (GMT\+9|JST)`)
	check(t, suite.expect.Locator(entry).ToContainText(shown), "the first page shows the entry's time in Tokyo, to the second, with the zone")
	check(t, suite.expect.Locator(page.GetByTestId("audit-zone")).ToContainText(zone), "the audit names the browser's zone")
	_, err = page.WaitForFunction(`() => document.cookie.includes("portal_tz=`+zone+`")`, nil)
	check(t, err, "app.js keeps the browser's time zone for the next pages")

	// The next page comes from the server in Tokyo time.
	_, err = page.Reload()
	check(t, err, "reload")
	check(t, suite.expect.Locator(page.Locator("html")).ToHaveAttribute("data-tz", zone), "the server renders in the kept zone")
	check(t, suite.expect.Locator(entry).ToContainText(shown), "the next page shows the entry's time in Tokyo")

	// A person back from Rome: the kept zone is no longer the browser's. The page the server
	// renders in Rome time is shown in Tokyo time, and the cookie follows the browser.
	check(t, browserContext.AddCookies([]playwright.OptionalCookie{{
		Name: "portal_tz", Value: "Europe/Rome", URL: playwright.String(suite.portalURL),
	}}), "keep Rome as the zone")
	_, err = page.Reload()
	check(t, err, "reload")
	check(t, suite.expect.Locator(entry).ToContainText(shown), "the page rendered in Rome time shows the entry's time in Tokyo")
	_, err = page.WaitForFunction(`() => document.cookie.includes("portal_tz=`+zone+`")`, nil)
	check(t, err, "app.js keeps the browser's new zone")
}

// TestSwappedTimesInTheBrowsersTimeZone: on a page the server rendered in another zone than the
// browser's, the times htmx swaps in later are shown in the browser's zone too. A cookie kept for
// /work only names UTC (sent before the browser's own, so the server renders the work lists in UTC
// however often app.js keeps Tokyo for /), and the quote list filtered through its form (htmx)
// shows its "as of" times in Tokyo time. Works against an external v2 API: the "as of" time is the
// portal's own, and the test makes its own quote.
func TestSwappedTimesInTheBrowsersTimeZone(t *testing.T) {
	const zone = "Asia/Tokyo"
	tokyo, err := time.LoadLocation(zone)
	check(t, err, "load "+zone)
	browserContext, err := suite.browser.NewContext(playwright.BrowserNewContextOptions{
		BaseURL:    playwright.String(suite.portalURL),
		Locale:     playwright.String("en-GB"),
		TimezoneId: playwright.String(zone),
	})
	check(t, err, "a browser context in "+zone)
	page, err := browserContext.NewPage()
	check(t, err, "new page")
	t.Cleanup(func() {
		if t.Failed() {
			saveArtifacts(t, page)
		}
		_ = browserContext.Close()
	})
	login(t, page, salesUser, salesPassword)
	customer := createTestCustomer(t, page, "SwapZone")
	_, quoteID, _ := createTestQuote(t, page, customer, "SwapZone")
	portal, err := url.Parse(suite.portalURL)
	check(t, err, "the portal's URL")
	check(t, browserContext.AddCookies([]playwright.OptionalCookie{{
		Name: "portal_tz", Value: "UTC", Domain: playwright.String(portal.Hostname()), Path: playwright.String("/work"),
	}}), "keep UTC for /work")

	_, err = page.Goto("/work/quotes")
	check(t, err, "open My quotes")
	check(t, suite.expect.Locator(workRow(page, quoteID)).ToBeVisible(), "the new quote is listed")
	results := page.GetByTestId("work-results")
	_, err = results.Evaluate(`el => { el.dataset.beforeSwap = "1" }`, nil)
	check(t, err, "mark the results before the filter")
	check(t, page.GetByTestId("work-find").Fill(customer.Name), "find by customer name")
	swapped := page.Locator(`[data-testid="work-results"]:not([data-before-swap])`)
	check(t, suite.expect.Locator(swapped).ToBeVisible(), "htmx swaps the filtered results in")
	asOf := swapped.Locator(`[data-testid="work-row"][data-id="` + quoteID + `"] [data-testid="work-as-of"] time`)
	check(t, suite.expect.Locator(asOf).ToBeVisible(), "the quote's row says as of when")
	iso, err := asOf.GetAttribute("datetime")
	check(t, err, "the as-of time")
	at, err := time.Parse(time.RFC3339, iso)
	check(t, err, "parse "+iso)
	// Only the browser names Tokyo's zone GMT+9: the server writes these times in UTC.
	check(t, suite.expect.Locator(asOf).ToContainText(at.In(tokyo).Format("15:04")+" GMT+9"), "the swapped time is in Tokyo time")
	check(t, suite.expect.Locator(page.Locator("html")).ToHaveAttribute("data-tz", zone), "the page now says its times are in Tokyo")
}

// TestAuditShowsNoJSON: discounts applied in the quote page read as their names on the audit
// page, and no change of the audit shows JSON (issue 26). Works against an external v2 API: the
// test takes the first discounts the quote offers, whatever they are called.
func TestAuditShowsNoJSON(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	customer := createTestCustomer(t, page, "Words")
	quotePath, quoteID, _ := createTestQuote(t, page, customer, "Words")
	_, err := page.Goto(quotePath)
	check(t, err, "open the quote")
	check(t, page.GetByTestId("quote-discounts-open").Click(), "open the discounts")
	check(t, suite.expect.Locator(page.GetByTestId("discounts-form")).ToBeVisible(), "the discounts form")
	regular := page.GetByTestId("discount-option")
	extras := page.GetByTestId("extra-option")
	nRegular, err := regular.Count()
	check(t, err, "count the discounts")
	nExtras, err := extras.Count()
	check(t, err, "count the extra discounts")
	if nRegular == 0 && nExtras == 0 {
		t.Skip("the quote offers no discount")
	}
	var names []string
	if nRegular > 0 {
		check(t, regular.First().Locator("input").Check(), "tick a discount")
		name, err := regular.First().Locator("label").Evaluate(`l => l.firstChild.textContent.trim()`, nil)
		check(t, err, "the discount's name")
		names = append(names, name.(string))
	}
	if nExtras > 0 {
		check(t, extras.First().GetByTestId("extra-value").Fill("1"), "an extra discount of 1 %")
	}
	check(t, page.GetByTestId("discounts-submit").Click(), "apply the discounts")
	applied := page.GetByTestId("quote-applied-discount").Or(page.GetByTestId("quote-extra-discount"))
	check(t, suite.expect.Locator(applied.First()).ToBeVisible(), "the quote shows the discounts")

	_, err = page.Goto("/audits/" + quoteID)
	check(t, err, "open the audit")
	entry := page.Locator(`[data-testid="audit-entry"][data-action="DISCOUNTS_APPLIED"]`)
	check(t, suite.expect.Locator(entry).ToHaveCount(1), "the audit has the discounts")
	for _, name := range names {
		check(t, suite.expect.Locator(entry.GetByTestId("audit-change")).ToContainText([]string{name}), "the discount is named "+name)
	}
	changes, err := page.GetByTestId("audit-change").AllTextContents()
	check(t, err, "the audit's changes")
	for _, text := range changes {
		if strings.ContainsAny(text, "{}[]\"") {
			t.Errorf("a change shows JSON: %q", text)
		}
	}
}
