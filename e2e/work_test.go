package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// The work lists (docs/work-index.md). Every test builds the index from what the portal sees in
// the test itself (its own customers, quotes and contracts), so they pass against any v2 API;
// only the 404 test needs the embedded simulator's fault injection.

// workGoto opens a work list (or any page) and waits for it.
func workGoto(t *testing.T, page playwright.Page, path string) {
	t.Helper()
	_, err := page.Goto(path)
	check(t, err, "open "+path)
}

// workRow is the row of a quote or contract on the page shown.
func workRow(page playwright.Page, id string) playwright.Locator {
	return page.Locator(`[data-testid="work-row"][data-id="` + id + `"]`)
}

// A rep's new quote appears on My quotes and on the customer's page with its stage; a user without
// the team role does not see another user's quotes, a team role does.
func TestWorkMyQuotesAndVisibility(t *testing.T) {
	rep := newPage(t)
	login(t, rep, salesUser, salesPassword)
	check(t, suite.expect.Page(rep).ToHaveURL(exactURL("/")), "sales lands on their home page")
	check(t, suite.expect.Locator(rep.Locator("main h1")).ToHaveText("My pipeline"), "a rep's home")
	customer := createTestCustomer(t, rep, "Work")
	_, quoteID, _ := createTestQuote(t, rep, customer, "Work list")

	workGoto(t, rep, "/work/quotes")
	row := workRow(rep, quoteID)
	check(t, suite.expect.Locator(row).ToHaveAttribute("data-stage", "draft"), "the new quote is on My quotes as a draft")
	check(t, suite.expect.Locator(row.GetByTestId("work-stage")).ToHaveText("Draft"), "its stage reads Draft")
	check(t, suite.expect.Locator(row.GetByTestId("work-as-of")).Not().ToBeEmpty(), "the row says as of when")

	// Found by the customer's name, through the filter form (htmx).
	check(t, rep.GetByTestId("work-find").Fill(customer.Name), "find by customer name")
	check(t, suite.expect.Page(rep).ToHaveURL(regexp.MustCompile(`q=`)), "the filter is in the URL")
	check(t, suite.expect.Locator(rep.Locator(`[data-testid="work-row"]`)).ToHaveCount(1), "only this customer's quote")

	src := axeSource(t)
	checkAxe(t, rep, src, "the quotes list, filtered")
	workGoto(t, rep, "/work/contracts?from=2026-13-01")
	check(t, suite.expect.Locator(rep.GetByTestId("work-from-error")).ToBeVisible(), "a malformed date is answered with the form")
	checkAxe(t, rep, src, "the contracts list with a filter error")

	workGoto(t, rep, "/customers/"+strconv.Itoa(customer.ID))
	check(t, suite.expect.Locator(rep.Locator(`[data-testid="customer-quotes"] [data-id="`+quoteID+`"]`)).ToHaveAttribute("data-stage", "draft"),
		"the customer's page lists the quote with its stage")

	clerk := newPage(t)
	login(t, clerk, backofficeUser, backofficePass)
	check(t, suite.expect.Locator(clerk.Locator("main h1")).ToHaveText("Contracts to archive"), "back office lands on their home page")
	theirs := createTestCustomer(t, clerk, "Work other")
	_, otherQuoteID, _ := createTestQuote(t, clerk, theirs, "Someone else's")
	workGoto(t, clerk, "/work/quotes?scope=all")
	check(t, suite.expect.Locator(workRow(clerk, quoteID)).ToBeVisible(), "the team role sees the rep's quote")

	workGoto(t, rep, "/work/quotes?scope=all")
	check(t, suite.expect.Locator(workRow(rep, quoteID)).ToBeVisible(), "the rep's own quote")
	check(t, suite.expect.Locator(workRow(rep, otherQuoteID)).ToHaveCount(0), "without the team role, another user's quote is not listed")
	workGoto(t, rep, "/work/quotes?scope=all&q="+otherQuoteID)
	check(t, suite.expect.Locator(workRow(rep, otherQuoteID)).ToHaveCount(0), "not even when searched by its number")
}

