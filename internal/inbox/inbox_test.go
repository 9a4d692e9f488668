package inbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/handover"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// nopSender takes every mail (the tests read the outbox's rows; nothing is sent).
type nopSender struct{}

func (nopSender) Send(context.Context, outbox.Message) error { return nil }

func bundle(t *testing.T) *i18n.Bundle {
	t.Helper()
	b, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newStore(t *testing.T, db *statedb.DB, mail *outbox.Outbox) *inbox.Store {
	return inbox.New(inbox.Options{DB: db, Mail: mail, I18n: bundle(t), PublicURL: "https://portal.example.com", Domain: "portal.example.com"})
}

func unread(t *testing.T, s *inbox.Store, person string) int {
	t.Helper()
	n, err := s.Unread(context.Background(), person)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mails(t *testing.T, db *statedb.DB) []outbox.Message {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT recipient, lang, subject, text_body, html_body, topic FROM mail_outbox ORDER BY created_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []outbox.Message
	for rows.Next() {
		var m outbox.Message
		if err := rows.Scan(&m.Recipient, &m.Lang, &m.Subject, &m.Text, &m.HTML, &m.Topic); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestInboxDeliverOnceCountAndMarkRead: the same event delivered twice is one item; the count
// follows delivery and reading; nobody marks another person's item; mark all read empties it.
func TestInboxDeliverOnceCountAndMarkRead(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		s := newStore(t, db, nil)
		at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
		it := inbox.SignatureAnswered("sub-sales", 42, "C-42", "Rossi S.p.A.", "declined", "price too high", at)
		for range 2 {
			if err := s.Deliver(ctx, it); err != nil {
				t.Fatal(err)
			}
		}
		sales := inbox.PersonKey("sub-sales")
		if n := unread(t, s, sales); n != 1 {
			t.Fatalf("unread %d after the same event twice, want 1", n)
		}
		if err := s.Deliver(ctx, inbox.SignatureAnswered("sub-sales", 43, "C-43", "Bianchi", "signed", "", at)); err != nil {
			t.Fatal(err)
		}
		items, err := s.List(ctx, sales, 10)
		if err != nil || len(items) != 2 {
			t.Fatalf("list: %d items, %v", len(items), err)
		}
		en := bundle(t).Translator(i18n.Source)
		var texts []string
		for _, it := range items {
			texts = append(texts, inbox.Text(en, it))
		}
		if !strings.Contains(strings.Join(texts, "|"), "Contract C-42 for Rossi S.p.A. was declined: price too high") ||
			!strings.Contains(strings.Join(texts, "|"), "Contract C-43 for Bianchi was signed.") {
			t.Errorf("texts %q", texts)
		}
		if items[0].Link != "/contracts/42" && items[1].Link != "/contracts/42" {
			t.Errorf("links %q %q", items[0].Link, items[1].Link)
		}
		if _, err := s.MarkRead(ctx, inbox.PersonKey("sub-other"), items[0].ID); !errors.Is(err, inbox.ErrNotFound) {
			t.Fatalf("another person marked the item: %v", err)
		}
		for range 2 {
			if _, err := s.MarkRead(ctx, sales, items[0].ID); err != nil {
				t.Fatal(err)
			}
		}
		if n := unread(t, s, sales); n != 1 {
			t.Fatalf("unread %d after one read (twice), want 1", n)
		}
		if err := s.MarkAllRead(ctx, sales); err != nil {
			t.Fatal(err)
		}
		if n := unread(t, s, sales); n != 0 {
			t.Fatalf("unread %d after mark all read", n)
		}
		if err := s.Deliver(ctx, inbox.Item{Subject: "x", Dedupe: "d", Kind: inbox.KindSigned, Link: "//evil.example"}); err == nil {
			t.Fatal("a link to another site was taken")
		}
	})
}

// TestInboxMailPreferenceWritesOneMailPerItem: with "email", each new item writes one mail in the
// person's language with the portal's link, in the item's transaction; a repeat writes none. With
// "digest", the digest writes one mail for the waiting items, and a second digest none.
func TestInboxMailPreferenceWritesOneMailPerItem(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		mail := outbox.New(outbox.Options{DB: db, Sender: nopSender{}})
		s := newStore(t, db, mail)
		rep := inbox.Person{Key: inbox.PersonKey("sub-it"), Email: "Rep@Example.com", Name: "Rep", Lang: "it", Delivery: inbox.DeliverEmail}
		if err := s.SetPreference(ctx, rep); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
		for range 2 {
			if err := s.Deliver(ctx, inbox.SignatureAnswered("sub-it", 7, "C-7", "Verdi", "declined", "", at)); err != nil {
				t.Fatal(err)
			}
		}
		got := mails(t, db)
		if len(got) != 1 {
			t.Fatalf("%d mails, want 1", len(got))
		}
		m := got[0]
		if m.Recipient != "rep@example.com" || m.Lang != "it" || !strings.Contains(m.Subject, "Il contratto C-7 per Verdi è stato rifiutato") ||
			!strings.Contains(m.Text, "https://portal.example.com/contracts/7") || !strings.Contains(m.HTML, `href="https://portal.example.com/contracts/7"`) {
			t.Errorf("mail %+v", m)
		}

		rep.Delivery = inbox.DeliverDigest
		if err := s.SetPreference(ctx, rep); err != nil {
			t.Fatal(err)
		}
		for _, id := range []int32{8, 9} {
			if err := s.Deliver(ctx, inbox.SignatureAnswered("sub-it", id, "C", "<b>Verdi</b>", "signed", "", at)); err != nil {
				t.Fatal(err)
			}
		}
		if len(mails(t, db)) != 1 {
			t.Fatal("a digest item was mailed at once")
		}
		for want, round := range []int{1, 0} {
			n, err := s.Digest(ctx)
			if err != nil || n != round {
				t.Fatalf("digest %d wrote %d mails (%v), want %d", want, n, err, round)
			}
		}
		got = mails(t, db)
		if len(got) != 2 || !strings.Contains(got[1].Text, "2") || strings.Contains(got[1].HTML, "<b>Verdi") {
			t.Fatalf("digest %+v", got[len(got)-1])
		}
	})
}

