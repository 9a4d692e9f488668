package mailcopy

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/bounce"
	"github.com/cpqportal/portal/internal/bounce/imaptest"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// The copy address, and the Message-IDs' domain.
const (
	copyTo = "copies@portal.test"
	domain = "portal.example.com"
)

// TestMain is also the SIGKILL test's child (statedbtest.Crash).
func TestMain(m *testing.M) {
	statedbtest.CrashMain(m, crashChild)
}

func newOutbox(t testing.TB, db *statedb.DB, smtpURL string) *outbox.Outbox {
	t.Helper()
	server, err := outbox.ParseSMTPURL(smtpURL)
	if err != nil {
		t.Fatal(err)
	}
	return outbox.New(outbox.Options{DB: db, Sender: outbox.SMTPSender{Server: server, From: "portal@example.com"}, CopyTo: copyTo,
		PollInterval: 20 * time.Millisecond})
}

func newChecker(t testing.TB, db *statedb.DB, o *outbox.Outbox, imapURL string, grace time.Duration) *Checker {
	t.Helper()
	box, err := bounce.ParseIMAPURL(imapURL)
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{DB: db, Outbox: o, Mailbox: box, CopyTo: copyTo, Domain: domain, Grace: grace, Timeout: 5 * time.Second})
}

func testMail(topic, to string, n int) outbox.Mail {
	return outbox.Mail{Owner: "rep-1", Topic: topic, Recipient: to, Lang: "en", Subject: "Offer " + strconv.Itoa(n),
		Text: "Dear customer, offer " + strconv.Itoa(n), AttachmentName: "offer.pdf", AttachmentType: "application/pdf",
		Attachment: []byte("%PDF-1.4 offer " + strconv.Itoa(n))}
}

// one is the topic's only mail.
func one(t testing.TB, o *outbox.Outbox, topic string) outbox.Sent {
	t.Helper()
	rows, err := o.Topic(context.Background(), topic, 10)
	if err != nil || len(rows) != 1 {
		t.Fatalf("topic %s: %d mails (%v), want 1", topic, len(rows), err)
	}
	return rows[0]
}

// inDoubt makes mail id unknown as a replica that vanished mid-send leaves it (its attempt
// carried the copy), unknown for age already.
func inDoubt(t testing.TB, db *statedb.DB, id string, age time.Duration) {
	t.Helper()
	_, err := db.SQL.Exec(`UPDATE mail_outbox SET status = $1, copy_to = $2, attempts = attempts + 1, lease_holder = '', lease_expires = 0,
		updated_at = $3 WHERE id = $4`, outbox.StatusUnknown, copyTo, statedb.Micros(time.Now().Add(-age)), id)
	if err != nil {
		t.Fatal(err)
	}
}

