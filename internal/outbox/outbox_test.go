package outbox

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/bounce/imaptest"
	"github.com/cpqportal/portal/internal/outbox/mailpittest"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestMain is also the SIGKILL test's child (statedbtest.Crash).
func TestMain(m *testing.M) {
	statedbtest.CrashMain(m, crashChild)
}

func newTestOutbox(t *testing.T, db *statedb.DB, smtpURL string, opts Options) *Outbox {
	t.Helper()
	server, err := ParseSMTPURL(smtpURL)
	if err != nil {
		t.Fatal(err)
	}
	opts.DB, opts.Sender = db, SMTPSender{Server: server, From: "portal@example.com"}
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	return New(opts)
}

func testMail(topic, to string, n int) Mail {
	text, html, _ := Body{Lang: "it", Message: "Gentile cliente,\n\necco l'offerta <" + strconv.Itoa(n) + ">.", LinkText: "Portale",
		LinkURL: "https://portal.example.com/quotes/1", Footer: "CPQ"}.Render()
	return Mail{Owner: "rep-1", Topic: topic, Recipient: to, Lang: "it", FromName: "Rita Rep", ReplyTo: "rita@example.com",
		Subject: "Offerta " + strconv.Itoa(n), Text: text, HTML: html, AttachmentName: "offer.pdf", AttachmentType: "application/pdf",
		Attachment: []byte("%PDF-1.4 test " + strconv.Itoa(n)), Version: "v1"}
}

func statuses(t *testing.T, o *Outbox, topic string) map[string]int {
	t.Helper()
	rows, err := o.Topic(context.Background(), topic, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Status]++
	}
	return out
}

// TestOutboxMailArrivesOnceWithAttachmentAndBothParts: three mails reach a real SMTP server once
// each, with their Message-ID, Reply-To, language, text and escaped HTML parts and attachment;
// a second run sends nothing more.
func TestOutboxMailArrivesOnceWithAttachmentAndBothParts(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		o := newTestOutbox(t, db, mp.SMTPURL(), Options{})
		topic := "quote:" + t.Name()
		var mails []Mail
		for i := range 3 {
			mails = append(mails, testMail(topic, fmt.Sprintf("c%d-%d@example.org", i, time.Now().UnixNano()), i))
		}
		if _, err := o.Enqueue(context.Background(), "portal.example.com", mails); err != nil {
			t.Fatal(err)
		}
		if err := o.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := o.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := statuses(t, o, topic); got[StatusSent] != 3 {
			t.Fatalf("statuses %v, want 3 sent", got)
		}
		rows, _ := o.Topic(context.Background(), topic, 10)
		for _, r := range rows {
			var found []mailpittest.Summary
			for _, s := range mp.Messages(t) {
				if "<"+s.MessageID+">" == r.MessageID {
					found = append(found, s)
				}
			}
			if len(found) != 1 {
				t.Fatalf("mail %s arrived %d times, want once", r.MessageID, len(found))
			}
			m := mp.Message(t, found[0].ID)
			if len(m.To) != 1 || m.To[0].Address != r.Recipient || len(m.ReplyTo) != 1 || m.ReplyTo[0].Address != "rita@example.com" {
				t.Errorf("to %v reply-to %v, want %s and rita@example.com", m.To, m.ReplyTo, r.Recipient)
			}
			if !strings.Contains(m.Text, "ecco l'offerta <") || !strings.Contains(m.HTML, "ecco l&#39;offerta &lt;") ||
				!strings.Contains(m.HTML, `href="https://portal.example.com/quotes/1"`) || !strings.Contains(m.Text, "https://portal.example.com/quotes/1") {
				t.Errorf("bodies do not carry the message (escaped in HTML) and link:\n%s\n%s", m.Text, m.HTML)
			}
			if len(m.Attachments) != 1 || m.Attachments[0].FileName != "offer.pdf" ||
				!bytes.HasPrefix(mp.Part(t, m.ID, m.Attachments[0].PartID), []byte("%PDF-")) {
				t.Errorf("attachments %v, want offer.pdf", m.Attachments)
			}
			if h := mp.Headers(t, m.ID); len(h["Content-Language"]) != 1 || h["Content-Language"][0] != "it" {
				t.Errorf("Content-Language %v, want it", h["Content-Language"])
			}
		}
	})
}