// TestInboxJobItem: a job that finished tells its owner, one with failed lines says it failed, a
// cancelled one tells nothing.
func TestInboxJobItem(t *testing.T) {
	end := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	j := &jobs.Job{ID: "0123456789abcdef0123456789abcdef", Kind: jobs.KindCustomerImport, Owner: "sub-bo", Status: jobs.StatusFinished, EndedAt: end,
		Items: []jobs.Item{{Status: jobs.ItemDone}, {Status: jobs.ItemDone}}}
	it, ok := inbox.JobItem(j)
	if !ok || it.Kind != inbox.KindImportFinished || it.Params[inbox.ParamDone] != "2" || it.Link != "/customers/import-runs/"+j.ID {
		t.Fatalf("finished import: %+v %v", it, ok)
	}
	j.Items = append(j.Items, jobs.Item{Status: jobs.ItemFailed})
	if it, _ := inbox.JobItem(j); it.Kind != inbox.KindImportFailed || it.Params[inbox.ParamFailed] != "1" {
		t.Fatalf("failed import: %+v", it)
	}
	j.Status = jobs.StatusCancelled
	if _, ok := inbox.JobItem(j); ok {
		t.Fatal("a cancelled job told its owner")
	}
}

// contract writes a contract into the work index as seen at when (its stage since then).
func contract(t *testing.T, db *statedb.DB, when time.Time, viewer string, id int32, status string, signatures ...string) {
	t.Helper()
	ix := workindex.New(db, workindex.Options{Now: func() time.Time { return when }})
	err := ix.ObserveContract(context.Background(), workindex.Viewer{Subject: viewer, Name: viewer},
		workindex.ContractSighting{ContractID: id, Number: "C-" + string(rune('0'+id%10)), QuoteID: int64(id) * 10, CPQID: 1, CustomerID: 5,
			Customer: "Rossi", Facts: workindex.ContractFacts{Status: status, SignatureStatuses: signatures}}, workindex.ActCreated)
	if err != nil {
		t.Fatal(err)
	}
}