// One contract moves across the contract list's stage filters as it is generated, sent for
// signature, signed and archived; the quote page warns and confirms before a change; "Archive
// selected" opens the batch preview, which leaves out a contract never sent for signature; the
// contract page follows the signer and a colleague's archive (badge and buttons).
func TestWorkContractFollowsTheDeal(t *testing.T) {
	rep := newPage(t)
	var mu sync.Mutex
	var dialogs []string
	accept := true
	rep.OnDialog(func(d playwright.Dialog) {
		mu.Lock()
		dialogs = append(dialogs, d.Message())
		ok := accept
		mu.Unlock()
		if ok {
			_ = d.Accept()
		} else {
			_ = d.Dismiss()
		}
	})
	login(t, rep, salesUser, salesPassword)
	customer := createTestCustomer(t, rep, "Deal")
	quotePath, _, _ := createTestQuote(t, rep, customer, "Deal cart")
	_, err := rep.Goto(quotePath)
	check(t, err, "open the quote")
	region := rep.Locator(`[data-testid="documents-region"]`)
	check(t, suite.expect.Locator(region.GetByTestId("generate-contract")).ToBeVisible(), "the documents region")
	check(t, region.GetByTestId("generate-contract").Click(), "generate the contract")
	check(t, rep.GetByTestId("contract-link").Click(), "open the contract")
	check(t, suite.expect.Locator(rep.GetByTestId("archive-button")).ToBeVisible(), "the contract page")
	mu.Lock()
	summary := strings.Join(dialogs, "\n")
	mu.Unlock()
	if !strings.Contains(summary, customer.Name) || !strings.Contains(summary, "cart") {
		t.Errorf("Generate contract did not confirm with a summary: %q", summary)
	}
	contractPath := strings.TrimPrefix(rep.URL(), suite.portalURL)
	contractID := strings.TrimPrefix(contractPath, "/contracts/")

	workGoto(t, rep, "/work/contracts?stage=generated")
	check(t, suite.expect.Locator(workRow(rep, contractID)).ToHaveAttribute("data-stage", "generated"), "generated")

	workGoto(t, rep, contractPath)
	check(t, rep.GetByTestId("signature-email").Fill("signer@example.com"), "signer's e-mail")
	check(t, rep.GetByTestId("signature-signer").Fill("Signer"), "signer's name")
	clickSettled(t, rep, rep.GetByTestId("signature-send"), "send for signature")
	check(t, suite.expect.Locator(rep.GetByTestId("signature-remove")).ToBeVisible(), "the request is out")
	workGoto(t, rep, "/work/contracts?stage=signature")
	check(t, suite.expect.Locator(workRow(rep, contractID)).ToHaveAttribute("data-stage", "signature"), "out for signature")
	workGoto(t, rep, "/work/contracts?stage=generated")
	check(t, suite.expect.Locator(workRow(rep, contractID)).ToHaveCount(0), "no longer listed as generated")

	// The quote says so at the top, and a change asks first (dismissed: nothing changes).
	workGoto(t, rep, quotePath)
	banner := rep.GetByTestId("quote-contract-banner")
	check(t, suite.expect.Locator(banner).ToContainText("Out for signature"), "the quote's contract banner")
	mu.Lock()
	dialogs, accept = nil, false
	mu.Unlock()
	input := rep.GetByTestId("cart-quantity").First()
	check(t, input.Fill("6"), "type a new quantity")
	check(t, input.Press("Enter"), "submit it")
	check(t, suite.expect.Locator(rep.GetByTestId("cart-quantity-was")).ToHaveCount(0), "the dismissed change was not made")
	mu.Lock()
	asked := strings.Join(dialogs, "\n")
	accept = true
	mu.Unlock()
	if !strings.Contains(asked, "out for signature") {
		t.Errorf("the change did not ask first: %q", asked)
	}

	// A contract never sent for signature, for the batch preview.
	unsent := batchMakeContracts(t, rep, 1)[0]
	unsentID := strings.TrimPrefix(unsent.path, "/contracts/")

	// The contract page stays open while the signer signs and a colleague works.
	workGoto(t, rep, contractPath)
	check(t, suite.expect.Locator(rep.GetByTestId("signature-remove")).ToBeVisible(), "the rep's contract page")
	title, err := rep.GetByTestId("page-title").TextContent()
	check(t, err, "read the contract number")
	signerAnswers(t, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(title), "Contract")), "SIGNED", "") // signer_test.go
	check(t, suite.expect.Locator(rep.GetByTestId("signature-signed")).ToBeVisible(), "the rep's page follows the signature")

	clerk := newPage(t)
	clerk.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	login(t, clerk, backofficeUser, backofficePass)
	workGoto(t, clerk, "/work/contracts")
	check(t, workRow(clerk, contractID).GetByTestId("work-select").Check(), "select the signed contract")
	check(t, workRow(clerk, unsentID).GetByTestId("work-select").Check(), "select the one never sent")
	check(t, clerk.GetByTestId("work-archive-selected").Click(), "Archive selected")
	check(t, suite.expect.Locator(clerk.GetByTestId("batch-preview-summary")).ToContainText("1 contract will be archived"), "the preview archives one")
	check(t, suite.expect.Locator(clerk.Locator(`[data-testid="batch-row-message"]`)).ToContainText([]string{"never sent for signature"}), "and says why the other is left out")
	check(t, suite.expect.Locator(clerk.GetByTestId("batch-include-unsent")).ToBeVisible(), "it can be included explicitly")

	// The colleague archives the contract on its page; the rep's open page follows.
	workGoto(t, clerk, contractPath)
	clickSettled(t, clerk, clerk.GetByTestId("archive-button"), "archive")
	check(t, suite.expect.Locator(clerk.GetByTestId("archive-details")).ToBeVisible(), "archived")
	check(t, suite.expect.Locator(rep.GetByTestId("signature-archived")).ToBeVisible(), "the rep's page loses the signature actions")
	check(t, suite.expect.Locator(rep.GetByTestId("signature-remove")).ToHaveCount(0), "no signature button left")
	check(t, suite.expect.Locator(rep.GetByTestId("archive-button")).ToHaveCount(0), "no archive button left")
	check(t, suite.expect.Locator(rep.GetByTestId("contract-status")).ToHaveAttribute("data-status", "Archived"), "the badge says archived")

	workGoto(t, rep, "/work/contracts?stage=archived")
	check(t, suite.expect.Locator(workRow(rep, contractID)).ToHaveAttribute("data-stage", "archived"), "archived on the list")
}

// A row the v2 API answers 404 for, read with the viewer's token, disappears from their list.
// Needs the embedded simulator (fault injection); skipped against an external v2.
func TestWorkRowLeavesOn404(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	contract := batchMakeContracts(t, page, 1)[0]
	id := strings.TrimPrefix(contract.path, "/contracts/")
	workGoto(t, page, "/work/contracts")
	check(t, suite.expect.Locator(workRow(page, id)).ToBeVisible(), "the contract is listed")
	simFault(t, "contracts.get", map[string]any{"status": 404})
	check(t, page.GetByTestId("work-refresh").Click(), "refresh from the service")
	check(t, suite.expect.Locator(workRow(page, id)).ToHaveCount(0), "the row is gone for this viewer")
}
