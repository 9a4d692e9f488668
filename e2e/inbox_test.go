package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/outbox/mailpittest"
)

// The inbox (issue 40, docs/inbox.md). Each test runs a portal of its own: an inbox's count is a
// person's, and other tests of the shared portal would add to it.

// inboxUnread waits until the header's unread count on page says n (it is polled, never reloaded).
func inboxUnread(t *testing.T, page playwright.Page, n int, what string) {
	t.Helper()
	check(t, suite.expect.Locator(page.Locator(`[data-testid="inbox-count"] [data-testid="inbox-unread"]`)).
		ToHaveAttribute("data-n", fmt.Sprint(n), playwright.LocatorAssertionsToHaveAttributeOptions{Timeout: playwright.Float(20_000)}), what)
}

// TestInboxImportFinishedCountsUpLiveOpensReadAndMails: a back-office clerk who chose e-mail (on a
// German page) runs a customer import; a second tab of theirs, left open on another page, shows
// the header's unread count go from 0 to 1 without a reload; the inbox lists the item in German;
// opening it goes to the import's run and marks it read (the count goes back to 0); and one
// e-mail in German with the portal's link reached the SMTP server (Mailpit).
func TestInboxImportFinishedCountsUpLiveOpensReadAndMails(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	base := startExtraPortal(t, "PORTAL_INBOX_REFRESH=1s", "PORTAL_SMTP_URL="+mp.SMTPURL(), "PORTAL_SMTP_FROM=portal@portal.example.com")
	page := signedInPageAt(t, base, backofficeUser, backofficePass)
	check(t, page.Context().AddCookies([]playwright.OptionalCookie{{Name: i18n.CookieName, Value: "de", URL: playwright.String(base)}}), "choose German")

	visit(t, page, "/inbox", `[data-testid="inbox-empty"]`)
	inboxUnread(t, page, 0, "the count is loaded after the page: 0")
	check(t, page.GetByTestId("inbox-delivery-email").Check(), "choose e-mail")
	check(t, page.GetByTestId("inbox-preferences-save").Click(), "save the preference")
	check(t, suite.expect.Locator(page.GetByTestId("inbox-notice")).ToBeVisible(), "the preference is saved")
	check(t, suite.expect.Locator(page.GetByTestId("inbox-delivery-email")).ToBeChecked(), "e-mail is the preference")

	// The second tab, open on the customers while the import runs.
	watcher, err := page.Context().NewPage()
	check(t, err, "open a second tab")
	visit(t, watcher, "/customers", `[data-testid="inbox-link"]`)
	inboxUnread(t, watcher, 0, "the second tab's count: 0")

	run := rand.IntN(100_000)
	var csv bytes.Buffer
	csv.WriteString("nome;partita IVA;e-mail;segmento;città;paese\r\n")
	for i := range 2 {
		fmt.Fprintf(&csv, "Posteingang %05d Kunde %d GmbH;%s;kunde%d@example.com;Aziende;Berlin;DE\r\n", run, i, importTaxID(run, 700_000+i), i)
	}
	importUpload(t, page, "kunden.csv", "text/csv", csv.Bytes())
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	check(t, page.GetByTestId("import-run-button").Click(), "run the import")
	check(t, page.WaitForURL(importRunURL), "the run's page")
	runPath := strings.TrimPrefix(page.URL(), base)
	check(t, suite.expect.Locator(page.GetByTestId("import-run-progress")).ToHaveAttribute("data-active", "false",
		playwright.LocatorAssertionsToHaveAttributeOptions{Timeout: playwright.Float(60_000)}), "the run ends")

	// The other tab was not reloaded: its count follows by itself.
	inboxUnread(t, watcher, 1, "the second tab's count goes up to 1 without a reload")
	check(t, watcher.GetByTestId("inbox-link").Click(), "open the inbox")
	item := watcher.GetByTestId("inbox-item")
	check(t, suite.expect.Locator(item).ToHaveCount(1), "one item")
	check(t, suite.expect.Locator(item).ToHaveAttribute("data-unread", "true"), "unread")
	check(t, suite.expect.Locator(item).ToContainText("Ihr Kundenimport ist fertig: 2 Kunden angelegt, 0 fehlgeschlagen."), "what it says, in German")
	checkAxe(t, watcher, axeSource(t), "the inbox")
	check(t, item.GetByTestId("inbox-item-open").Click(), "open the item")
	check(t, suite.expect.Page(watcher).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(runPath)+"$")), "the item opens the import's run")
	inboxUnread(t, watcher, 0, "opened, it is read: the count is 0")
	visit(t, watcher, "/inbox", `[data-testid="inbox-item"]`)
	check(t, suite.expect.Locator(item).ToHaveAttribute("data-unread", "false"), "the item is read")
	check(t, suite.expect.Locator(watcher.GetByTestId("inbox-read-all")).ToHaveCount(0), "nothing left to mark read")

	// The mail: one, in German, linking to the run.
	got := mp.WaitFor(t, 1, 30*time.Second)
	if len(got) != 1 {
		t.Fatalf("%d mails arrived, want 1", len(got))
	}
	m := mp.Message(t, got[0].ID)
	if len(m.To) != 1 || m.To[0].Address != "bea.backoffice@demo.example" || !strings.Contains(m.Subject, "Ihr Kundenimport ist fertig") {
		t.Errorf("the mail went to %v with subject %q", m.To, m.Subject)
	}
	if !strings.Contains(m.Text, base+runPath) || !strings.Contains(m.HTML, `href="`+base+runPath+`"`) || !strings.Contains(m.Text, "Im Portal öffnen") {
		t.Errorf("the mail does not link to the run in German:\n%s\n%s", m.Text, m.HTML)
	}
	if h := mp.Headers(t, m.ID); len(h["Content-Language"]) != 1 || h["Content-Language"][0] != "de" {
		t.Errorf("Content-Language %v, want de", h["Content-Language"])
	}
}