func check(t testing.TB, c *Checker) Result {
	t.Helper()
	res, err := c.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func runOnce(t testing.TB, o *outbox.Outbox) {
	t.Helper()
	if err := o.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// copies is how many messages of the mailbox hold text.
func copies(t testing.TB, box *imaptest.Server, text string) int {
	t.Helper()
	n := 0
	for _, m := range box.Messages(t) {
		if bytes.Contains(m.Raw, []byte(text)) {
			n++
		}
	}
	return n
}

// TestMailCopyCheckConfirmsAMailWhoseCopyArrived: a mail the server took (its copy in the mailbox)
// whose answer was lost (unknown) becomes sent, "confirmed", when its copy arrived; it is not sent
// again, and the copy leaves the mailbox. A copy of a mail still being sent stays for later.
func TestMailCopyCheckConfirmsAMailWhoseCopyArrived(t *testing.T) {
	box := imaptest.Start(t)
	srv := box.StartSMTP(t, copyTo)
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		o := newOutbox(t, db, srv.URL())
		c := newChecker(t, db, o, box.URL(), time.Minute)
		topic := "quote:" + t.Name()
		if _, err := o.Enqueue(context.Background(), domain, []outbox.Mail{testMail(topic, "taken@example.org", 1)}); err != nil {
			t.Fatal(err)
		}
		runOnce(t, o)
		m := one(t, o, topic)
		if d := srv.Deliveries(m.MessageID); d["taken@example.org"] != 1 || d[copyTo] != 1 {
			t.Fatalf("deliveries %v, want the recipient and the copy once", d)
		}
		// The holder died after the server's 250, before it recorded it; the mail stays in doubt
		// for less than the grace period: a copy decides at once.
		inDoubt(t, db, m.ID, time.Second)
		// Messages that are no copy of an outbox mail: another system's, and one of the portal's
		// domain the outbox does not hold (past the retention).
		other := "other-" + strings.ReplaceAll(t.Name(), "/", "-") + "@elsewhere.example"
		gone := "gone-" + strings.ReplaceAll(t.Name(), "/", "-") + "@" + domain
		for _, id := range []string{other, gone} {
			box.Append(t, []byte("Message-ID: <"+id+">\r\nFrom: someone@example.org\r\nSubject: Hello\r\n\r\nHello\r\n"))
		}
		before := time.Now()
		res := check(t, c)
		m = one(t, o, topic)
		if m.Status != outbox.StatusSent || m.Recovery != outbox.RecoveryConfirmed || m.SentAt.After(before) || m.SentAt.IsZero() {
			t.Fatalf("after the check: %s/%s sent at %v, want sent, confirmed, at the copy's arrival", m.Status, m.Recovery, m.SentAt)
		}
		if res.Confirmed != 1 || res.Resent != 0 || res.Deleted != 1 {
			t.Fatalf("check %+v, want 1 confirmed and its copy deleted", res)
		}
		if n := copies(t, box, strings.Trim(m.MessageID, "<>")); n != 0 {
			t.Fatalf("%d copies left in the mailbox", n)
		}
		runOnce(t, o)
		check(t, c)
		if d := srv.Deliveries(m.MessageID); d["taken@example.org"] != 1 {
			t.Fatalf("deliveries %v, want the recipient once", d)
		}
		// A copy of a mail still sending stays; once it is sent, the copy is deleted.
		if _, err := o.Enqueue(context.Background(), domain, []outbox.Mail{testMail(topic+"-2", "pending@example.org", 2)}); err != nil {
			t.Fatal(err)
		}
		runOnce(t, o)
		m2 := one(t, o, topic+"-2")
		if _, err := db.SQL.Exec(`UPDATE mail_outbox SET status = $1 WHERE id = $2`, outbox.StatusSending, m2.ID); err != nil {
			t.Fatal(err)
		}
		if res := check(t, c); res.Pending != 1 || copies(t, box, strings.Trim(m2.MessageID, "<>")) != 1 {
			t.Fatalf("check %+v: a copy of a mail still sending must stay", res)
		}
		if _, err := db.SQL.Exec(`UPDATE mail_outbox SET status = $1 WHERE id = $2`, outbox.StatusSent, m2.ID); err != nil {
			t.Fatal(err)
		}
		if res := check(t, c); res.Deleted != 1 || copies(t, box, strings.Trim(m2.MessageID, "<>")) != 0 {
			t.Fatalf("check %+v: the copy of a sent mail must leave the mailbox", res)
		}
		if copies(t, box, other) != 1 || copies(t, box, gone) != 1 {
			t.Fatal("a message that is no copy of an outbox mail was deleted")
		}
	})
}

