package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// The signer's answers (issue 32, docs/v2-assumptions.md A7). The simulator answers for the signer
// through its control API (/_sim/signatures), served by the embedded simulator and by bin/v2sim run
// with -admin; against an external simulator (E2E_V2_API_URL) these tests use that one's.

// liveNoticeMs is how long a change elsewhere may take to show on an open page: one live-notice
// interval (app.js polls every 1.5 s, the portal reads the v2 API at most once per 2 s) and margin.
const liveNoticeMs = 10_000

// signerAdminURL is the simulator whose control API answers for signers.
func signerAdminURL(t *testing.T) string {
	t.Helper()
	if suite.simURL != "" {
		return suite.simURL
	}
	u, err := url.Parse(os.Getenv("E2E_V2_API_URL"))
	if err != nil || u.Host == "" {
		t.Fatalf("no simulator to answer for the signer (E2E_V2_API_URL %q)", os.Getenv("E2E_V2_API_URL"))
	}
	base := u.Scheme + "://" + u.Host
	// A v2 API other than bin/v2sim -admin has no signer to drive: the test cannot go on (it says
	// so rather than failing on an API that is not the v2 API's).
	resp, err := http.Get(base + "/_sim/signatures?contractNumber=none")
	if err != nil {
		t.Fatalf("ask %s for its signers: %v", base, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Skipf("the v2 API at %s has no signer control API (/_sim/signatures answered %d): run bin/v2sim with -admin", base, resp.StatusCode)
	}
	return base
}

// signerRequest is a signature request as the control API lists it.
type signerRequest struct {
	Status     string `json:"status"`
	SigningURL string `json:"signingUrl"`
}

// signingURL is the signing page's address of the contract's waiting request: the link the
// e-mail to the signer carries.
func signingURL(t *testing.T, number string) string {
	t.Helper()
	resp, err := http.Get(signerAdminURL(t) + "/_sim/signatures?contractNumber=" + url.QueryEscape(number))
	check(t, err, "list the signature requests")
	defer resp.Body.Close()
	var reqs []signerRequest
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&reqs) != nil {
		t.Fatalf("the simulator's signature requests of %s: %d", number, resp.StatusCode)
	}
	for _, r := range reqs {
		if r.Status == "SENT" {
			return r.SigningURL
		}
	}
	t.Fatalf("no request of %s waits for its signer: %+v", number, reqs)
	return ""
}

// signerAnswers answers the contract's waiting request as its signer (SIGNED, DECLINED with reason).
func signerAnswers(t *testing.T, number, answer, reason string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"contractNumber": number, "answer": answer, "reason": reason})
	resp, err := http.Post(signerAdminURL(t)+"/_sim/signatures/answer", "application/json", bytes.NewReader(body))
	check(t, err, "answer for the signer")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("answering %s for the signer of %s: %d %s", answer, number, resp.StatusCode, msg)
	}
}

// signerSend sends the contract on page for signature to name <email>.
func signerSend(t *testing.T, page playwright.Page, email, name string) {
	t.Helper()
	sig := page.GetByTestId("signature-section")
	check(t, sig.GetByTestId("signature-email").Fill(email), "the signer's e-mail")
	check(t, sig.GetByTestId("signature-signer").Fill(name), "the signer's name")
	clickSettled(t, page, sig.GetByTestId("signature-send"), "send for signature")
	check(t, suite.expect.Locator(page.GetByTestId("signature-active")).ToContainText(email), "the request is out")
}

// signerContract makes a contract with the page's sign-in and opens its page.
func signerContract(t *testing.T, page playwright.Page) batchContract {
	t.Helper()
	c := batchMakeContracts(t, page, 1)[0]
	_, err := page.Goto(c.path)
	check(t, err, "open the contract")
	return c
}

func waitLive() playwright.LocatorAssertionsToHaveTextOptions {
	return playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(liveNoticeMs)}
}

