package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/playwright-community/playwright-go"
)

// The signature watcher (issue 39, internal/signwatch): contracts out for signature are read again
// with their sender's token until the signer answers, so the answer reaches the lists and the
// home pages without anyone opening the contract.

// watcherInterval is the watch interval of these tests' portal (PORTAL_WATCH_INTERVAL).
const watcherInterval = 2 * time.Second

// watcherWithin is how long an answer may take to show: the interval, the watcher's scan and a
// margin for a busy machine.
const watcherWithin = 8 * watcherInterval

// watcherContractOut makes a contract of customer at base and sends it for signature to name
// <email> on its page, as the rep does.
func watcherContractOut(t *testing.T, page playwright.Page, base string, customer testCustomer, email, name string) batchContract {
	t.Helper()
	quotePath, _, _ := createTestQuoteAt(t, page, base, customer, "Watcher")
	resp, err := generateContract(t, page.Request(), base+quotePath)
	check(t, err, "generate a contract")
	body, _ := resp.Text()
	path := strings.TrimPrefix(resp.URL(), base)
	if resp.Status() != 200 || !regexp.MustCompile(`^/contracts/\d+$`).MatchString(path) {
		t.Fatalf("generating the contract of %s ended at %s with %d", quotePath, resp.URL(), resp.Status())
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	check(t, err, "parse the contract page")
	number := strings.TrimSpace(strings.TrimPrefix(doc.Find(`h1[data-testid="page-title"]`).Text(), "Contract"))
	_, err = page.Goto(base + path)
	check(t, err, "open the contract")
	signerSend(t, page, email, name)
	return batchContract{path: path, number: number}
}

// watcherAnswer answers the contract's waiting request as its signer, on the simulator at sim.
func watcherAnswer(t *testing.T, sim, number, answer, reason string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"contractNumber": number, "answer": answer, "reason": reason})
	resp, err := http.Post(sim+"/_sim/signatures/answer", "application/json", bytes.NewReader(body))
	check(t, err, "answer for the signer")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("answering %s for the signer of %s: %d %s", answer, number, resp.StatusCode, msg)
	}
}

// reloadUntil loads url in page until ready says the page shows what is awaited, for at most
// within (each load waits for the page; nothing waits a fixed time).
func reloadUntil(t *testing.T, page playwright.Page, url string, within time.Duration, what string, ready func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, err := page.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad})
		check(t, err, "open "+url)
		if ready() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s (%s)", within, what, url)
		}
	}
}

func visible(l playwright.Locator) bool {
	n, err := l.Count()
	return err == nil && n > 0
}

// TestWatcherShowsSignerAnswersWithoutAnyoneOpeningThem: a rep sends two contracts for signature
// and leaves them; the signers sign one and decline the other through the simulator. Without
// anyone opening either contract, the rep's contract list has them signed and declined within
// the watch interval, the rep's home lists the declined one as a follow-up (number and customer)
// and no longer lists either as out for signature, and the back office's home has the signed one
// waiting for the archive on its first visit. Both answers are in the rep's inbox, the decline
// with its reason, and the inbox item opens the contract.
func TestWatcherShowsSignerAnswersWithoutAnyoneOpeningThem(t *testing.T) {
	p := startExtraPortalProcess(t, "PORTAL_WATCH_INTERVAL="+watcherInterval.String(),
		"PORTAL_FOLLOWUP_SIGNATURE_DAYS=0", "PORTAL_FOLLOWUP_DRAFT_DAYS=0")
	base, sim := p.url, p.simURL()
	if sim == "" {
		sim = signerAdminURL(t)
	}
	rep := signedInPageAt(t, base, salesUser, salesPassword)
	customer := createTestCustomerAt(t, rep, base, "Watcher")
	signed := watcherContractOut(t, rep, base, customer, "sofia.signer@example.com", "Sofia Signer")
	declined := watcherContractOut(t, rep, base, customer, "dora.decline@example.com", "Dora Decline")
	_, err := rep.Goto(base + "/")
	check(t, err, "the rep goes home")
	check(t, suite.expect.Locator(rep.GetByTestId("followup-signature")).ToContainText(signed.number), "out for signature before the answers")

	watcherAnswer(t, sim, signed.number, "SIGNED", "")
	watcherAnswer(t, sim, declined.number, "DECLINED", "The monthly price is above our budget.")

	signedID := strings.TrimPrefix(signed.path, "/contracts/")
	declinedID := strings.TrimPrefix(declined.path, "/contracts/")
	row := func(id string) playwright.Locator {
		return rep.Locator(`[data-testid="work-row"][data-id="` + id + `"]`)
	}
	reloadUntil(t, rep, base+"/work/contracts?stage=signed", watcherWithin, "the signed contract in the rep's signed contracts",
		func() bool { return visible(row(signedID)) })
	check(t, suite.expect.Locator(row(signedID)).ToHaveAttribute("data-stage", "signed"), "listed as signed")
	reloadUntil(t, rep, base+"/work/contracts?stage=declined", watcherWithin, "the declined contract in the rep's declined contracts",
		func() bool { return visible(row(declinedID)) })

	_, err = rep.Goto(base + "/")
	check(t, err, "the rep goes home again")
	followDeclined := rep.GetByTestId("followup-declined")
	check(t, suite.expect.Locator(followDeclined).ToContainText(declined.number), "the declined contract is a follow-up")
	check(t, suite.expect.Locator(followDeclined).ToContainText(customer.Name), "named with its customer")
	check(t, suite.expect.Locator(rep.GetByTestId("followup-signature")).Not().ToContainText(signed.number), "no longer out for signature")

	// Nobody opened either contract: the rep's home read them from the watcher's records.
	clerk := signedInPageAt(t, base, backofficeUser, backofficePass)
	_, err = clerk.Goto(base + "/")
	check(t, err, "the back office opens its home")
	check(t, suite.expect.Locator(clerk.GetByTestId("home-waiting")).ToContainText(signed.number), "the signed contract waits for the archive on the first visit")

	// Both answers are in the rep's inbox, the decline with its reason; opening it leads to the contract.
	_, err = rep.Goto(base + "/inbox")
	check(t, err, "the rep opens the inbox")
	declinedItem := rep.Locator(`[data-testid="inbox-item"]`).Filter(playwright.LocatorFilterOptions{HasText: declined.number})
	check(t, suite.expect.Locator(declinedItem).ToContainText("The monthly price is above our budget."), "the decline and its reason in the inbox")
	check(t, suite.expect.Locator(rep.Locator(`[data-testid="inbox-item"]`).Filter(playwright.LocatorFilterOptions{HasText: signed.number})).ToHaveCount(1),
		"the signature in the inbox")
	check(t, declinedItem.GetByTestId("inbox-item-open").Click(), "open the declined contract from the inbox")
	// The declined contract's page says who declined, why and when.
	check(t, suite.expect.Locator(rep.GetByTestId("signature-decline-reason")).ToHaveText("The monthly price is above our budget."), "why")
}
