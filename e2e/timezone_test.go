package e2e

import (
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
