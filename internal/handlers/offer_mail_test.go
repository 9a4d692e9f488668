package handlers

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/outbox/mailpittest"
)

// TestOfferMailFormValidatesAsksAgainAndSends: the offer's e-mail form is prefilled with the
// customer's address and a subject in the customer's language; bad input is 422 with the
// problem in the reader's language and sends nothing; a cross-site post is refused; a valid send
// stores the offer and mails each recipient the PDF; a further send shows what changed and
// sends only once confirmed.
func TestOfferMailFormValidatesAsksAgainAndSends(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	e := newDocsEnv(t, docsOptions{smtpURL: mp.SMTPURL()})
	ref := e.newQuote(t)
	customer, err := e.api.Customers.Get(e.ctx(), ref.CustomerID)
	if err != nil {
		t.Fatal(err)
	}
	mailURL := ref.URL() + "/offer/mail"

	form := e.htmxDo(t, http.MethodGet, mailURL+"?lang=it", nil)
	doc := parseHTML(t, form.body)
	if form.StatusCode != http.StatusOK || doc.Find(`[data-testid="offer-mail-form"]`).Length() != 1 {
		t.Fatalf("form: %d %s", form.StatusCode, form.body)
	}
	if v, _ := doc.Find(`#offer-mail-to`).Attr("value"); customer.Email != "" && v != customer.Email {
		t.Errorf("recipients prefilled with %q, want the customer's %q", v, customer.Email)
	}
	if v, _ := doc.Find(`#offer-mail-subject`).Attr("value"); !strings.Contains(v, "preventivo "+strconv.FormatInt(ref.QuoteID, 10)) {
		t.Errorf("Italian subject prefilled as %q", v)
	}

	valid := url.Values{"to": {"anna@example.org, bruno@example.org"}, "lang": {"it"}, "subject": {"Offerta"}, "message": {"Buongiorno <b>"}}
	for name, change := range map[string]func(v url.Values){
		"bad address":   func(v url.Values) { v.Set("to", "anna@example.org, not-an-address") },
		"no recipient":  func(v url.Values) { v.Set("to", " , ") },
		"too many":      func(v url.Values) { v.Set("to", manyRecipients(offerMailMaxRecipients+1)) },
		"empty subject": func(v url.Values) { v.Set("subject", " ") },
		"long message":  func(v url.Values) { v.Set("message", strings.Repeat("a", offerMailMaxMessageRune+1)) },
	} {
		v := url.Values{}
		for k, vs := range valid {
			v[k] = append([]string(nil), vs...)
		}
		change(v)
		bad := e.htmxDo(t, http.MethodPost, mailURL, v)
		if bad.StatusCode != http.StatusUnprocessableEntity || parseHTML(t, bad.body).Find(".error-summary, [role=alert]").Length() == 0 {
			t.Errorf("%s: %d, want 422 with the problem shown:\n%.2000s", name, bad.StatusCode, bad.body)
		}
	}
	refused := e.p.do(t, e.user, http.MethodPost, mailURL, strings.NewReader(valid.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if refused.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site send answered %d, want 403", refused.StatusCode)
	}
	if n := len(e.quote(t, ref).Attachments); n != 0 {
		t.Fatalf("refused sends stored %d attachments", n)
	}
	if n := len(mp.Messages(t)); n != 0 {
		t.Fatalf("refused sends mailed %d messages", n)
	}

	sent := e.htmxDo(t, http.MethodPost, mailURL, valid)
	if sent.StatusCode != http.StatusOK || sent.Header.Get("HX-Retarget") != "#documents-region" {
		t.Fatalf("send: %d %q %.2000s", sent.StatusCode, sent.Header.Get("HX-Retarget"), sent.body)
	}
	if n := len(e.quote(t, ref).Attachments); n != 1 {
		t.Errorf("the sent offer is stored %d times on the quote, want once", n)
	}
	got := mp.WaitFor(t, 2, 20*time.Second)
	for _, s := range got {
		m := mp.Message(t, s.ID)
		if m.Subject != "Offerta" || len(m.Attachments) != 1 || !strings.Contains(m.HTML, "Buongiorno &lt;b&gt;") ||
			!bytes.HasPrefix(mp.Part(t, m.ID, m.Attachments[0].PartID), []byte("%PDF-")) {
			t.Errorf("mail to %v: subject %q, %d attachments, html %q", m.To, m.Subject, len(m.Attachments), m.HTML)
		}
	}

	// Again, with one recipient more: the form asks, saying what changed; nothing goes.
	again := url.Values{}
	for k, vs := range valid {
		again[k] = vs
	}
	again.Set("to", "anna@example.org, bruno@example.org, carla@example.org")
	asked := e.htmxDo(t, http.MethodPost, mailURL, again)
	confirm := parseHTML(t, asked.body).Find(`[data-testid="offer-mail-confirm"]`)
	if asked.StatusCode != http.StatusOK || confirm.Length() != 1 || !strings.Contains(confirm.Text(), "carla@example.org") ||
		!strings.Contains(confirm.Text(), "did not change") {
		t.Fatalf("a further send did not ask with what changed: %d\n%.3000s", asked.StatusCode, asked.body)
	}
	waitForMail(t, func() bool {
		rows, _ := e.p.h.mail.Topic(context.Background(), offerTopic(ref.QuoteID), 10)
		return len(rows) == 2
	})
	again.Set("confirm", "1")
	if confirmed := e.htmxDo(t, http.MethodPost, mailURL, again); confirmed.StatusCode != http.StatusOK {
		t.Fatalf("confirmed send: %d", confirmed.StatusCode)
	}
	mp.WaitFor(t, 5, 20*time.Second)

	// The region lists each mail with its delivery.
	list := parseHTML(t, e.htmxDo(t, http.MethodGet, mailURL, nil).body)
	if n := list.Find(`[data-testid="offer-mail-row"]`).Length(); n != 5 {
		t.Errorf("the quote lists %d mails, want 5", n)
	}
}

// TestOfferMailWithoutSMTPSaysSoAndSendsNothing: with no PORTAL_SMTP_URL the form says e-mail is
// not configured, its button is disabled, and a post anyway is 409 with nothing stored.
func TestOfferMailWithoutSMTPSaysSoAndSendsNothing(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)
	doc := parseHTML(t, e.htmxDo(t, http.MethodGet, ref.URL()+"/offer/mail", nil).body)
	if doc.Find(`[data-testid="offer-mail-disabled"]`).Length() != 1 {
		t.Error("the form does not say e-mail is not configured")
	}
	if _, disabled := doc.Find(`[data-testid="offer-mail-send"]`).Attr("disabled"); !disabled {
		t.Error("the send button is not disabled")
	}
	resp := e.htmxDo(t, http.MethodPost, ref.URL()+"/offer/mail",
		url.Values{"to": {"a@example.org"}, "lang": {"en"}, "subject": {"s"}, "message": {"m"}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(resp.body, "not configured") {
		t.Errorf("send without SMTP: %d %.500s", resp.StatusCode, resp.body)
	}
	if n := len(e.quote(t, ref).Attachments); n != 0 {
		t.Errorf("a send without SMTP stored %d attachments", n)
	}
}

func manyRecipients(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("r" + strconv.Itoa(i) + "@example.org,")
	}
	return b.String()
}

func waitForMail(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOfferMailRefusalIsShownToTheSender: a recipient the SMTP server refuses (5xx) is listed on
// the quote as refused, with the server's answer; the other recipient's mail is delivered.
func TestOfferMailRefusalIsShownToTheSender(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{AllowedRecipients: `@example\.org$`})
	e := newDocsEnv(t, docsOptions{smtpURL: mp.SMTPURL()})
	ref := e.newQuote(t)
	mailURL := ref.URL() + "/offer/mail"
	sent := e.htmxDo(t, http.MethodPost, mailURL, url.Values{"to": {"ok@example.org, nobody@refused.test"}, "lang": {"en"},
		"subject": {"Offer"}, "message": {"Hello"}})
	if sent.StatusCode != http.StatusOK {
		t.Fatalf("send: %d", sent.StatusCode)
	}
	var rows *goquery.Selection
	waitForMail(t, func() bool {
		rows = parseHTML(t, e.htmxDo(t, http.MethodGet, mailURL, nil).body).Find(`[data-testid="offer-mail-row"]`)
		return rows.Filter(`[data-status="sent"]`).Length() == 1 && rows.Filter(`[data-status="refused"]`).Length() == 1
	})
	refused := rows.Filter(`[data-status="refused"]`)
	if refused.Find(`[data-testid="offer-mail-to"]`).Text() != "nobody@refused.test" ||
		!strings.Contains(refused.Text(), "Refused:") || !strings.Contains(refused.Text(), "55") {
		t.Errorf("the refused mail reads %q", refused.Text())
	}
	if n := len(mp.Messages(t)); n != 1 {
		t.Errorf("%d mails arrived, want the accepted one only", n)
	}
}

// TestOfferMailShowsHowTheCopyCheckResolvedAMailInDoubt: the quote's list of sent mails says how
// the copy check resolved a mail a crash left in doubt: confirmed by its copy, sent again, being
// sent again, or still being checked (instead of "Unknown: check with the recipient").
func TestOfferMailShowsHowTheCopyCheckResolvedAMailInDoubt(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	e := newDocsEnv(t, docsOptions{smtpURL: mp.SMTPURL()})
	ref := e.newQuote(t)
	mailURL := ref.URL() + "/offer/mail"
	to := []string{"confirmed@example.org", "resent@example.org", "resending@example.org", "checking@example.org"}
	if sent := e.htmxDo(t, http.MethodPost, mailURL, url.Values{"to": {strings.Join(to, ", ")}, "lang": {"en"},
		"subject": {"Offer"}, "message": {"Hello"}}); sent.StatusCode != http.StatusOK {
		t.Fatalf("send: %d", sent.StatusCode)
	}
	waitForMail(t, func() bool {
		rows := parseHTML(t, e.htmxDo(t, http.MethodGet, mailURL, nil).body).Find(`[data-testid="offer-mail-row"]`)
		return rows.Filter(`[data-status="sent"]`).Length() == len(to)
	})
	set := func(recipient, query string) {
		t.Helper()
		if _, err := e.p.db.SQL.Exec(query+` WHERE recipient = $1`, recipient); err != nil {
			t.Fatal(err)
		}
	}
	set("confirmed@example.org", `UPDATE mail_outbox SET recovery = 'confirmed'`)
	set("resent@example.org", `UPDATE mail_outbox SET recovery = 'resent'`)
	set("resending@example.org", `UPDATE mail_outbox SET status = 'queued', recovery = 'resent', next_attempt = 9000000000000000`)
	set("checking@example.org", `UPDATE mail_outbox SET status = 'unknown', copy_to = 'copies@example.com'`)
	page := e.htmxDo(t, http.MethodGet, mailURL, nil)
	rows := parseHTML(t, page.body).Find(`[data-testid="offer-mail-row"]`)
	want := map[string]string{
		"confirmed@example.org": "(confirmed after a restart",
		"resent@example.org":    "(sent again after a restart",
		"resending@example.org": "(sending again after a restart",
		"checking@example.org":  "Being checked: the portal stopped while sending",
	}
	rows.Each(func(_ int, row *goquery.Selection) {
		recipient := row.Find(`[data-testid="offer-mail-to"]`).Text()
		if !strings.Contains(row.Text(), want[recipient]) || strings.Contains(row.Text(), "Check with the recipient") {
			t.Errorf("the mail to %s reads %q, want %q", recipient, strings.Join(strings.Fields(row.Text()), " "), want[recipient])
		}
	})
	if rows.Length() != len(to) {
		t.Fatalf("%d rows, want %d", rows.Length(), len(to))
	}
	// With only the mail being checked left unresolved, the list still follows it.
	set("resending@example.org", `UPDATE mail_outbox SET status = 'sent'`)
	if page := e.htmxDo(t, http.MethodGet, mailURL, nil); !strings.Contains(page.body, `hx-trigger="every 2s"`) {
		t.Error("a list with a mail being checked does not refresh itself")
	}
	set("checking@example.org", `UPDATE mail_outbox SET status = 'sent'`)
	if page := e.htmxDo(t, http.MethodGet, mailURL, nil); strings.Contains(page.body, `hx-trigger="every 2s"`) {
		t.Error("a list with every mail resolved still refreshes itself")
	}
}
