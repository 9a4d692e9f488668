package bounce_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/bounce"
	"github.com/cpqportal/portal/internal/bounce/imaptest"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/outbox/mailpittest"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

const rep = "rep-bounce"

func bundle(t *testing.T) *i18n.Bundle {
	t.Helper()
	b, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sendOffers sends one offer mail to each recipient through a real SMTP server (Mailpit), with
// the bounce mailbox's address as the envelope sender, and returns the rows by recipient.
func sendOffers(t *testing.T, o *outbox.Outbox, topic string, recipients ...string) map[string]outbox.Sent {
	t.Helper()
	ctx := context.Background()
	var mails []outbox.Mail
	for _, to := range recipients {
		text, html, _ := outbox.Body{Lang: "it", Message: "Gentile cliente,\n\necco l'offerta."}.Render()
		mails = append(mails, outbox.Mail{Owner: rep, Topic: topic, Recipient: to, Lang: "it", FromName: "Rita Rep",
			Subject: "Offerta", Text: text, HTML: html})
	}
	if _, err := o.Enqueue(ctx, "portal.example.com", mails); err != nil {
		t.Fatal(err)
	}
	if err := o.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := o.Topic(ctx, topic, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]outbox.Sent{}
	for _, r := range rows {
		if r.Status != outbox.StatusSent {
			t.Fatalf("mail to %s is %s (%s), want sent", r.Recipient, r.Status, r.Error)
		}
		out[r.Recipient] = r
	}
	return out
}

func newPoller(t *testing.T, db *statedb.DB, o *outbox.Outbox, s *inbox.Store, imapURL string, told *[]string) *bounce.Poller {
	t.Helper()
	m, err := bounce.ParseIMAPURL(imapURL)
	if err != nil {
		t.Fatal(err)
	}
	return bounce.New(bounce.Options{DB: db, Outbox: o, Mailbox: m, Every: time.Microsecond,
		OnBounce: func(ctx context.Context, b outbox.Bounced) error {
			*told = append(*told, b.Recipient)
			return s.MailBounced(ctx, nil, b)
		}})
}

// poll runs a poll, due 1 µs after the last (Every): on SQLite, whose clock moves in
// milliseconds, a poll right after another finds it due only once the clock moved on, so a poll
// that did not run is tried again for a moment.
func poll(t *testing.T, p *bounce.Poller) bounce.Result {
	t.Helper()
	for deadline := time.Now().Add(time.Second); ; time.Sleep(2 * time.Millisecond) {
		res, ran, err := p.RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ran {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatal("the poll did not run (not due, or held)")
		}
	}
}

// TestBounceMailboxBouncesExactlyTheOneMailOnceOverPollsAndARestart: the bounce mailbox of a real
// IMAP server holds a real RFC 3464 DSN for one mail the outbox sent, an unrelated mail, a delayed
// (4.4.7) DSN for another, and a DSN for a Message-ID the outbox never wrote. Exactly the one mail
// ends bounced with the status and diagnostic, once: over a second poll, a restart (a new poller)
// and a poll that lost its record of how far it read. The delay is noted, the sender is told once
// in their inbox and by e-mail in their language, the DSN is marked read, the rest left unread.
func TestBounceMailboxBouncesExactlyTheOneMailOnceOverPollsAndARestart(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	smtp, err := outbox.ParseSMTPURL(mp.SMTPURL())
	if err != nil {
		t.Fatal(err)
	}
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		imapd := imaptest.Start(t)
		o := outbox.New(outbox.Options{DB: db, Sender: outbox.SMTPSender{Server: smtp, From: "offers@portal.example.com",
			ReturnPath: "bounces@portal.example.com"}})
		s := inbox.New(inbox.Options{DB: db, Mail: o, I18n: bundle(t), PublicURL: "https://portal.example.com", Domain: "portal.example.com"})
		person := inbox.PersonKey(rep)
		if err := s.SetPreference(ctx, inbox.Person{Key: person, Email: "rita@example.com", Name: "Rita Rep", Lang: "it",
			Delivery: inbox.DeliverEmail}); err != nil {
			t.Fatal(err)
		}
		n := time.Now().UnixNano()
		topic := fmt.Sprintf("quote:%d", n%1_000_000_000)
		gone, slow, fine := fmt.Sprintf("gone-%d@customer.example.org", n), fmt.Sprintf("slow-%d@customer.example.org", n),
			fmt.Sprintf("fine-%d@customer.example.org", n)
		rows := sendOffers(t, o, topic, gone, slow, fine)
		// The envelope sender is the bounce mailbox's address (where the reports go).
		found := false
		for _, m := range mp.Messages(t) {
			if len(m.To) > 0 && m.To[0].Address == gone {
				found = true
				if rp := mp.Headers(t, m.ID)["Return-Path"]; len(rp) == 0 || !strings.Contains(rp[0], "bounces@portal.example.com") {
					t.Fatalf("Return-Path %v, want the bounce address", rp)
				}
			}
		}
		if !found {
			t.Fatal("the mail did not reach the SMTP server")
		}

		imapd.Append(t, imaptest.DSN(rows[gone].MessageID, gone, "failed", "5.1.1", "550 5.1.1 <"+gone+">: Recipient address rejected: User unknown"))
		imapd.Append(t, imaptest.Unrelated("Re: Offerta"))
		imapd.Append(t, imaptest.DSN(rows[slow].MessageID, slow, "delayed", "4.4.7", "451 4.4.7 mailbox temporarily unavailable"))
		imapd.Append(t, imaptest.DSN("<never-written@portal.example.com>", "other@customer.example.org", "failed", "5.1.1", "550 User unknown"))

		var told []string
		p := newPoller(t, db, o, s, imapd.URL(), &told)
		if runs, err := p.Runs(ctx); err != nil || runs != 0 {
			t.Fatalf("runs of a mailbox never polled: %d (%v), want 0", runs, err)
		}
		res := poll(t, p)
		if res.Read != 4 || res.Bounced != 1 || res.Delayed != 1 || res.Unrelated != 1 || res.Unknown != 1 {
			t.Fatalf("first poll %+v, want 4 read: 1 bounced, 1 delayed, 1 unrelated, 1 unknown", res)
		}
		check := func(when string) {
			t.Helper()
			got, err := o.Topic(ctx, topic, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range got {
				switch r.Recipient {
				case gone:
					if r.Status != outbox.StatusBounced || r.DSNStatus != "5.1.1" || !strings.Contains(r.DSNText, "User unknown") || r.DSNAt.IsZero() {
						t.Fatalf("%s: the bounced mail is %s %q %q, want bounced 5.1.1 with the diagnostic", when, r.Status, r.DSNStatus, r.DSNText)
					}
				case slow:
					if r.Status != outbox.StatusSent || r.DSNStatus != "4.4.7" {
						t.Fatalf("%s: the delayed mail is %s %q, want still sent with the delay 4.4.7 noted", when, r.Status, r.DSNStatus)
					}
				case fine:
					if r.Status != outbox.StatusSent || r.DSNStatus != "" {
						t.Fatalf("%s: the other mail is %s %q, want sent without report", when, r.Status, r.DSNStatus)
					}
				}
			}
			items, err := s.List(ctx, person, 50)
			if err != nil {
				t.Fatal(err)
			}
			bounced := 0
			for _, it := range items {
				if it.Kind == inbox.KindMailBounced {
					bounced++
					if it.Params[inbox.ParamRecipient] != gone || !strings.HasPrefix(it.Params[inbox.ParamReason], "5.1.1") {
						t.Fatalf("%s: inbox item %+v, want the bounced recipient and status", when, it.Params)
					}
				}
			}
			if bounced != 1 {
				t.Fatalf("%s: %d bounce items in the sender's inbox, want 1", when, bounced)
			}
			// One e-mail to the sender, in their language (Italian).
			mails, err := o.Topic(ctx, "inbox:"+items[0].ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(mails) != 1 || !strings.Contains(mails[0].Subject, "non ha raggiunto "+gone) {
				t.Fatalf("%s: the sender's mails %+v, want one in Italian naming the recipient", when, mails)
			}
		}
		check("after the first poll")
		// The demo's "Sent mail" page marks the bounced mail, for its sender only.
		ids := []string{rows[gone].MessageID, rows[slow].MessageID, rows[fine].MessageID}
		if marks, err := o.BouncesOf(ctx, rep, ids); err != nil || len(marks) != 1 ||
			!strings.HasPrefix(marks[strings.Trim(rows[gone].MessageID, "<>")], "5.1.1 550 5.1.1") {
			t.Fatalf("BouncesOf = %v, %v; want only the bounced mail with its report", marks, err)
		}
		if marks, err := o.BouncesOf(ctx, "someone-else", ids); err != nil || len(marks) != 0 {
			t.Fatalf("BouncesOf another person = %v, %v; want none", marks, err)
		}
		if !imapd.Seen(t, rows[gone].MessageID) || !imapd.Seen(t, rows[slow].MessageID) {
			t.Fatal("the reports applied are not marked read")
		}
		if imapd.Seen(t, "Re: Offerta") || imapd.Seen(t, "never-written@") {
			t.Fatal("a message that is no report of an outbox mail was marked read")
		}

		if res := poll(t, p); res.Read != 0 {
			t.Fatalf("second poll %+v, want nothing read again", res)
		}
		check("after the second poll")

		// A restart: a new poller (another holder) reads on from the recorded UID.
		p2 := newPoller(t, db, o, s, imapd.URL(), &told)
		if res := poll(t, p2); res.Read != 0 {
			t.Fatalf("poll after a restart %+v, want nothing read again", res)
		}
		// A poll that lost its record (killed between applying and recording) applies the
		// reports again: nothing changes.
		if _, err := db.SQL.ExecContext(ctx, `UPDATE mail_bounce_poll SET last_uid = 0`); err != nil {
			t.Fatal(err)
		}
		if res := poll(t, p2); res.Read != 4 || res.Bounced != 1 {
			t.Fatalf("poll from the start %+v, want the same 4 read and the same mail bounced", res)
		}
		check("after a poll from the start")
		if len(told) != 2 || told[0] != gone || told[1] != gone {
			t.Fatalf("OnBounce told %v, want only %s (each time its report was read)", told, gone)
		}
		if runs, err := p2.Runs(ctx); err != nil || runs != 4 {
			t.Fatalf("runs %d (%v), want 4", runs, err)
		}
	})
}

// TestBounceNonStandardBounceQuotingTheHeadersBouncesItsMail: a qmail-style "failure notice"
// without a delivery-status part, quoting the original Message-ID, bounces its mail.
func TestBounceNonStandardBounceQuotingTheHeadersBouncesItsMail(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	smtp, err := outbox.ParseSMTPURL(mp.SMTPURL())
	if err != nil {
		t.Fatal(err)
	}
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		imapd := imaptest.Start(t)
		o := outbox.New(outbox.Options{DB: db, Sender: outbox.SMTPSender{Server: smtp, From: "offers@portal.example.com"}})
		s := inbox.New(inbox.Options{DB: db, I18n: bundle(t)})
		topic := fmt.Sprintf("quote:%d", time.Now().UnixNano()%1_000_000_000)
		to := fmt.Sprintf("nobody-%d@customer.example.org", time.Now().UnixNano())
		rows := sendOffers(t, o, topic, to)
		imapd.Append(t, imaptest.NonStandardBounce(rows[to].MessageID, to))
		var told []string
		if res := poll(t, newPoller(t, db, o, s, imapd.URL(), &told)); res.Bounced != 1 {
			t.Fatalf("poll %+v, want 1 bounced", res)
		}
		got, _ := o.Topic(context.Background(), topic, 10)
		if len(got) != 1 || got[0].Status != outbox.StatusBounced || got[0].DSNStatus != "5.1.1" {
			t.Fatalf("mail %+v, want bounced 5.1.1", got)
		}
	})
}