// TestOutboxCrashBetweenRecordAndSendIsNeverResent: a replica that claimed a mail (committed
// "sending") and died before the server answered leaves it; once its lease ends, the mail is
// "unknown" and no replica sends it.
func TestOutboxCrashBetweenRecordAndSendIsNeverResent(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		topic := "quote:" + t.Name()
		dead := newTestOutbox(t, db, mp.SMTPURL(), Options{LeaseTerm: 300 * time.Millisecond, SendTimeout: 200 * time.Millisecond})
		if _, err := dead.Enqueue(context.Background(), "portal.example.com", []Mail{testMail(topic, "crash@example.org", 1)}); err != nil {
			t.Fatal(err)
		}
		ids, err := dead.due(context.Background())
		if err != nil || len(ids) != 1 {
			t.Fatalf("due %v %v", ids, err)
		}
		if _, ok, err := dead.claim(context.Background(), ids[0]); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		// The replica dies here. Another one runs while the lease holds: nothing happens.
		other := newTestOutbox(t, db, mp.SMTPURL(), Options{})
		if err := other.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := statuses(t, other, topic); got[StatusSending] != 1 {
			t.Fatalf("during the lease: %v, want sending", got)
		}
		time.Sleep(400 * time.Millisecond) // past the lease (a fixed term is what is tested)
		for range 2 {
			if err := other.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if got := statuses(t, other, topic); got[StatusUnknown] != 1 {
			t.Fatalf("after the lease: %v, want unknown", got)
		}
		for _, s := range mp.Messages(t) {
			if len(s.To) == 1 && s.To[0].Address == "crash@example.org" && strings.Contains(s.Subject, "Offerta 1") {
				t.Fatal("a mail whose sender died mid-send was sent again")
			}
		}
	})
}

// TestOutboxRefusalIsShownAndNotRetried: a recipient the server refuses (5xx) ends "refused"
// with the server's answer after one attempt; the other recipient of the batch gets the mail.
func TestOutboxRefusalIsShownAndNotRetried(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{AllowedRecipients: `@example\.org$`})
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		o := newTestOutbox(t, db, mp.SMTPURL(), Options{Backoff: time.Millisecond})
		topic := "quote:" + t.Name()
		if _, err := o.Enqueue(context.Background(), "portal.example.com",
			[]Mail{testMail(topic, "nobody@refused.test", 1), testMail(topic, "ok@example.org", 2)}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := o.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		rows, _ := o.Topic(context.Background(), topic, 10)
		for _, r := range rows {
			switch r.Recipient {
			case "nobody@refused.test":
				if r.Status != StatusRefused || r.Attempts != 1 || !strings.Contains(r.Error, "55") {
					t.Errorf("refused recipient: %s after %d attempts, error %q; want refused once with the 5xx answer", r.Status, r.Attempts, r.Error)
				}
			default:
				if r.Status != StatusSent {
					t.Errorf("accepted recipient: %s %q", r.Status, r.Error)
				}
			}
		}
	})
}

