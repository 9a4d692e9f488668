package demomail

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/bounce"
	"github.com/cpqportal/portal/internal/mailcopy"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestDemoMailCatchesWhatTheOutboxSends: the outbox's own SMTP sender (go-mail) delivers an
// Italian offer mail with its PDF to the catcher over SMTP; the catcher keeps the subject, the
// recipient, the plain text and the attachment byte for byte, newest first.
func TestDemoMailCatchesWhatTheOutboxSends(t *testing.T) {
	c, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	server, err := outbox.ParseSMTPURL(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	sender := outbox.SMTPSender{Server: server, From: "portal@demo.example"}
	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{0, 1, 2, 250, '\r', '\n'}, 3000)...)
	for i, subject := range []string{"Offerta n. 1042 — Società Benè", "Second"} {
		err := sender.Send(context.Background(), outbox.Message{Mail: outbox.Mail{Recipient: "laura.rossi@example.com", Subject: subject,
			Text: "Gentile cliente,\nin allegato l'offerta.", HTML: "<p>Gentile cliente</p>",
			AttachmentName: "offerta-1042.pdf", AttachmentType: "application/pdf", Attachment: pdf}, MessageID: "<m" + string(rune('a'+i)) + "@demo>"})
		if err != nil {
			t.Fatal(err)
		}
	}
	mails := c.Mails()
	if len(mails) != 2 {
		t.Fatalf("%d mails kept, want 2", len(mails))
	}
	m := mails[1] // newest first
	if m.Subject != "Offerta n. 1042 — Società Benè" {
		t.Errorf("subject %q", m.Subject)
	}
	if len(m.To) != 1 || m.To[0] != "laura.rossi@example.com" || m.From != "portal@demo.example" {
		t.Errorf("envelope from %q to %v", m.From, m.To)
	}
	if !strings.Contains(m.Text, "in allegato l'offerta.") {
		t.Errorf("text %q", m.Text)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].Name != "offerta-1042.pdf" || !bytes.Equal(m.Attachments[0].Data, pdf) {
		t.Fatalf("attachments %d: %+v", len(m.Attachments), m.Attachments)
	}
	if m.MessageID != "ma@demo" {
		t.Errorf("Message-ID %q", m.MessageID)
	}
	if got, ok := c.Mail(m.ID); !ok || got.Subject != m.Subject {
		t.Errorf("mail %d not found by its id", m.ID)
	}
}

// TestDemoMailKeepsTheLastMails: only the last MaxMails are kept.
func TestDemoMailKeepsTheLastMails(t *testing.T) {
	c := &Catcher{nextID: 1}
	c.now = func() (t0 time.Time) { return }
	for range MaxMails + 5 {
		c.keep(Mail{Subject: "x"})
	}
	mails := c.Mails()
	if len(mails) != MaxMails || mails[0].ID != MaxMails+5 || mails[len(mails)-1].ID != 6 {
		t.Errorf("kept %d mails, newest %d, oldest %d", len(mails), mails[0].ID, mails[len(mails)-1].ID)
	}
}

// TestDemoMailCopyMailboxLetsTheCopyCheckRun: with the demo's copy mailbox, a mail the outbox
// sends with the copy reaches the catcher once (the "Sent mail" page does not list the copy
// address) and its copy the IMAP mailbox; the portal's copy check confirms a mail whose answer was
// lost by that copy and empties the mailbox.
func TestDemoMailCopyMailboxLetsTheCopyCheckRun(t *testing.T) {
	c, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const copyTo = "portal-copies@demo.example"
	imapURL, err := c.ServeCopies(copyTo)
	if err != nil {
		t.Fatal(err)
	}
	db := statedbtest.SQLite(t)
	server, err := outbox.ParseSMTPURL(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	o := outbox.New(outbox.Options{DB: db, Sender: outbox.SMTPSender{Server: server, From: "portal@demo.example"}, CopyTo: copyTo})
	ctx := context.Background()
	if _, err := o.Enqueue(ctx, "demo.example", []outbox.Mail{{Owner: "sales", Topic: "quote:1", Recipient: "laura.rossi@example.com",
		Subject: "Offer", Text: "Hello"}}); err != nil {
		t.Fatal(err)
	}
	if err := o.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	mails := c.Mails()
	if len(mails) != 1 || len(mails[0].To) != 1 || mails[0].To[0] != "laura.rossi@example.com" || c.Copies() != 1 {
		t.Fatalf("mails %+v, %d copies; want one mail to the customer only and one copy", mails, c.Copies())
	}
	// The answer was lost (the portal was killed after the server's 250).
	if _, err := db.SQL.Exec(`UPDATE mail_outbox SET status = 'unknown'`); err != nil {
		t.Fatal(err)
	}
	box, err := bounce.ParseIMAPURL(imapURL)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mailcopy.New(mailcopy.Options{DB: db, Outbox: o, Mailbox: box, CopyTo: copyTo, Domain: "demo.example"}).Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := o.Topic(ctx, "quote:1", 10)
	if err != nil || len(rows) != 1 || rows[0].Status != outbox.StatusSent || rows[0].Recovery != outbox.RecoveryConfirmed {
		t.Fatalf("check %+v, rows %+v (%v); want the mail confirmed", res, rows, err)
	}
	if c.Copies() != 0 || len(c.Mails()) != 1 {
		t.Fatalf("%d copies, %d mails after the check; want the copy deleted and the mail sent once", c.Copies(), len(c.Mails()))
	}
}