// TestMailCopyCheckResendsOnceAMailWithoutCopyPastTheGrace: a mail in doubt whose copy never came
// (the server did not take it) stays unknown within the grace period, is queued again once past
// it (two checks queue it once), keeps its attachment, and reaches its recipient exactly once
// with its own Message-ID; its copy then leaves the mailbox.
func TestMailCopyCheckResendsOnceAMailWithoutCopyPastTheGrace(t *testing.T) {
	box := imaptest.Start(t)
	srv := box.StartSMTP(t, copyTo)
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		o := newOutbox(t, db, srv.URL())
		c := newChecker(t, db, o, box.URL(), time.Minute)
		topic := "quote:" + t.Name()
		if _, err := o.Enqueue(context.Background(), domain, []outbox.Mail{testMail(topic, "lost@example.org", 3)}); err != nil {
			t.Fatal(err)
		}
		m := one(t, o, topic)
		inDoubt(t, db, m.ID, 30*time.Second) // claimed, then the process died before the end of DATA
		if res := check(t, c); res.Resent != 0 || one(t, o, topic).Status != outbox.StatusUnknown {
			t.Fatalf("within the grace period: %+v, %s; want still unknown", res, one(t, o, topic).Status)
		}
		inDoubt(t, db, m.ID, 2*time.Minute)
		if res := check(t, c); res.Resent != 1 {
			t.Fatalf("past the grace period: %+v, want 1 resent", res)
		}
		if res := check(t, c); res.Resent != 0 {
			t.Fatalf("a second check: %+v, want nothing more queued", res)
		}
		if m := one(t, o, topic); m.Status != outbox.StatusQueued || m.Recovery != outbox.RecoveryResent {
			t.Fatalf("after the check: %s/%s, want queued, resent", m.Status, m.Recovery)
		}
		runOnce(t, o)
		runOnce(t, o)
		got := one(t, o, topic)
		if got.Status != outbox.StatusSent || got.Recovery != outbox.RecoveryResent || got.MessageID != m.MessageID {
			t.Fatalf("after the worker: %s/%s %s, want sent, resent, Message-ID %s", got.Status, got.Recovery, got.MessageID, m.MessageID)
		}
		if d := srv.Deliveries(m.MessageID); d["lost@example.org"] != 1 || d[copyTo] != 1 {
			t.Fatalf("deliveries %v, want the recipient and the copy once", d)
		}
		if copies(t, box, "offer.pdf") == 0 {
			t.Fatal("the mail sent again lost its attachment")
		}
		check(t, c)
		if n := copies(t, box, strings.Trim(m.MessageID, "<>")); n != 0 {
			t.Fatalf("%d copies left", n)
		}
	})
}

// TestMailCopyCheckLateCopyAfterRequeueIsNotSentAgain: a mail queued again for want of a copy,
// whose copy then arrives late (the server had taken it after all) before a worker claims it, is
// sent ("confirmed") and never sent a second time.
func TestMailCopyCheckLateCopyAfterRequeueIsNotSentAgain(t *testing.T) {
	box := imaptest.Start(t)
	srv := box.StartSMTP(t, copyTo)
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		o := newOutbox(t, db, srv.URL())
		c := newChecker(t, db, o, box.URL(), time.Minute)
		topic := "quote:" + t.Name()
		if _, err := o.Enqueue(context.Background(), domain, []outbox.Mail{testMail(topic, "late@example.org", 4)}); err != nil {
			t.Fatal(err)
		}
		m := one(t, o, topic)
		inDoubt(t, db, m.ID, 2*time.Minute)
		if res := check(t, c); res.Resent != 1 {
			t.Fatalf("check %+v, want 1 resent", res)
		}
		// The copy of the first attempt arrives now (a slow local delivery).
		box.Append(t, []byte("Message-ID: "+m.MessageID+"\r\nFrom: portal@example.com\r\nTo: late@example.org\r\nSubject: Offer 4\r\n\r\nDear customer\r\n"))
		if res := check(t, c); res.Confirmed != 1 || res.Deleted != 1 {
			t.Fatalf("check %+v, want the late copy to confirm the mail", res)
		}
		runOnce(t, o)
		if got := one(t, o, topic); got.Status != outbox.StatusSent || got.Recovery != outbox.RecoveryConfirmed {
			t.Fatalf("%s/%s, want sent, confirmed", got.Status, got.Recovery)
		}
		if d := srv.Deliveries(m.MessageID); len(d) != 0 {
			t.Fatalf("sent again: %v", d)
		}
	})
}

