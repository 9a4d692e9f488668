package inbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestInboxLeakNothingToAPersonRefusedTheRow: a person the v2 API refused a contract or quote
// since they read it (a handover, an owner restriction: work_denied), or who never read it, gets
// no item naming it: neither a signer's answer, nor a signature or archive reminder, nor an
// offer's expiry; the person who may still read it gets each once, and the unread counts say so.
func TestInboxLeakNothingToAPersonRefusedTheRow(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		now := time.Now()
		ix := workindex.New(db, workindex.Options{})
		refuse := func(subject string, kind workindex.Kind, id int64) {
			t.Helper()
			if err := ix.Forget(ctx, workindex.Viewer{Subject: subject, Name: subject}, kind, id); err != nil {
				t.Fatal(err)
			}
		}
		// Contract 7 (out for signature 20 days) was the old rep's; the customer went to the new
		// rep, who read it, and the v2 API refused it to the old rep since. Contract 8 is still
		// the old rep's. Contract 9 is signed and waits for the archive: bo-1 read it, bo-2 read
		// it and was refused since, bo-3 never read it.
		contract(t, db, now.AddDate(0, 0, -20), "sub-old", 7, "SIGNATURE_REQUESTED", "SENT")
		opened(t, db, "sub-new", 7, "SIGNATURE_REQUESTED", "SENT")
		refuse("sub-old", workindex.KindContract, 7)
		contract(t, db, now.AddDate(0, 0, -20), "sub-old", 8, "SIGNATURE_REQUESTED", "SENT")
		contract(t, db, now.AddDate(0, 0, -20), "sub-old", 9, "SIGNED", "SIGNED")
		opened(t, db, "sub-bo-1", 9, "SIGNED", "SIGNED")
		opened(t, db, "sub-bo-2", 9, "SIGNED", "SIGNED")
		refuse("sub-bo-2", workindex.KindContract, 9)

		// Offers the old rep sent by e-mail 26 days ago: quote 500 was handed over (refused since),
		// quote 501 is still theirs.
		mail := outbox.New(outbox.Options{DB: db, Sender: nopSender{}})
		for _, topic := range []string{"quote:500", "quote:501"} {
			if _, err := mail.Enqueue(ctx, "x", []outbox.Mail{{Owner: "sub-old", Topic: topic, Recipient: "c@example.com", Subject: "s"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL.Exec(`UPDATE mail_outbox SET status = 'sent', sent_at = $1 WHERE topic = $2`, statedb.Micros(now.AddDate(0, 0, -26)), topic); err != nil {
				t.Fatal(err)
			}
		}
		openedQuote(t, db, "sub-old", 500)
		openedQuote(t, db, "sub-old", 501)
		refuse("sub-old", workindex.KindQuote, 500)

		s := newStore(t, db, nil)
		for _, bo := range []string{"sub-bo-1", "sub-bo-2", "sub-bo-3"} {
			if err := s.Remember(ctx, inbox.Person{Key: inbox.PersonKey(bo), Name: bo, Roles: []string{"backoffice"}}); err != nil {
				t.Fatal(err)
			}
		}

		// The signer of contract 7 declined: the row still names the old rep as its creator.
		old, newRep, stranger := inbox.PersonKey("sub-old"), inbox.PersonKey("sub-new"), inbox.PersonKey("sub-stranger")
		answer := workindex.ContractSighting{ContractID: 7, Number: "C-7", Customer: "Rossi", AnsweredAt: now, DeclineReason: "price"}
		if err := s.TellAnswer(ctx, old, newRep, answer, workindex.StageDeclined); err != nil {
			t.Fatal(err)
		}
		if err := s.TellAnswer(ctx, stranger, stranger, answer, workindex.StageDeclined); err != nil {
			t.Fatal(err)
		}
		r := inbox.NewReminders(inbox.ReminderOptions{Store: s, Work: ix, Mail: mail, Every: time.Hour,
			SignatureDays: 14, ArchiveDays: 7, OfferDays: 5, BackofficeRoles: []string{"backoffice"}})
		if _, err := r.Scan(ctx); err != nil {
			t.Fatal(err)
		}

		want := map[string][]string{ // person: the links of their items, newest first
			old:                         {"/quotes/1/5/501", "/contracts/8"},
			newRep:                      {"/contracts/7"},
			stranger:                    nil,
			inbox.PersonKey("sub-bo-1"): {"/contracts/9"},
			inbox.PersonKey("sub-bo-2"): nil,
			inbox.PersonKey("sub-bo-3"): nil,
		}
		for person, links := range want {
			items, err := s.List(ctx, person, 10)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, it := range items {
				got[it.Link] = true
			}
			for _, l := range links {
				if !got[l] {
					t.Errorf("%s: no item for %s (items %+v)", person, l, items)
				}
			}
			if len(items) != len(links) {
				t.Errorf("%s: %d items %+v, want only %v (a refused or unread row named)", person, len(items), items, links)
			}
			if n := unread(t, s, person); n != len(links) {
				t.Errorf("%s: unread %d, want %d", person, n, len(links))
			}
		}

		// Read again with their own token (the customer came back): the next answer reaches them.
		opened(t, db, "sub-old", 7, "SIGNATURE_REQUESTED", "SENT")
		answer.AnsweredAt = now.Add(time.Minute)
		if err := s.TellAnswer(ctx, old, newRep, answer, workindex.StageSigned); err != nil {
			t.Fatal(err)
		}
		if n := unread(t, s, old); n != 3 {
			t.Errorf("the old rep, reading contract 7 again, has %d unread, want 3", n)
		}
	})
}
