package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/bounce/imaptest"
	"github.com/cpqportal/portal/internal/outbox/mailpittest"
)

// TestMailBounceShownOnTheQuoteAndInTheRepsInbox: on a portal with an SMTP server (Mailpit) and a
// bounce mailbox on a real IMAP server (go-imap's in-memory server, in the test's process), an
// offer sent to the customer goes out with the bounce mailbox as its Return-Path and shows
// "Delivered to the mail server"; then the customer's server's delivery report (an RFC 3464 DSN,
// 5.1.1 user unknown) arrives in the bounce mailbox. The rep's header count goes up by itself,
// the quote shows the mail bounced with the status and the server's words, the inbox item names
// the recipient and opens the quote, and the report is marked read in the mailbox.
func TestMailBounceShownOnTheQuoteAndInTheRepsInbox(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	imapd := imaptest.Start(t)
	base := startExtraPortal(t, "PORTAL_SMTP_URL="+mp.SMTPURL(), "PORTAL_SMTP_FROM=offers@portal.example.com",
		"PORTAL_MAIL_BOUNCE_IMAP_URL="+imapd.URL(), "PORTAL_MAIL_BOUNCE_ADDRESS=bounces@portal.example.com",
		"PORTAL_MAIL_BOUNCE_EVERY=1s", "PORTAL_INBOX_REFRESH=1s")
	page := signedInPageAt(t, base, salesUser, salesPassword)
	customer := createTestCustomerAt(t, page, base, "Bounce") // office@example.com
	quotePath, _, _ := createTestQuoteAt(t, page, base, customer, "Bounce test")
	_, err := page.Goto(quotePath)
	check(t, err, "open the quote")
	inboxUnread(t, page, 0, "nothing in the inbox yet")

	form := page.Locator(`[data-testid="offer-mail-form"]`)
	clickSettled(t, page, form.Locator(`[data-testid="offer-mail-send"]`), "send the offer by e-mail")
	row := page.Locator(`[data-testid="offer-mail-row"]`)
	check(t, suite.expect.Locator(row).ToHaveAttribute("data-status", "sent"), "the server took it")
	got := mp.WaitFor(t, 1, 20*time.Second)
	m := got[0]
	if rp := mp.Headers(t, m.ID)["Return-Path"]; len(rp) == 0 || !strings.Contains(rp[0], "bounces@portal.example.com") {
		t.Fatalf("Return-Path %v, want the bounce mailbox's address", rp)
	}
	messageID := "<" + strings.Trim(m.MessageID, "<>") + ">"

	// The customer's server reports later that the mailbox does not exist.
	imapd.Append(t, imaptest.DSN(messageID, "office@example.com", "failed", "5.1.1",
		"550 5.1.1 <office@example.com>: Recipient address rejected: User unknown in virtual mailbox table"))
	inboxUnread(t, page, 1, "the rep is told on the open page")

	_, err = page.Goto(quotePath)
	check(t, err, "open the quote again")
	row = page.Locator(`[data-testid="offer-mail-row"]`)
	check(t, suite.expect.Locator(row).ToHaveAttribute("data-status", "bounced"), "the quote shows the mail bounced")
	status := row.Locator(`[data-testid="offer-mail-status"]`)
	check(t, suite.expect.Locator(status).ToContainText("Bounced: not delivered to the recipient"), "the bounce is said")
	check(t, suite.expect.Locator(status).ToContainText("5.1.1"), "with its status")
	check(t, suite.expect.Locator(status).ToContainText("User unknown"), "and the server's words")
	check(t, suite.expect.Locator(row.Locator(`[data-testid="offer-mail-to"]`)).ToHaveText("office@example.com"), "to whom it did not go")

	visit(t, page, "/inbox", `[data-testid="inbox-item"]`)
	item := page.GetByTestId("inbox-item")
	check(t, suite.expect.Locator(item).ToHaveCount(1), "one item for the bounce")
	check(t, suite.expect.Locator(item).ToContainText("did not reach office@example.com"), "it names the recipient")
	check(t, suite.expect.Locator(item).ToContainText("5.1.1"), "and the status")
	check(t, item.GetByTestId("inbox-item-open").Click(), "open the item")
	quoteID := quotePath[strings.LastIndex(quotePath, "/")+1:]
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/`+regexp.QuoteMeta(quoteID)+`$`)), "the item opens the quote")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="offer-mail-row"][data-status="bounced"]`)).ToHaveCount(1), "where the bounce shows")

	if !imapd.Seen(t, messageID) {
		t.Error("the report is not marked read in the bounce mailbox")
	}
}