// TestContractSignedShowsOnItsPageAndInTheLists: a contract is sent for signature, the signer
// signs on the signing page the e-mail links to, and the open contract page shows it Signed within
// one live-notice interval (notice, badge, who signed), and so do the work lists.
func TestContractSignedShowsOnItsPageAndInTheLists(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	c := signerContract(t, page)
	live := page.Locator("#contract-live")
	rendered, err := live.GetAttribute("data-since")
	check(t, err, "the time the page's notices count from")
	signerSend(t, page, "sofia.signer@example.com", "Sofia Signer")
	// The person's own request is not a change to tell them of: the notices count from its answer.
	check(t, suite.expect.Locator(live).Not().ToHaveAttribute("data-since", rendered), "the notices count from the request on")

	// The signer opens the link and signs (another browser page, no portal sign-in).
	signer, err := suite.browser.NewPage()
	check(t, err, "open the signer's browser page")
	defer signer.Close()
	_, err = signer.Goto(signingURL(t, c.number))
	check(t, err, "open the signing page")
	check(t, suite.expect.Locator(signer.Locator("h1")).ToHaveText("Contract "+c.number), "the signing page names the contract")
	check(t, signer.GetByTestId("signing-sign").Click(), "sign")
	check(t, suite.expect.Locator(signer.GetByTestId("signing-status")).ToContainText("SIGNED"), "the signing page says signed")

	// The open contract page follows by itself.
	check(t, suite.expect.Locator(page.Locator("#contract-status")).ToHaveText("Signed", waitLive()), "the badge says Signed")
	check(t, suite.expect.Locator(page.GetByTestId("live-notice")).ToContainText("contract signed"), "the live notice says what happened")
	check(t, suite.expect.Locator(page.GetByTestId("signature-signed")).ToContainText("Signed by Sofia Signer (sofia.signer@example.com) on"), "who signed and when")
	check(t, suite.expect.Locator(page.GetByTestId("signature-form")).ToHaveCount(0), "a signed contract takes no new request")
	checkAxe(t, page, axeSource(t), "a signed contract")

	// The work lists: the contract, and its quote, are Signed.
	id := strings.TrimPrefix(c.path, "/contracts/")
	_, err = page.Goto("/work/contracts?stage=signed")
	check(t, err, "open the signed contracts")
	row := page.Locator(`[data-testid="work-row"][data-id="` + id + `"]`)
	check(t, suite.expect.Locator(row).ToHaveAttribute("data-stage", "signed"), "the contracts list has it signed")
	check(t, suite.expect.Locator(row).ToContainText("Signed"), "with the Signed badge")
	_, err = page.Goto("/work/quotes?scope=all&stage=signed")
	check(t, err, "open the signed quotes")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="work-row"][data-stage="signed"]`).First()).ToBeVisible(), "the quotes list follows its contract")
}

// TestContractDeclinedShowsWhyAndIsSentAgain: the signer declines with a reason; the contract page
// (on a phone, axe clean) says who declined, when and why, the contracts list has it Declined, and
// "Send again" has the last signer filled in.
func TestContractDeclinedShowsWhyAndIsSentAgain(t *testing.T) {
	page := newPageWith(t, pageOptions{width: 375, height: 812, touch: true})
	login(t, page, salesUser, salesPassword)
	c := signerContract(t, page)
	signerSend(t, page, "dora.decline@example.com", "Dora Decline")
	signerAnswers(t, c.number, "DECLINED", "The monthly price is above our budget.")

	check(t, suite.expect.Locator(page.Locator("#contract-status")).ToHaveText("Declined", waitLive()), "the badge says Declined")
	declined := page.GetByTestId("signature-declined")
	check(t, suite.expect.Locator(declined).ToContainText("Declined by Dora Decline (dora.decline@example.com) on"), "who declined")
	check(t, suite.expect.Locator(declined.Locator("time[datetime]")).ToHaveCount(1), "when")
	check(t, suite.expect.Locator(page.GetByTestId("signature-decline-reason")).ToHaveText("The monthly price is above our budget."), "why")
	checkAxe(t, page, axeSource(t), "a declined contract on a phone")

	id := strings.TrimPrefix(c.path, "/contracts/")
	_, err := page.Goto("/work/contracts?stage=declined")
	check(t, err, "open the declined contracts")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="work-row"][data-id="`+id+`"]`)).ToHaveAttribute("data-stage", "declined"), "the list has it declined")

	// Send again: the last signer is filled in.
	_, err = page.Goto(c.path)
	check(t, err, "back to the contract")
	sig := page.GetByTestId("signature-section")
	check(t, suite.expect.Locator(sig.GetByTestId("signature-email")).ToHaveValue("dora.decline@example.com"), "the last signer's e-mail is filled in")
	check(t, suite.expect.Locator(sig.GetByTestId("signature-signer")).ToHaveValue("Dora Decline"), "and the name")
	check(t, suite.expect.Locator(sig.GetByTestId("signature-send")).ToHaveText("Send again"), "the button sends again")
	clickSettled(t, page, sig.GetByTestId("signature-send"), "send again")
	check(t, suite.expect.Locator(page.GetByTestId("signature-active")).ToContainText("dora.decline@example.com"), "out for signature again")
	check(t, suite.expect.Locator(page.Locator("#contract-status")).ToHaveText("Signature requested"), "the badge follows")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="signature-request"]`)).ToHaveCount(2), "both requests are listed")
}

// TestContractNotSignedArchiveWarnsWithItsStage: archiving a contract out for signature from its
// page asks with a warning that names its stage, read when the person clicks; declining the
// question archives nothing.
func TestContractNotSignedArchiveWarnsWithItsStage(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	c := signerContract(t, page)
	signerSend(t, page, "nina.notyet@example.com", "Nina Notyet")

	page.OnDialog(func(d playwright.Dialog) { _ = d.Dismiss() }) // the person answers Cancel
	asked, err := page.ExpectEvent("dialog", func() error { return page.GetByTestId("archive-button").Click() })
	check(t, err, "click Archive")
	question := asked.(playwright.Dialog).Message()
	if !strings.Contains(question, "Contract "+c.number) || !strings.Contains(question, "is not signed: its stage is “Out for signature”") {
		t.Errorf("the archive question %q does not warn with the stage", question)
	}
	check(t, suite.expect.Locator(page.GetByTestId("archive-button")).ToBeVisible(), "dismissed: nothing is archived")
	if !regexp.MustCompile(`cannot be undone`).MatchString(question) {
		t.Errorf("the archive question %q does not say it cannot be undone", question)
	}
}