// TestOutboxRetriesWithBackoffWhileSMTPIsDown: with no server listening, the worker retries
// with growing delays (the mail stays queued with the failure); once the server is up, the mail
// arrives exactly once.
func TestOutboxRetriesWithBackoffWhileSMTPIsDown(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		port := mailpittest.FreePort(t)
		o := newTestOutbox(t, db, "smtp://127.0.0.1:"+strconv.Itoa(port)+"?starttls=0",
			Options{Backoff: 100 * time.Millisecond, MaxBackoff: 400 * time.Millisecond, MaxAttempts: 50})
		topic := "quote:" + t.Name()
		if _, err := o.Enqueue(context.Background(), "portal.example.com", []Mail{testMail(topic, "later@example.org", 7)}); err != nil {
			t.Fatal(err)
		}
		o.Run()
		defer o.Close()
		var r Sent
		waitFor(t, func() bool {
			rows, _ := o.Topic(context.Background(), topic, 1)
			r = rows[0]
			return r.Attempts >= 3 && r.Status == StatusQueued
		})
		if r.Error == "" || !r.NextAttempt.After(r.CreatedAt) {
			t.Fatalf("a failed attempt left no error or no later attempt: %+v", r)
		}
		if d := o.backoff(1); d != 100*time.Millisecond || o.backoff(3) != 400*time.Millisecond || o.backoff(9) != 400*time.Millisecond {
			t.Fatalf("back-off %v %v %v, want 100ms doubling to at most 400ms", d, o.backoff(3), o.backoff(9))
		}
		mp := mailpittest.Start(t, mailpittest.Options{SMTPPort: port})
		waitFor(t, func() bool { return statuses(t, o, topic)[StatusSent] == 1 })
		time.Sleep(300 * time.Millisecond) // a further scan would show a second delivery
		if got := len(mp.Messages(t)); got != 1 {
			t.Fatalf("%d deliveries, want exactly 1", got)
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// crashChild runs an outbox against the SMTP server args[0] until no mail is queued or sending.
func crashChild(db *statedb.DB, args []string) error {
	server, err := ParseSMTPURL(args[0])
	if err != nil {
		return err
	}
	o := New(Options{DB: db, Sender: SMTPSender{Server: server, From: "portal@example.com"}, PollInterval: 20 * time.Millisecond,
		LeaseTerm: 300 * time.Millisecond, SendTimeout: 200 * time.Millisecond})
	o.Run()
	defer o.Close()
	return statedbtest.PollUntil(func() (bool, error) {
		var n int
		err := db.SQL.QueryRow(`SELECT COUNT(*) FROM mail_outbox WHERE status IN ('queued', 'sending')`).Scan(&n)
		return n == 0, err
	})
}

// TestOutboxSIGKILLNeverSendsAMailTwice kills the process sending 200 mails with SIGKILL at random
// moments, on each engine, without the copy check (the outbox alone is at most once): no mail
// arrives twice, every mail recorded "sent" arrived, and at most one mail per kill (the one in
// flight) is left "unknown"; every other mail is sent. The SMTP server is a real one in the test's
// process (go-smtp, imaptest.SMTP) that counts each delivery; mailcopy's SIGKILL test is the same
// with the copy check, exactly once.
func TestOutboxSIGKILLNeverSendsAMailTwice(t *testing.T) {
	srv := imaptest.Start(t).StartSMTP(t, "")
	statedbtest.EachEngine(t, func(t *testing.T, engine statedb.Engine) {
		where := statedbtest.Shared(t, engine)
		db := statedbtest.OpenShared(t, where)
		o := New(Options{DB: db, Sender: SMTPSender{}})
		topic := "crash:" + t.Name() + strconv.FormatInt(time.Now().UnixNano(), 10)
		const total = 200
		var mails []Mail
		for i := range total {
			m := testMail(topic, fmt.Sprintf("k%d@example.org", i), i)
			m.Attachment = nil
			m.AttachmentName = ""
			mails = append(mails, m)
		}
		if _, err := o.Enqueue(context.Background(), "crash.example.com", mails); err != nil {
			t.Fatal(err)
		}
		rows, _ := o.Topic(context.Background(), topic, total)
		ours := map[string]bool{}
		for _, r := range rows {
			ours[strings.Trim(r.MessageID, "<>")] = true
		}
		arrived := func() map[string]int {
			got := map[string]int{}
			for id, to := range srv.Delivered() {
				if ours[id] {
					for _, n := range to {
						got[id] += n
					}
				}
			}
			return got
		}
		kills := statedbtest.Crash(t, where, []string{srv.URL()}, total, func() int { return len(arrived()) })
		got := arrived()
		rows, _ = o.Topic(context.Background(), topic, total)
		unknown := 0
		for _, r := range rows {
			id := strings.Trim(r.MessageID, "<>")
			if got[id] > 1 {
				t.Errorf("mail to %s arrived %d times", r.Recipient, got[id])
			}
			switch r.Status {
			case StatusSent:
				if got[id] != 1 {
					t.Errorf("mail to %s recorded sent but arrived %d times", r.Recipient, got[id])
				}
			case StatusUnknown:
				unknown++
			default:
				t.Errorf("mail to %s ended %s (%s)", r.Recipient, r.Status, r.Error)
			}
		}
		if unknown > kills {
			t.Errorf("%d mails unknown after %d kills; at most one in flight per kill", unknown, kills)
		}
		t.Logf("%d kills, %d unknown, %d arrived", kills, unknown, len(got))
	})
}

// TestOutboxRetentionDeletesOnlyEndedMailsPastIt: Purge deletes the mails that ended (sent,
// refused, failed, unknown) longer ago than the retention, more than one batch of them, and keeps
// newer ones and every mail still queued or sending, however old.
func TestOutboxRetentionDeletesOnlyEndedMailsPastIt(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		o := newTestOutbox(t, db, "smtp://127.0.0.1:1", Options{Retention: 365 * 24 * time.Hour})
		topic := "quote:" + t.Name()
		old := statedb.Micros(time.Now().Add(-400 * 24 * time.Hour))
		recent := statedb.Micros(time.Now().Add(-24 * time.Hour))
		mails := make([]Mail, purgeBatch+7)
		for i := range mails {
			mails[i] = testMail(topic, "r"+strconv.Itoa(i)+"@example.org", i)
		}
		if _, err := o.Enqueue(ctx, "portal.example.com", mails); err != nil {
			t.Fatal(err)
		}
		// Every mail old and sent, then: one of each other ended status old, one sent recently,
		// one queued and one sending old.
		if _, err := db.SQL.ExecContext(ctx, `UPDATE mail_outbox SET status = $1, updated_at = $2`, StatusSent, old); err != nil {
			t.Fatal(err)
		}
		set := func(recipient, status string, at int64) {
			t.Helper()
			if _, err := db.SQL.ExecContext(ctx, `UPDATE mail_outbox SET status = $1, updated_at = $2 WHERE recipient = $3`, status, at, recipient); err != nil {
				t.Fatal(err)
			}
		}
		set("r0@example.org", StatusRefused, old)
		set("r1@example.org", StatusFailed, old)
		set("r2@example.org", StatusUnknown, old)
		set("r3@example.org", StatusSent, recent)
		set("r4@example.org", StatusQueued, old)
		set("r5@example.org", StatusSending, old)
		n, err := o.Purge(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := len(mails) - 3; n != want {
			t.Fatalf("purged %d mails, want %d", n, want)
		}
		rows, err := db.SQL.QueryContext(ctx, `SELECT recipient FROM mail_outbox ORDER BY recipient`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var left []string
		for rows.Next() {
			var r string
			if err := rows.Scan(&r); err != nil {
				t.Fatal(err)
			}
			left = append(left, r)
		}
		if strings.Join(left, " ") != "r3@example.org r4@example.org r5@example.org" {
			t.Fatalf("left %v, want the recent sent, the queued and the sending mails", left)
		}
		if n, err := o.Purge(ctx); n != 0 || err != nil {
			t.Fatalf("a second purge deleted %d (%v)", n, err)
		}
		if n, err := New(Options{DB: db}).Purge(ctx); n != 0 || err != nil {
			t.Fatalf("without a retention, a purge deleted %d (%v)", n, err)
		}
	})
}
