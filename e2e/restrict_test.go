package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Demo team lead (internal/demoidp): role team-lead, a team role of the work lists, and owner of
// other customers than sales in the simulator (docs/v2-assumptions.md A13).
const (
	teamLeadUser     = "teamlead"
	teamLeadPassword = "teamlead-demo"
)

// TestRestrictTeamLeadSeesOnlyWhatTheV2APIGivesThem runs a portal of its own whose embedded
// simulator restricts every user to the customers they own (PORTAL_DEMO_RESTRICT_TO_OWNERS), as
// real CPQ deployments restrict reps. Sales makes a quote and a contract for a customer of theirs;
// the team lead's role lists everyone's rows, but the v2 API refuses them sales' customer, so no
// list or page of theirs shows its name, stage or totals: a row is either gone after the re-read
// with the team lead's token (403) or shown "Not checked yet" with nothing but its link. The team
// lead's own customer's quote shows normally, and the back office, not restricted, sees both.
func TestRestrictTeamLeadSeesOnlyWhatTheV2APIGivesThem(t *testing.T) {
	base := startExtraPortal(t, restrictToOwners)

	// Sales: a customer of their own (they create it, so they own it), a quote and its contract.
	rep := signedInPageAt(t, base, salesUser, salesPassword)
	theirs := createTestCustomerAt(t, rep, base, "Restrict sales")
	salesQuotePath, salesQuoteID, _ := createTestQuoteAt(t, rep, base, theirs, "Sales only")
	generated, err := generateContract(t, rep.Request(), base+salesQuotePath)
	check(t, err, "generate the sales contract")
	contractPath := strings.TrimPrefix(generated.URL(), base)
	if generated.Status() != 200 || !regexp.MustCompile(`^/contracts/\d+$`).MatchString(contractPath) {
		body, _ := generated.Text()
		t.Fatalf("generating the contract of %s ended at %s with %d: %.300s", salesQuotePath, generated.URL(), generated.Status(), body)
	}
	salesContractID := strings.TrimPrefix(contractPath, "/contracts/")
	_, err = rep.Goto("/work/quotes")
	check(t, err, "sales opens My quotes")
	check(t, suite.expect.Locator(workRow(rep, salesQuoteID).GetByTestId("work-customer")).ToHaveText(theirs.Name),
		"sales sees their own quote with its customer")

	// The team lead: a customer and a quote of their own.
	lead := signedInPageAt(t, base, teamLeadUser, teamLeadPassword)
	mine := createTestCustomerAt(t, lead, base, "Restrict lead")
	_, leadQuoteID, _ := createTestQuoteAt(t, lead, base, mine, "Lead's own")

	// Every list the team role widens: the team's quotes, then the contracts.
	for _, list := range []struct{ path, hiddenID, what string }{
		{"/work/quotes?scope=all", salesQuoteID, "sales' quote"},
		{"/work/contracts?scope=all", salesContractID, "sales' contract"},
		{"/work/contracts", salesContractID, "sales' contract"},
	} {
		_, err := lead.Goto(list.path)
		check(t, err, "the team lead opens "+list.path)
		check(t, suite.expect.Locator(lead.GetByTestId("work-results")).ToBeVisible(), list.path+" answers its list")
		if strings.HasPrefix(list.path, "/work/quotes") {
			own := workRow(lead, leadQuoteID)
			check(t, suite.expect.Locator(own.GetByTestId("work-customer")).ToHaveText(mine.Name), "the team lead's own quote shows its customer")
			check(t, suite.expect.Locator(own).ToHaveAttribute("data-stage", "draft"), "and its stage")
		}
		restrictExpectNothingOf(t, lead, list.path, list.hiddenID, list.what, theirs.Name)
	}

	// The team lead's customer list and own customer's page show their own work.
	_, err = lead.Goto("/customers")
	check(t, err, "the team lead opens the customer list")
	check(t, suite.expect.Locator(lead.GetByText(mine.Name)).ToBeVisible(), "the team lead's own customer is listed")
	restrictExpectNoName(t, lead, "the customer list", theirs.Name)
	_, err = lead.Goto("/customers/" + strconv.Itoa(mine.ID))
	check(t, err, "the team lead opens their customer's page")
	check(t, suite.expect.Locator(lead.Locator(`[data-testid="customer-quotes"] [data-id="`+leadQuoteID+`"]`)).
		ToHaveAttribute("data-stage", "draft"), "their customer's page lists their quote with its stage")

	// Sales' customer, quote and contract, opened by address: refused, and nothing of them shown.
	for _, path := range []string{"/customers/" + strconv.Itoa(theirs.ID), salesQuotePath, contractPath} {
		resp, err := lead.Goto(path)
		check(t, err, "the team lead opens "+path)
		if resp != nil && resp.Status() < 400 {
			t.Errorf("%s answered the team lead %d, want a refusal", path, resp.Status())
		}
		restrictExpectNoName(t, lead, path, theirs.Name)
	}
	// The team's quotes again, after the refusals: still only their own.
	_, err = lead.Goto("/work/quotes?scope=all")
	check(t, err, "the team lead opens the team's quotes again")
	check(t, suite.expect.Locator(workRow(lead, leadQuoteID)).ToBeVisible(), "their own quote is still listed")
	restrictExpectNothingOf(t, lead, "the team's quotes, again", salesQuoteID, "sales' quote", theirs.Name)

	// The back office is not restricted (the simulator's unrestricted role): it sees sales' work.
	clerk := signedInPageAt(t, base, backofficeUser, backofficePass)
	_, err = clerk.Goto("/work/quotes?scope=all")
	check(t, err, "the back office opens the team's quotes")
	check(t, suite.expect.Locator(workRow(clerk, salesQuoteID).GetByTestId("work-customer")).ToHaveText(theirs.Name),
		"the back office sees sales' quote with its customer")
	check(t, suite.expect.Locator(workRow(clerk, leadQuoteID).GetByTestId("work-customer")).ToHaveText(mine.Name),
		"and the team lead's")
}

// restrictExpectNothingOf checks the list page shown has no trace of the row id beyond, at most,
// an unchecked link: no customer name, stage or totals (docs/work-index.md "Visibility").
func restrictExpectNothingOf(t *testing.T, page playwright.Page, where, id, what, customerName string) {
	t.Helper()
	restrictExpectNoName(t, page, where, customerName)
	row := workRow(page, id)
	n, err := row.Count()
	check(t, err, "count the rows of "+what)
	if n == 0 {
		return // gone after the re-read with the viewer's token (403)
	}
	check(t, suite.expect.Locator(row.GetByTestId("work-unchecked")).ToBeVisible(), fmt.Sprintf("%s on %s is shown unchecked", what, where))
	check(t, suite.expect.Locator(row.GetByTestId("work-customer")).ToHaveCount(0), what+" shows no customer")
	check(t, suite.expect.Locator(row.GetByTestId("work-stage")).ToHaveText(""), what+" shows no stage")
	check(t, suite.expect.Locator(row.Locator("td.num").First()).ToHaveText(""), what+" shows no one-off total")
	check(t, suite.expect.Locator(row.Locator("td.num").Last()).ToHaveText(""), what+" shows no monthly total")
}

// restrictExpectNoName checks the customer's name is nowhere on the page shown.
func restrictExpectNoName(t *testing.T, page playwright.Page, where, customerName string) {
	t.Helper()
	check(t, suite.expect.Locator(page.Locator("body")).Not().ToContainText(customerName),
		fmt.Sprintf("%s shows nothing of sales' customer %q", where, customerName))
}
