package e2e

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/outbox/mailpittest"
)

// pdfPages counts the pages of a PDF by its page objects (/Type /Page, not /Pages).
var pdfPages = regexp.MustCompile(`/Type\s*/Page[^s]`)

// TestOfferSentByMailReachesTheCustomer: on a portal with an SMTP server (Mailpit), the quote's
// offer form is prefilled for an Italian customer (their address, an Italian subject and
// message); sending it delivers one mail to the customer with the offer PDF attached, in Italian,
// and the quote page shows to whom it went, when, and that the server took it. A further send
// asks first and says what changed.
func TestOfferSentByMailReachesTheCustomer(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	base := startExtraPortal(t, "PORTAL_SMTP_URL="+mp.SMTPURL(), "PORTAL_SMTP_FROM=offers@portal.example.com")
	page := signedInPageAt(t, base, salesUser, salesPassword)
	customer := createTestCustomerAt(t, page, base, "Mail") // Milano, IT, office@example.com
	quotePath, _, _ := createTestQuoteAt(t, page, base, customer, "Mail test")
	_, err := page.Goto(quotePath)
	check(t, err, "open the quote")

	form := page.Locator(`[data-testid="offer-mail-form"]`)
	check(t, suite.expect.Locator(form).ToBeVisible(), "the quote offers to send the offer by e-mail")
	check(t, suite.expect.Locator(form.Locator(`#offer-mail-to`)).ToHaveValue("office@example.com"), "the customer's address is prefilled")
	check(t, suite.expect.Locator(form.Locator(`#offer-mail-lang`)).ToHaveValue("it"), "the customer's language (Italy) is chosen")
	check(t, suite.expect.Locator(form.Locator(`#offer-mail-subject`)).ToHaveValue(regexp.MustCompile(`^La nostra offerta per il preventivo \d+`)),
		"the subject is prefilled in Italian")
	check(t, suite.expect.Locator(form.Locator(`#offer-mail-message`)).ToHaveValue(regexp.MustCompile(`(?s)^Gentile .*in allegato`)),
		"the message is prefilled in Italian")

	sentAt := time.Now()
	clickSettled(t, page, form.Locator(`[data-testid="offer-mail-send"]`), "send the offer by e-mail")
	row := page.Locator(`[data-testid="offer-mail-row"]`)
	check(t, suite.expect.Locator(row).ToHaveCount(1), "the quote lists the mail")
	check(t, suite.expect.Locator(row.Locator(`[data-testid="offer-mail-to"]`)).ToHaveText("office@example.com"), "to whom it went")
	check(t, suite.expect.Locator(row).ToHaveAttribute("data-status", "sent"), "the server took it (the list follows the outbox)")
	check(t, suite.expect.Locator(row.Locator(`[data-testid="offer-mail-status"]`)).ToContainText("Delivered to the mail server"), "the delivery is said")
	check(t, suite.expect.Locator(row.Locator("time")).ToHaveCount(1), "when it went")

	got := mp.WaitFor(t, 1, 20*time.Second)
	if len(got) != 1 {
		t.Fatalf("%d mails arrived, want 1", len(got))
	}
	m := mp.Message(t, got[0].ID)
	if len(m.To) != 1 || m.To[0].Address != "office@example.com" || !strings.HasPrefix(m.Subject, "La nostra offerta per il preventivo") {
		t.Errorf("the mail went to %v with subject %q", m.To, m.Subject)
	}
	if !strings.Contains(m.Text, "Gentile") || !strings.Contains(m.HTML, "Gentile") || !strings.Contains(m.Text, base) {
		t.Errorf("the mail's text and HTML are not the Italian message with the portal's link:\n%s\n%s", m.Text, m.HTML)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].ContentType != "application/pdf" {
		t.Fatalf("attachments %+v, want one PDF", m.Attachments)
	}
	pdf := mp.Part(t, m.ID, m.Attachments[0].PartID)
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || len(pdfPages.FindAll(pdf, -1)) < 1 {
		t.Fatalf("the attachment is not a PDF with pages (%d bytes, %d pages)", len(pdf), len(pdfPages.FindAll(pdf, -1)))
	}
	if text := offerText(t, pdf); !strings.Contains(text, "Valida fino al") || !strings.Contains(text, customer.Name) {
		t.Errorf("the attached offer is not the Italian offer for %s:\n%.800s", customer.Name, text)
	}
	if h := mp.Headers(t, m.ID); len(h["Content-Language"]) != 1 || h["Content-Language"][0] != "it" {
		t.Errorf("Content-Language %v, want it", h["Content-Language"])
	}

	// On the quote page opened afresh: still there, and the offer is stored with its documents.
	_, err = page.Goto(quotePath)
	check(t, err, "open the quote again")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="offer-mail-row"][data-status="sent"]`)).ToHaveCount(1), "the quote still shows the mail")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="attachment-row"]`)).ToHaveCount(1), "the offer sent is stored with the quote")
	if time.Since(sentAt) > time.Minute {
		t.Log("slow run")
	}

	// Again: it asks, saying the quote did not change, and sends only when confirmed.
	form = page.Locator(`[data-testid="offer-mail-form"]`)
	clickSettled(t, page, form.Locator(`[data-testid="offer-mail-send"]`), "send the offer again")
	confirm := page.Locator(`[data-testid="offer-mail-confirm"]`)
	check(t, suite.expect.Locator(confirm).ToContainText("office@example.com"), "the confirmation names the last recipients")
	check(t, suite.expect.Locator(confirm).ToContainText("did not change"), "the confirmation says what changed")
	if n := len(mp.Messages(t)); n != 1 {
		t.Fatalf("asking to confirm sent a mail (%d arrived)", n)
	}
	clickSettled(t, page, page.Locator(`[data-testid="offer-mail-send"]`), "confirm the second send")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="offer-mail-row"][data-status="sent"]`)).ToHaveCount(2), "both sends are listed as delivered")
	mp.WaitFor(t, 2, 20*time.Second)
}

// TestMailDemoSentMailPageShowsWhatTheCustomerReceives: the demo portal (no PORTAL_SMTP_URL)
// sends its e-mail to its own mail server over SMTP; after a rep sends the offer, the quote links
// to the demo's "Sent mail" page, which shows the mail as it arrived: the customer's address, the
// Italian subject, the message, and the offer PDF to download.
func TestMailDemoSentMailPageShowsWhatTheCustomerReceives(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	customer := createTestCustomer(t, page, "DemoMail") // Milano, IT, office@example.com
	quotePath, _, _ := createTestQuote(t, page, customer, "Demo mail")
	_, err := page.Goto(quotePath)
	check(t, err, "open the quote")
	form := page.Locator(`[data-testid="offer-mail-form"]`)
	check(t, suite.expect.Locator(form.Locator(`[data-testid="offer-mail-send"]`)).ToBeEnabled(), "the demo can send e-mail")
	subject, err := form.Locator(`#offer-mail-subject`).InputValue()
	check(t, err, "read the subject")
	clickSettled(t, page, form.Locator(`[data-testid="offer-mail-send"]`), "send the offer by e-mail")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="offer-mail-row"]`)).ToHaveAttribute("data-status", "sent"), "the demo's server took it")

	check(t, page.GetByTestId("offer-mail-demo-link").Click(), "open the demo's sent mail")
	mail := page.Locator(`[data-testid="demomail-mail"]`).Filter(playwright.LocatorFilterOptions{HasText: subject})
	check(t, suite.expect.Locator(mail).ToHaveCount(1), "the mail is on the Sent mail page")
	check(t, suite.expect.Locator(mail.GetByTestId("demomail-to")).ToHaveText("office@example.com"), "to the customer")
	check(t, suite.expect.Locator(mail.GetByTestId("demomail-text")).ToContainText("Gentile"), "with the Italian message")
	checkAxe(t, page, axeSource(t), "the demo's sent mail")
	download, err := page.ExpectDownload(func() error { return mail.GetByTestId("demomail-attachment").Click() })
	check(t, err, "download the attached offer")
	path, err := download.Path()
	check(t, err, "the downloaded offer")
	pdf, err := os.ReadFile(path)
	check(t, err, "read the downloaded offer")
	if text := offerText(t, pdf); !strings.Contains(text, "Valida fino al") || !strings.Contains(text, customer.Name) {
		t.Errorf("the attached offer is not the Italian offer for %s:\n%.500s", customer.Name, text)
	}
}