// opened records that viewer's token read contract id as contract wrote it (the same facts).
func opened(t *testing.T, db *statedb.DB, viewer string, id int32, status string, signatures ...string) {
	t.Helper()
	ix := workindex.New(db, workindex.Options{})
	err := ix.ObserveContract(context.Background(), workindex.Viewer{Subject: viewer, Name: viewer},
		workindex.ContractSighting{ContractID: id, Number: "C-" + string(rune('0'+id%10)), QuoteID: int64(id) * 10, CPQID: 1, CustomerID: 5,
			Customer: "Rossi", Facts: workindex.ContractFacts{Status: status, SignatureStatuses: signatures}}, workindex.ActOpened)
	if err != nil {
		t.Fatal(err)
	}
}

// openedQuote records that viewer's token read quote id.
func openedQuote(t *testing.T, db *statedb.DB, viewer string, id int64) {
	t.Helper()
	ix := workindex.New(db, workindex.Options{})
	if err := ix.ObserveQuote(context.Background(), workindex.Viewer{Subject: viewer, Name: viewer},
		workindex.QuoteSighting{QuoteID: id, CPQID: 1, CustomerID: 5, Customer: "Rossi"}, workindex.ActOpened); err != nil {
		t.Fatal(err)
	}
}

// TestReminderSignatureAndArchiveOnceAcrossScans: a contract out for signature longer than the
// days reminds its person once, however many scans run; a signed contract waiting longer than its
// days reminds the back office (people with a back-office role), not the rep; younger ones
// remind nobody. A scan not yet due does not run.
func TestReminderSignatureAndArchiveOnceAcrossScans(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		now := time.Now()
		contract(t, db, now.AddDate(0, 0, -4), "sub-rep", 1, "SIGNATURE_REQUESTED", "SENT")
		contract(t, db, now.AddDate(0, 0, -1), "sub-rep", 2, "SIGNATURE_REQUESTED", "SENT")
		contract(t, db, now.AddDate(0, 0, -9), "sub-rep", 3, "SIGNED", "SIGNED")
		opened(t, db, "sub-bo", 3, "SIGNED", "SIGNED") // the back office's list read it
		s := newStore(t, db, nil)
		if err := s.Remember(ctx, inbox.Person{Key: inbox.PersonKey("sub-bo"), Name: "Bo", Roles: []string{"backoffice"}}); err != nil {
			t.Fatal(err)
		}
		r := inbox.NewReminders(inbox.ReminderOptions{Store: s, Work: workindex.New(db, workindex.Options{}), Every: time.Hour,
			SignatureDays: 3, ArchiveDays: 7, OfferDays: -1, BackofficeRoles: []string{"backoffice"}})
		ran, err := r.RunDue(ctx, inbox.ScanReminders)
		if err != nil || !ran {
			t.Fatalf("first scan: ran %v, %v", ran, err)
		}
		if ran, err := r.RunDue(ctx, inbox.ScanReminders); err != nil || ran {
			t.Fatalf("a scan ran again before it was due: %v %v", ran, err)
		}
		for range 2 { // a rerun (a crash before the schedule moved on) adds nothing
			if n, err := r.Scan(ctx); err != nil || n != 0 {
				t.Fatalf("a rescan added %d items (%v)", n, err)
			}
		}
		rep, err := s.List(ctx, inbox.PersonKey("sub-rep"), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep) != 1 || rep[0].Kind != inbox.KindSignatureWaiting || rep[0].Link != "/contracts/1" || rep[0].Params[inbox.ParamDays] != "4" {
			t.Fatalf("the rep's inbox: %+v", rep)
		}
		bo, err := s.List(ctx, inbox.PersonKey("sub-bo"), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(bo) != 1 || bo[0].Kind != inbox.KindArchiveWaiting || bo[0].Link != "/contracts/3" {
			t.Fatalf("the back office's inbox: %+v", bo)
		}
		if runs, err := r.Runs(ctx, inbox.ScanReminders); err != nil || runs != 1 {
			t.Fatalf("runs %d, %v", runs, err)
		}
	})
}