// TestMailCopyCheckTwoReplicasOneChecks: two replicas' checks at once: one runs (the lease), and
// the mail in doubt is queued again once.
func TestMailCopyCheckTwoReplicasOneChecks(t *testing.T) {
	box := imaptest.Start(t)
	srv := box.StartSMTP(t, copyTo)
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		o := newOutbox(t, db, srv.URL())
		topic := "quote:" + t.Name()
		if _, err := o.Enqueue(context.Background(), domain, []outbox.Mail{testMail(topic, "two@example.org", 5)}); err != nil {
			t.Fatal(err)
		}
		inDoubt(t, db, one(t, o, topic).ID, 2*time.Minute)
		checkers := []*Checker{newChecker(t, db, o, box.URL(), time.Minute), newChecker(t, db, o, box.URL(), time.Minute)}
		for _, c := range checkers {
			c.opts.Every = time.Hour
		}
		var wg sync.WaitGroup
		results := make([]Result, 2)
		ran := make([]bool, 2)
		for i, c := range checkers {
			wg.Go(func() {
				var err error
				results[i], ran[i], err = c.RunDue(context.Background())
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if ran[0] == ran[1] {
			t.Fatalf("ran %v, want exactly one replica to check", ran)
		}
		if results[0].Resent+results[1].Resent != 1 {
			t.Fatalf("results %+v, want the mail queued again once", results)
		}
		for _, c := range checkers {
			if _, again, err := c.RunDue(context.Background()); again || err != nil {
				t.Fatalf("a check ran again before it was due (%v)", err)
			}
		}
	})
}

// TestMailCopyCheckDatabaseStoppedMidCheckSendsNoMailTwice: the database stops after the mailbox
// was searched: the check fails, deletes no copy and queues nothing; once the database is back,
// the mail the server had taken is confirmed, and the one it had not is sent once.
func TestMailCopyCheckDatabaseStoppedMidCheckSendsNoMailTwice(t *testing.T) {
	box := imaptest.Start(t)
	srv := box.StartSMTP(t, copyTo)
	statedbtest.EachOutage(t, statedbtest.Runs{Full: 1, Short: 1}, statedbtest.Runs{Full: 1, Short: 1}, func(t *testing.T, db *statedb.DB, down, up func()) {
		o := newOutbox(t, db, srv.URL())
		c := newChecker(t, db, o, box.URL(), time.Minute)
		c.opts.Timeout = time.Second
		topic := "quote:" + strings.ReplaceAll(t.Name(), "/", "-")
		taken, lost := "taken-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"@example.org", "lost-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"@example.org"
		if _, err := o.Enqueue(context.Background(), domain, []outbox.Mail{testMail(topic, taken, 6)}); err != nil {
			t.Fatal(err)
		}
		runOnce(t, o)
		mTaken := one(t, o, topic)
		inDoubt(t, db, mTaken.ID, 2*time.Minute)
		if _, err := o.Enqueue(context.Background(), domain, []outbox.Mail{testMail(topic+"-lost", lost, 7)}); err != nil {
			t.Fatal(err)
		}
		mLost := one(t, o, topic+"-lost")
		inDoubt(t, db, mLost.ID, 2*time.Minute)

		c.afterSearch = down
		if _, err := c.Check(context.Background()); err == nil {
			t.Fatal("a check whose database stopped succeeded")
		}
		c.afterSearch = nil
		up()
		if n := copies(t, box, strings.Trim(mTaken.MessageID, "<>")); n != 1 {
			t.Fatalf("%d copies of the taken mail left, want 1 (nothing deleted before its row says sent)", n)
		}
		if got := one(t, o, topic); got.Status != outbox.StatusUnknown {
			t.Fatalf("the taken mail is %s after the failed check, want still unknown", got.Status)
		}
		check(t, c)
		runOnce(t, o)
		check(t, c)
		if got := one(t, o, topic); got.Status != outbox.StatusSent || got.Recovery != outbox.RecoveryConfirmed {
			t.Fatalf("taken mail: %s/%s, want sent, confirmed", got.Status, got.Recovery)
		}
		if got := one(t, o, topic+"-lost"); got.Status != outbox.StatusSent || got.Recovery != outbox.RecoveryResent {
			t.Fatalf("lost mail: %s/%s, want sent, resent", got.Status, got.Recovery)
		}
		if d := srv.Deliveries(mTaken.MessageID); d[taken] != 1 {
			t.Fatalf("taken mail deliveries %v, want once", d)
		}
		if d := srv.Deliveries(mLost.MessageID); d[lost] != 1 {
			t.Fatalf("lost mail deliveries %v, want once", d)
		}
	})
}

// crashChild runs an outbox with the copy and a copy check (args: the SMTP URL, the copy
// mailbox's IMAP URL) until no mail is queued, sending or unknown.
func crashChild(db *statedb.DB, args []string) error {
	server, err := outbox.ParseSMTPURL(args[0])
	if err != nil {
		return err
	}
	box, err := bounce.ParseIMAPURL(args[1])
	if err != nil {
		return err
	}
	o := outbox.New(outbox.Options{DB: db, Sender: outbox.SMTPSender{Server: server, From: "portal@example.com"}, CopyTo: copyTo,
		PollInterval: 20 * time.Millisecond, LeaseTerm: 300 * time.Millisecond, SendTimeout: 200 * time.Millisecond})
	o.Run()
	defer o.Close()
	c := New(Options{DB: db, Outbox: o, Mailbox: box, CopyTo: copyTo, Domain: "crash.example.com", Grace: 200 * time.Millisecond,
		Every: 50 * time.Millisecond, Timeout: 3 * time.Second, LeaseTerm: time.Second})
	c.Run()
	defer c.Close()
	return statedbtest.PollUntil(func() (bool, error) {
		var n int
		err := db.SQL.QueryRow(`SELECT COUNT(*) FROM mail_outbox WHERE status IN ('queued', 'sending', 'unknown')`).Scan(&n)
		return n == 0, err
	})
}

// TestMailSIGKILLWithCopyCheckSendsEachMailExactlyOnce kills the processes sending 200 mails (an
// outbox with the copy and a copy check each) with SIGKILL at random moments, on each engine,
// against a real SMTP server that delivers the copies into a real IMAP mailbox: every mail reaches
// its recipient exactly once (none lost, none twice) and ends sent; the mails in doubt at the
// kills were resolved by their copies; no copy is left in the mailbox.
func TestMailSIGKILLWithCopyCheckSendsEachMailExactlyOnce(t *testing.T) {
	box := imaptest.Start(t)
	srv := box.StartSMTP(t, copyTo)
	statedbtest.EachEngine(t, func(t *testing.T, engine statedb.Engine) {
		where := statedbtest.Shared(t, engine)
		db := statedbtest.OpenShared(t, where)
		o := outbox.New(outbox.Options{DB: db, Sender: outbox.SMTPSender{}, CopyTo: copyTo})
		topic := "crash:" + t.Name() + strconv.FormatInt(time.Now().UnixNano(), 10)
		const total = 200
		mails := make([]outbox.Mail, total)
		for i := range mails {
			mails[i] = testMail(topic, fmt.Sprintf("k%d@example.org", i), i)
			mails[i].Attachment, mails[i].AttachmentName = nil, ""
		}
		if _, err := o.Enqueue(context.Background(), "crash.example.com", mails); err != nil {
			t.Fatal(err)
		}
		rows, _ := o.Topic(context.Background(), topic, total)
		ours := map[string]string{} // Message-ID -> recipient
		for _, r := range rows {
			ours[strings.Trim(r.MessageID, "<>")] = r.Recipient
		}
		arrived := func() int {
			n := 0
			for id := range srv.Delivered() {
				if ours[id] != "" {
					n++
				}
			}
			return n
		}
		kills := statedbtest.Crash(t, where, []string{srv.URL(), box.URL()}, total, arrived)
		got := srv.Delivered()
		rows, _ = o.Topic(context.Background(), topic, total)
		recovered := map[string]int{}
		for _, r := range rows {
			id := strings.Trim(r.MessageID, "<>")
			if n := got[id][r.Recipient]; n != 1 {
				t.Errorf("mail to %s arrived %d times, want exactly once (%s/%s)", r.Recipient, n, r.Status, r.Recovery)
			}
			if n := got[id][copyTo]; n != 1 {
				t.Errorf("the copy of the mail to %s arrived %d times, want once", r.Recipient, n)
			}
			if r.Status != outbox.StatusSent {
				t.Errorf("mail to %s ended %s (%s)", r.Recipient, r.Status, r.Error)
			}
			recovered[r.Recovery]++
		}
		if len(rows) != total {
			t.Fatalf("%d mails, want %d", len(rows), total)
		}
		if n := recovered[outbox.RecoveryConfirmed] + recovered[outbox.RecoveryResent]; n > kills {
			t.Errorf("%d mails in doubt after %d kills; at most one in flight per kill", n, kills)
		}
		// The last runner may end before its check deleted the last copies: one more check.
		c := newChecker(t, db, o, box.URL(), time.Minute)
		c.opts.Domain = "crash.example.com"
		check(t, c)
		left := 0
		for _, m := range box.Messages(t) {
			for id := range ours {
				if bytes.Contains(m.Raw, []byte(id)) {
					left++
				}
			}
		}
		if left != 0 {
			t.Errorf("%d copies left in the mailbox", left)
		}
		t.Logf("%d kills; in doubt: %d confirmed by their copy, %d sent again", kills, recovered[outbox.RecoveryConfirmed], recovered[outbox.RecoveryResent])
	})
}
