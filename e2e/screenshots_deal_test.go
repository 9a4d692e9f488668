package e2e

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestScreenshotsOfADealsLifeAndTheBackOffice takes the 1280x800 screenshots of what happens after a
// contract is sent (docs/contracts.md, docs/home.md, docs/backoffice.md): a contract its signer
// signed, one declined with the reason, the back office's home with the signed contract waiting for
// the archive, the batch check leaving out the declined one, an import's dry run and a handover's
// preview. Like TestScreenshots, each is checked to be a whole PNG of its size, written to
// docs/screenshots, and it runs with SCREENSHOTS=1 (make screenshots) only: the states are asserted
// in make test by TestContractSignedShowsOnItsPageAndInTheLists, TestContractDeclinedShowsWhyAndIsSentAgain,
// TestSignedContractArchivedFromTheBackOfficeHome, TestWorkContractFollowsTheDeal (a contract left
// out of the batch check), TestCustomerImportItalianCSVDryRun and
// TestHandoverOfOneOwnersCustomersToAnother. It needs the simulator's signer control API
// (bin/v2sim -admin) and says so otherwise.
func TestScreenshotsOfADealsLifeAndTheBackOffice(t *testing.T) {
	const width, height = 1280, 800
	dir := screenshotsDir(t)
	signerAdminURL(t) // skips, saying why, against a v2 API without signers to drive

	rep := newPageWith(t, pageOptions{width: width, height: height})
	login(t, rep, salesUser, salesPassword)
	contracts := batchMakeContractsFor(t, rep, createTestCustomer(t, rep, "Moretti Impianti"), 2)
	signed, declined := contracts[0], contracts[1]

	_, err := rep.Goto(signed.path)
	check(t, err, "open the contract to sign")
	signerSend(t, rep, "giulia.bianchi@example.com", "Giulia Bianchi")
	signerAnswers(t, signed.number, "SIGNED", "")
	check(t, suite.expect.Locator(rep.Locator("#contract-status")).ToHaveText("Signed", waitLive()), "the contract is signed")
	check(t, suite.expect.Locator(rep.GetByTestId("signature-signed")).ToContainText("Giulia Bianchi"), "who signed")
	showSignature(t, rep, signed.path)
	writeScreenshot(t, rep, dir, "contract-signed", width, height)

	_, err = rep.Goto(declined.path)
	check(t, err, "open the contract to decline")
	signerSend(t, rep, "marco.rossi@example.com", "Marco Rossi")
	signerAnswers(t, declined.number, "DECLINED", "The monthly price is above our budget for this year.")
	check(t, suite.expect.Locator(rep.Locator("#contract-status")).ToHaveText("Declined", waitLive()), "the contract is declined")
	check(t, suite.expect.Locator(rep.GetByTestId("signature-declined")).ToContainText("above our budget"), "why it was declined")
	showSignature(t, rep, declined.path)
	writeScreenshot(t, rep, dir, "contract-declined", width, height)

	clerk := newPageWith(t, pageOptions{width: width, height: height})
	login(t, clerk, backofficeUser, backofficePass)
	// The clerk's token reads the signed contract once (the list), so the home page shows it checked.
	visit(t, clerk, "/work/contracts?scope=all&stage=signed", `[data-testid="work-row"]`)
	visit(t, clerk, "/", `[data-testid="home-waiting"]`)
	check(t, suite.expect.Locator(contractLink(clerk.GetByTestId("home-waiting"), signed.path)).ToBeVisible(), "the signed contract waits for the archive")
	writeScreenshot(t, clerk, dir, "home-backoffice", width, height)

	batchOpenForm(t, clerk)
	batchCheck(t, clerk, []string{signed.number, declined.number})
	check(t, suite.expect.Locator(clerk.GetByTestId("batch-include-unsent")).ToBeVisible(), "the declined contract is left out")
	writeScreenshot(t, clerk, dir, "batch-check", width, height)

	// An import's dry run: new lines, one a customer that exists (its tax id), one invalid.
	existingName, existingTax := "Ferretti Serramenti "+custUnique()+" S.r.l.", custTaxID()
	importCreateCustomer(t, clerk, existingName, existingTax, "Milano")
	var csv bytes.Buffer
	csv.WriteString("name,tax id,e-mail,segment,city,country\r\n")
	for i, name := range []string{"Lombardi Arredamenti S.r.l.", "Caffè Moretti S.n.c.", "Officine Galli S.p.A.", "Studio Colombo Associati"} {
		fmt.Fprintf(&csv, "%s,%s,info%d@example.com,BUSINESS,Bergamo,IT\r\n", name, custTaxID(), i)
	}
	fmt.Fprintf(&csv, "%s,%s,office@example.com,BUSINESS,Milano,IT\r\n", existingName, existingTax)
	fmt.Fprintf(&csv, "Ricci Elettronica,%s,not-an-address,BUSINESS,Brescia,IT\r\n", custTaxID())
	importUpload(t, clerk, "trade fair leads.csv", "text/csv", csv.Bytes())
	importExpectCount(t, clerk, "duplicate", 1)
	importExpectCount(t, clerk, "invalid", 1)
	writeScreenshot(t, clerk, dir, "import-dry-run", width, height)

	// A handover's preview: the first owner with customers, to another.
	visit(t, clerk, "/customers/handover", `[data-testid="handover-from-form"]`)
	_, err = clerk.GetByTestId("handover-from").SelectOption(playwright.SelectOptionValues{Indexes: &[]int{1}})
	check(t, err, "choose the leaving owner")
	check(t, clerk.GetByTestId("handover-show").Click(), "show their customers")
	check(t, suite.expect.Locator(clerk.GetByTestId("handover-to-form")).ToBeVisible(), "their customers are listed")
	_, err = clerk.GetByTestId("handover-to").SelectOption(playwright.SelectOptionValues{Indexes: &[]int{2}})
	check(t, err, "choose the new owner")
	check(t, clerk.GetByTestId("handover-preview").Click(), "preview the handover")
	check(t, suite.expect.Locator(clerk.GetByTestId("handover-row").First()).ToBeVisible(), "the preview lists the customers")
	writeScreenshot(t, clerk, dir, "handover-preview", width, height)
}

// showSignature opens the contract's page as a person coming to it does (no notice, no toast) and
// brings its signature section into view.
func showSignature(t *testing.T, page playwright.Page, path string) {
	t.Helper()
	visit(t, page, path, `[data-testid="signature-section"]`)
	check(t, page.GetByTestId("signature-section").ScrollIntoViewIfNeeded(), "scroll to the signature")
}
