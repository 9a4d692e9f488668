package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/i18n"
)

// The home page by role (docs/home.md). The tests run a portal of their own (fresh index, so its
// figures are the test's own rows) where the follow-ups' days are 0: a contract out for signature
// and a draft are follow-ups at once, without waiting two weeks.

// pipelinePortal starts a portal whose follow-ups come at once.
func pipelinePortal(t *testing.T) string {
	t.Helper()
	return startExtraPortal(t, "PORTAL_FOLLOWUP_SIGNATURE_DAYS=0", "PORTAL_FOLLOWUP_DRAFT_DAYS=0")
}

// italianAmount is an amount as Italian writes it: 1.234,50 € (a no-break space before €).
var italianAmount = regexp.MustCompile(`^\d{1,3}(\.\d{3})*,\d{2}\x{00a0}€$`)

// TestPipelineFollowUpHomeOnAPhoneInItalian: a rep on a 375 px phone in Italian lands on their
// home page; a draft and a contract out for signature appear in their pipeline (chart and table,
// amounts in Italian) and in their follow-ups; the page is axe clean with targets a finger can
// hit; a number opens the list that makes it, with as many rows.
func TestPipelineFollowUpHomeOnAPhoneInItalian(t *testing.T) {
	base := pipelinePortal(t)
	page := newPageWith(t, pageOptions{base: base, width: 375, height: 812, locale: "it-IT", touch: true})
	check(t, page.Context().AddCookies([]playwright.OptionalCookie{{
		Name: i18n.CookieName, Value: "it", URL: playwright.String(base),
	}}), "choose Italian")
	_, err := page.Goto("/")
	check(t, err, "open the portal")
	signInAt(t, page, base, salesUser, salesPassword)
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`^`+regexp.QuoteMeta(base)+`/$`)), "the rep lands on the home page")
	check(t, suite.expect.Locator(page.Locator("main h1")).ToHaveText("La mia pipeline"), "their pipeline, in Italian")

	customer := createTestCustomerAt(t, page, base, "Pipeline")
	draftPath, _, _ := createTestQuoteAt(t, page, base, customer, "Bozza")
	signedPath, _, _ := createTestQuoteAt(t, page, base, customer, "In firma")
	req := page.Request()
	contract, err := generateContract(t, req, base+signedPath)
	check(t, err, "generate the contract")
	contractPath := strings.TrimPrefix(contract.URL(), base)
	if contract.Status() != 200 || !regexp.MustCompile(`^/contracts/\d+$`).MatchString(contractPath) {
		t.Fatalf("generating the contract ended at %s with %d", contract.URL(), contract.Status())
	}
	sent, err := req.Post(base+contractPath+"/signature", playwright.APIRequestContextPostOptions{
		Form:    map[string]any{"email": "firmatario@example.com", "signerName": "Sergio Firmatario"},
		Headers: map[string]string{"HX-Request": "true"},
	})
	check(t, err, "send the contract for signature")
	if sent.Status() != 200 {
		t.Fatalf("sending for signature answered %d", sent.Status())
	}

	_, err = page.Goto("/")
	check(t, err, "open the home page")
	chart := page.GetByTestId("home-pipeline")
	check(t, suite.expect.Locator(chart.GetByTestId("home-pipeline-svg")).ToBeVisible(), "the pipeline's chart is drawn")
	check(t, suite.expect.Locator(chart.GetByTestId("home-pipeline-bar")).ToHaveCount(3), "a bar a stage")
	table := chart.GetByTestId("home-pipeline-table")
	check(t, suite.expect.Locator(table).ToBeVisible(), "the chart's table is shown with it")
	rows := table.Locator("tbody tr")
	check(t, suite.expect.Locator(rows).ToHaveCount(3), "a row a stage")
	check(t, suite.expect.Locator(rows.Nth(0).Locator("th")).ToHaveText("Bozza"), "stages in Italian")
	check(t, suite.expect.Locator(rows.Nth(0).GetByTestId("home-pipeline-count")).ToHaveText("1"), "one draft")
	check(t, suite.expect.Locator(rows.Nth(2).Locator("th")).ToHaveText("In firma"), "out for signature, in Italian")
	check(t, suite.expect.Locator(rows.Nth(2).GetByTestId("home-pipeline-count")).ToHaveText("1"), "one quote out for signature")
	for i := range 3 {
		value, err := rows.Nth(i).Locator("td").Nth(1).TextContent()
		check(t, err, "read a stage's value")
		if !italianAmount.MatchString(strings.TrimSpace(value)) {
			t.Errorf("a stage's value reads %q, not an Italian amount such as 1.234,50 €", value)
		}
	}
	summary, err := chart.GetByTestId("home-pipeline-summary").TextContent()
	check(t, err, "read the open value")
	if !strings.Contains(summary, "Valore aperto") || !strings.Contains(summary, ",") || !strings.Contains(summary, "€") {
		t.Errorf("the open value reads %q", summary)
	}

	// The follow-ups list the contract out for signature and the draft, each linked.
	signature := page.GetByTestId("followup-signature")
	check(t, suite.expect.Locator(signature.GetByTestId("followup-signature-count")).ToHaveText("1"), "one contract to push")
	check(t, suite.expect.Locator(signature.Locator(`a[href="`+contractPath+`"]`)).ToBeVisible(), "the contract out for signature is listed")
	check(t, suite.expect.Locator(signature.Locator("h3")).ToContainText("In firma da 0 giorni o più"), "named in Italian")
	draft := page.GetByTestId("followup-draft")
	check(t, suite.expect.Locator(draft.GetByTestId("followup-draft-count")).ToHaveText("1"), "one draft to push")
	check(t, suite.expect.Locator(draft.Locator(`a[href="`+draftPath+`"]`)).ToBeVisible(), "the untouched draft is listed")
	check(t, suite.expect.Locator(page.GetByTestId("home-recent").GetByTestId("home-item")).ToHaveCount(2), "both quotes in the recent work")

	checkAxe(t, page, axeSource(t), "the home page on a phone in Italian")
	phoneCheckTargets(t, page, "the home page")
	box, err := page.GetByTestId("home-pipeline-svg").BoundingBox()
	check(t, err, "measure the chart")
	if box.X < 0 || box.X+box.Width > 375.5 {
		t.Errorf("the chart overflows a 375 px screen: x %.0f, width %.0f", box.X, box.Width)
	}

	// A number opens the list that makes it, with as many rows.
	check(t, rows.Nth(0).GetByTestId("home-pipeline-count").Click(), "open the drafts' list")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/work/quotes\?stage=draft$`)), "the list of drafts")
	check(t, suite.expect.Locator(page.GetByTestId("work-count")).ToHaveText("1 trovato"), "as many rows as the number said")
	_, err = page.GoBack()
	check(t, err, "back home")
	check(t, signature.GetByTestId("followup-signature-count").Click(), "open the follow-up's list")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/work/contracts\?entered_to=\d{4}-\d{2}-\d{2}&scope=mine&stage=signature$`)),
		"the contracts out for signature since")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="work-row"]`)).ToHaveCount(1), "the one contract")
	check(t, suite.expect.Locator(page.GetByTestId("work-narrowing")).ToContainText("Entrato nella fase"), "the list says what it is narrowed to")
}

// TestPipelineTeamLeadAndBackOfficeHomes: the team lead's home has the team's figures by rep
// (the rep's quote counted under their name, linked to their rows) and the charts of signed
// contracts and aging; the back office's has the signed contracts waiting for the archive.
func TestPipelineTeamLeadAndBackOfficeHomes(t *testing.T) {
	base := pipelinePortal(t)
	rep := signedInPageAt(t, base, salesUser, salesPassword)
	customer := createTestCustomerAt(t, rep, base, "Team")
	createTestQuoteAt(t, rep, base, customer, "Team pipeline")

	lead := newPageWith(t, pageOptions{base: base})
	_, err := lead.Goto("/")
	check(t, err, "open the portal")
	signInAt(t, lead, base, teamLeadUser, teamLeadPassword)
	check(t, suite.expect.Locator(lead.Locator("main h1")).ToHaveText("Team pipeline"), "the team lead's home")
	repRow := lead.GetByTestId("home-reps-table").Locator("tbody tr").Filter(playwright.LocatorFilterOptions{HasText: "Sam Sales"})
	check(t, suite.expect.Locator(repRow.GetByTestId("home-reps-count")).ToHaveText("1"), "the rep's open quote under their name")
	for _, id := range []string{"home-signed", "home-aging-signature", "home-conversion", "home-followups"} {
		check(t, suite.expect.Locator(lead.GetByTestId(id)).ToBeVisible(), id+" is shown")
	}
	checkAxe(t, lead, axeSource(t), "the team lead's home")
	check(t, repRow.GetByTestId("home-reps-count").Click(), "open the rep's list")
	check(t, suite.expect.Locator(lead.Locator(`[data-testid="work-row"]`)).ToHaveCount(1), "the rep's one quote")

	clerk := newPageWith(t, pageOptions{base: base})
	_, err = clerk.Goto("/")
	check(t, err, "open the portal")
	signInAt(t, clerk, base, backofficeUser, backofficePass)
	check(t, suite.expect.Locator(clerk.Locator("main h1")).ToHaveText("Contracts to archive"), "the back office's home")
	check(t, suite.expect.Locator(clerk.GetByTestId("home-waiting")).ToBeVisible(), "the signed contracts waiting")
	check(t, suite.expect.Locator(clerk.GetByTestId("home-aging-archive-svg")).ToBeVisible(), "and how long they wait")
	checkAxe(t, clerk, axeSource(t), "the back office's home")
}