// scansRan counts the reminder scans the portal logged that created nothing.
var emptyReminderScan = regexp.MustCompile(`inbox: scheduled scan ran.*scan=reminders created=0`)

// TestReminderSignatureWaitingOnceInTheInbox: on a portal whose reminders run every second and
// remind of a signature at once (PORTAL_REMINDER_SIGNATURE_DAYS=0), a contract sent for
// signature puts one reminder in its rep's inbox (the open page's count goes up by itself), and
// further scans create nothing more.
func TestReminderSignatureWaitingOnceInTheInbox(t *testing.T) {
	p := startExtraPortalProcess(t, "PORTAL_INBOX_REFRESH=1s", "PORTAL_REMINDER_EVERY=1s", "PORTAL_REMINDER_SIGNATURE_DAYS=0")
	base := p.url
	page := signedInPageAt(t, base, salesUser, salesPassword)
	customer := createTestCustomerAt(t, page, base, "Reminder")
	quotePath, _, _ := createTestQuoteAt(t, page, base, customer, "Reminder test")
	resp, err := generateContract(t, page.Request(), base+quotePath)
	check(t, err, "generate a contract")
	contractPath := strings.TrimPrefix(resp.URL(), base)
	if resp.Status() != 200 || !regexp.MustCompile(`^/contracts/\d+$`).MatchString(contractPath) {
		t.Fatalf("generating the contract ended at %s with %d", resp.URL(), resp.Status())
	}
	_, err = page.Goto(contractPath)
	check(t, err, "open the contract")
	inboxUnread(t, page, 0, "nothing to remind of yet")
	signerSend(t, page, "rita.reminder@example.com", "Rita Reminder")

	inboxUnread(t, page, 1, "the reminder arrives on the open page")
	logged := len(emptyReminderScan.FindAll(p.log.Bytes(), -1))
	// Two more scans that found the contract again and created nothing.
	deadline := time.Now().Add(30 * time.Second)
	for len(emptyReminderScan.FindAll(p.log.Bytes(), -1)) < logged+2 {
		if time.Now().After(deadline) {
			t.Fatalf("no two further reminder scans within 30 s")
		}
		time.Sleep(100 * time.Millisecond) // polling the log for a condition, not waiting a fixed time
	}
	visit(t, page, "/inbox", `[data-testid="inbox-item"]`)
	item := page.GetByTestId("inbox-item")
	check(t, suite.expect.Locator(item).ToHaveCount(1), "one reminder, however many scans")
	check(t, suite.expect.Locator(item).ToContainText("for its signature"), "it says what waits")
	inboxUnread(t, page, 1, "still one unread")
	check(t, item.GetByTestId("inbox-item-open").Click(), "open the reminder")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(contractPath)+"$")), "the reminder opens the contract")
}