// TestBounceMailCopiesInTheBounceMailboxAreIgnored: with the copy check's copies delivered to the
// bounce mailbox (PORTAL_MAIL_COPY_TO its address), a copy of an outbox mail is no report: the
// poll counts it as a copy, not as an unrelated message, leaves it unread, and the mail stays sent.
func TestBounceMailCopiesInTheBounceMailboxAreIgnored(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		imapd := imaptest.Start(t)
		srv := imapd.StartSMTP(t, "bounces@portal.example.com")
		smtp, err := outbox.ParseSMTPURL(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		o := outbox.New(outbox.Options{DB: db, Sender: outbox.SMTPSender{Server: smtp, From: "offers@portal.example.com",
			ReturnPath: "bounces@portal.example.com"}, CopyTo: "bounces@portal.example.com"})
		rows := sendOffers(t, o, "quote:copy", "copied@customer.example.org")
		id := strings.Trim(rows["copied@customer.example.org"].MessageID, "<>")
		if d := srv.Deliveries(id); d["bounces@portal.example.com"] != 1 {
			t.Fatalf("deliveries %v, want the copy in the bounce mailbox", d)
		}
		var told []string
		res := poll(t, newPoller(t, db, o, nil, imapd.URL(), &told))
		if res.Copies != 1 || res.Unrelated != 0 || res.Bounced != 0 || len(told) != 0 {
			t.Fatalf("poll %+v (told %v), want the copy counted as a copy and nothing else", res, told)
		}
		if imapd.Seen(t, id) {
			t.Fatal("the copy was marked read")
		}
		rows = sendOffers(t, o, "quote:copy")
		if rows["copied@customer.example.org"].Status != outbox.StatusSent {
			t.Fatalf("the mail is %s, want sent", rows["copied@customer.example.org"].Status)
		}
	})
}