// TestReminderOneScanAcrossReplicas: two replicas asking at once: one runs the scan.
func TestReminderOneScanAcrossReplicas(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		s := newStore(t, db, nil)
		opts := inbox.ReminderOptions{Store: s, Work: workindex.New(db, workindex.Options{}), Every: time.Hour, OfferDays: -1}
		a, b := inbox.NewReminders(opts), inbox.NewReminders(opts)
		ranA, errA := a.RunDue(ctx, inbox.ScanReminders)
		ranB, errB := b.RunDue(ctx, inbox.ScanReminders)
		if errA != nil || errB != nil || !ranA || ranB {
			t.Fatalf("replica a ran %v (%v), b ran %v (%v): want a only", ranA, errA, ranB, errB)
		}
	})
}

// TestReminderOfferExpiresOnce: an offer sent by e-mail reminds its sender once, OfferDays before
// its valid-until; an offer sent more recently does not yet.
func TestReminderOfferExpiresOnce(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		mail := outbox.New(outbox.Options{DB: db, Sender: nopSender{}})
		now := time.Now()
		for _, m := range []struct {
			topic string
			sent  time.Time
		}{{"quote:500", now.AddDate(0, 0, -26)}, {"quote:501", now.AddDate(0, 0, -10)}} {
			if _, err := mail.Enqueue(ctx, "x", []outbox.Mail{{Owner: "sub-rep", Topic: m.topic, Recipient: "c@example.com", Subject: "s"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL.Exec(`UPDATE mail_outbox SET status = 'sent', sent_at = $1 WHERE topic = $2`, statedb.Micros(m.sent), m.topic); err != nil {
				t.Fatal(err)
			}
		}
		openedQuote(t, db, "sub-rep", 500)
		openedQuote(t, db, "sub-rep", 501)
		s := newStore(t, db, nil)
		r := inbox.NewReminders(inbox.ReminderOptions{Store: s, Mail: mail, OfferDays: 5, SignatureDays: -1, ArchiveDays: -1})
		for want, round := range []int{1, 0} {
			if n, err := r.Scan(ctx); err != nil || n != round {
				t.Fatalf("scan %d added %d (%v), want %d", want, n, err, round)
			}
		}
		items, err := s.List(ctx, inbox.PersonKey("sub-rep"), 10)
		if err != nil || len(items) != 1 || items[0].Kind != inbox.KindOfferExpires || items[0].Params[inbox.ParamQuote] != "500" ||
			items[0].Params[inbox.ParamDays] != "3" && items[0].Params[inbox.ParamDays] != "4" {
			t.Fatalf("items %+v (%v)", items, err)
		}
	})
}

// TestInboxHandoverTellsTheNewOwner: a handover's end tells the person who signs in with the new
// owner's address (in their language, by mail with that preference) how many customers they got
// and who ran it, once; nobody when the address is unknown, shared by two people, or the runner's
// own; a handover that changed nothing tells nobody.
func TestInboxHandoverTellsTheNewOwner(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		mail := outbox.New(outbox.Options{DB: db, Sender: nopSender{}})
		s := inbox.New(inbox.Options{DB: db, Mail: mail, I18n: bundle(t), PublicURL: "https://portal.example.com",
			Domain: "portal.example.com", NewOwner: handover.NewOwner})
		anna := inbox.PersonKey("sub-anna")
		for _, p := range []inbox.Person{
			{Key: anna, Email: "Anna.Rossi@example.com", Name: "Anna Rossi", Lang: "it"},
			{Key: inbox.PersonKey("sub-lead"), Email: "lead@example.com", Name: "Lea Lead", Lang: "en"},
			{Key: inbox.PersonKey("sub-twin1"), Email: "shared@example.com", Lang: "en"},
			{Key: inbox.PersonKey("sub-twin2"), Email: "shared@example.com", Lang: "en"},
		} {
			if err := s.Remember(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SetPreference(ctx, inbox.Person{Key: anna, Email: "anna.rossi@example.com", Name: "Anna Rossi", Lang: "it", Delivery: inbox.DeliverEmail}); err != nil {
			t.Fatal(err)
		}
		end := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
		handed := func(id, to string, done, failed int) *jobs.Job {
			j := &jobs.Job{ID: id, Kind: jobs.KindHandover, Owner: "sub-lead", OwnerName: "Lea Lead", Status: jobs.StatusFinished, EndedAt: end}
			for i := range done + failed {
				it, err := handover.Item(i, handover.Line{CustomerID: int32(100 + i), From: 7, To: 9, ToEmail: to}, "Customer")
				if err != nil {
					t.Fatal(err)
				}
				it.Status = jobs.ItemDone
				if i >= done {
					it.Status = jobs.ItemFailed
				}
				j.Items = append(j.Items, it)
			}
			return j
		}
		j := handed("0123456789abcdef0123456789abcd01", "anna.rossi@EXAMPLE.com", 3, 1)
		s.JobEnded(ctx, j)
		s.JobEnded(ctx, j) // the end reported twice (two replicas) is one item
		if n := unread(t, s, anna); n != 1 {
			t.Fatalf("the new owner has %d unread items, want 1", n)
		}
		items, err := s.List(ctx, anna, 10)
		if err != nil || len(items) != 1 {
			t.Fatalf("list %v %v", items, err)
		}
		it := items[0]
		if it.Kind != inbox.KindHandoverReceived || it.Params[inbox.ParamDone] != "3" || it.Params[inbox.ParamBy] != "Lea Lead" || it.Link != "/customers" {
			t.Fatalf("item %+v", it)
		}
		italian, _ := bundle(t).Supported("it")
		if text := inbox.Text(bundle(t).Translator(italian), it); !strings.Contains(text, "Lea Lead") || !strings.Contains(text, "3 clienti") {
			t.Fatalf("Italian text %q", text)
		}
		got := mails(t, db)
		if len(got) != 1 || got[0].Recipient != "anna.rossi@example.com" || got[0].Lang != "it" || !strings.Contains(got[0].Text, "3 clienti") {
			t.Fatalf("mails %+v", got)
		}
		// The runner's own job item is there too (it is theirs to read).
		if n := unread(t, s, inbox.PersonKey("sub-lead")); n != 1 {
			t.Fatalf("the runner has %d unread items, want 1 (their job's end)", n)
		}
		for _, tc := range []struct {
			name string
			job  *jobs.Job
		}{
			{"unknown address", handed("0123456789abcdef0123456789abcd02", "nobody@example.com", 2, 0)},
			{"shared address", handed("0123456789abcdef0123456789abcd03", "shared@example.com", 2, 0)},
			{"the runner's own address", handed("0123456789abcdef0123456789abcd04", "lead@example.com", 2, 0)},
			{"nothing changed", handed("0123456789abcdef0123456789abcd05", "anna.rossi@example.com", 0, 2)},
			{"no address named", handed("0123456789abcdef0123456789abcd06", "", 2, 0)},
		} {
			s.JobEnded(ctx, tc.job)
			for _, p := range []string{anna, inbox.PersonKey("sub-twin1"), inbox.PersonKey("sub-twin2")} {
				items, err := s.List(ctx, p, 10)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range items {
					if it.Kind == inbox.KindHandoverReceived && strings.Contains(it.Dedupe, tc.job.ID) {
						t.Fatalf("%s: told %s", tc.name, p)
					}
				}
			}
		}
		if n := unread(t, s, inbox.PersonKey("sub-lead")); n != 6 {
			t.Fatalf("the runner has %d unread items, want 6 (one per job, none as a new owner)", n)
		}
	})
}
