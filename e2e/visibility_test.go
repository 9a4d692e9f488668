package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// TestWatcherVisibilityOwnReadsNeverFadeRefusedRowsStayHidden runs a portal of its own whose simulator refuses every
// user the customers they do not own (PORTAL_DEMO_RESTRICT_TO_OWNERS). Sales makes a quote and a
// contract for a customer of theirs. The team lead's home page, which re-reads the team's rows it
// has not read with the team lead's token, shows no figure, name, rep or stage of them (issue 38:
// visibility by construction), and their list and export neither. After the team lead and the back
// office (not restricted) viewed sales' rows, sales' own home still names his customer and shows
// the same totals (issue 39 item 3: what a person's own token read does not fade when colleagues
// look; named with the other Watcher tests).
func TestWatcherVisibilityOwnReadsNeverFadeRefusedRowsStayHidden(t *testing.T) {
	base := startExtraPortal(t, restrictToOwners)

	rep := signedInPageAt(t, base, salesUser, salesPassword)
	theirs := createTestCustomerAt(t, rep, base, "Visible sales")
	salesQuotePath, salesQuoteID, _ := createTestQuoteAt(t, rep, base, theirs, "Sales visible")
	generated, err := generateContract(t, rep.Request(), base+salesQuotePath)
	check(t, err, "generate the sales contract")
	if generated.Status() != 200 || !strings.Contains(generated.URL(), "/contracts/") {
		t.Fatalf("generating the contract of %s ended at %s with %d", salesQuotePath, generated.URL(), generated.Status())
	}
	salesContractID := generated.URL()[strings.LastIndexByte(generated.URL(), '/')+1:]
	_, err = rep.Goto("/")
	check(t, err, "sales opens the home page")
	recent := rep.GetByTestId("home-recent")
	check(t, suite.expect.Locator(recent).ToContainText(theirs.Name), "sales' home names his customer")
	totals, err := rep.GetByTestId("home-pipeline-summary").TextContent()
	check(t, err, "sales' pipeline totals")

	// The team lead: their home re-reads the team's rows with their token; sales' are refused.
	lead := signedInPageAt(t, base, teamLeadUser, teamLeadPassword)
	_, err = lead.Goto("/")
	check(t, err, "the team lead opens the home page")
	check(t, suite.expect.Locator(lead.GetByTestId("home-team")).ToBeVisible(), "the team lead's home answers its figures")
	body := lead.Locator("main")
	check(t, suite.expect.Locator(body).Not().ToContainText(theirs.Name), "the team lead's home names no customer of sales")
	check(t, suite.expect.Locator(body).Not().ToContainText("Sam Sales"), "nor sales' name as a rep of figures")
	check(t, suite.expect.Locator(body).Not().ToContainText("#"+salesContractID), "nor sales' contract")
	check(t, suite.expect.Locator(lead.GetByTestId("home-pipeline-summary")).ToHaveText(regexp.MustCompile(`open quotes: 0$`)),
		"the team's open pipeline counts none of sales' quotes")
	check(t, suite.expect.Locator(lead.GetByTestId("home-unchecked")).ToHaveCount(0),
		"the rows the v2 API refused the team lead are forgotten, not counted as unchecked")
	for _, path := range []string{"/work/quotes?scope=all", "/work/contracts"} {
		_, err = lead.Goto(path)
		check(t, err, "the team lead opens "+path)
		check(t, suite.expect.Locator(lead.GetByTestId("work-count")).ToHaveText("0 found"), path+" counts none of sales' rows")
		check(t, suite.expect.Locator(lead.Locator("main")).Not().ToContainText(theirs.Name), path+" names no customer of sales")
	}
	resp, err := lead.Request().Get(base + "/work/quotes/export?format=csv&scope=all&q=" + theirs.Name[:3])
	check(t, err, "the team lead's export")
	csv, _ := resp.Text()
	if strings.Contains(csv, salesQuoteID) || strings.Contains(csv, theirs.Name) {
		t.Errorf("the team lead's export filtered on sales' customer gives it: %q", csv)
	}

	// The back office reads sales' rows (unrestricted), then sales comes back.
	clerk := signedInPageAt(t, base, backofficeUser, backofficePass)
	for _, path := range []string{"/", "/work/quotes?scope=all", "/work/contracts", "/contracts/" + salesContractID} {
		_, err = clerk.Goto(path)
		check(t, err, "the back office opens "+path)
	}
	check(t, suite.expect.Locator(clerk.Locator("main")).ToContainText(theirs.Name), "the back office reads sales' contract")
	_, err = rep.Goto("/")
	check(t, err, "sales opens the home page again")
	check(t, suite.expect.Locator(rep.GetByTestId("home-recent")).ToContainText(theirs.Name),
		"after colleagues looked, sales' home still names his customer")
	check(t, suite.expect.Locator(rep.GetByTestId("home-recent")).Not().ToContainText("Not checked yet"),
		"and none of his rows fades to not checked")
	check(t, suite.expect.Locator(rep.GetByTestId("home-pipeline-summary")).ToHaveText(totals),
		"and his pipeline totals are what they were before colleagues looked")
	_, err = rep.Goto("/work/quotes")
	check(t, err, "sales opens My quotes")
	check(t, suite.expect.Locator(workRow(rep, salesQuoteID).GetByTestId("work-customer")).ToHaveText(theirs.Name),
		"sales' My quotes still shows his quote with its customer")
}
