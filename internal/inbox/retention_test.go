package inbox_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestInboxRetentionDeletesOldItemsAndKeepsTheCount: the retention scan deletes the items read
// before the read retention and the unread ones before the (longer) unread retention, and the
// unread count loses exactly the unread items deleted; younger items, read or not, stay.
func TestInboxRetentionDeletesOldItemsAndKeepsTheCount(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		now := time.Now()
		s := newStore(t, db, nil)
		ann, bob := inbox.PersonKey("sub-ann"), inbox.PersonKey("sub-bob")
		// Each person (listed newest first): items 400, 200, 100 and 10 days old; ann read the 400, 200 and 10 days old
		// ones, bob read none.
		ages := []int{400, 200, 100, 10}
		for _, p := range []string{ann, bob} {
			for _, age := range ages {
				it := inbox.Item{Person: p, Dedupe: "job:" + strconv.Itoa(age), Kind: inbox.KindImportFinished, Link: "/jobs/1",
					Params: map[string]string{inbox.ParamDone: "1", inbox.ParamFailed: "0"}, CreatedAt: now.AddDate(0, 0, -age)}
				if err := s.Deliver(ctx, it); err != nil {
					t.Fatal(err)
				}
			}
		}
		items, err := s.List(ctx, ann, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.CreatedAt.Before(now.AddDate(0, 0, -150)) || it.CreatedAt.After(now.AddDate(0, 0, -20)) {
				if _, err := s.MarkRead(ctx, ann, it.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		if a, b := unread(t, s, ann), unread(t, s, bob); a != 1 || b != 4 {
			t.Fatalf("before: unread ann %d bob %d, want 1 and 4", a, b)
		}

		r := inbox.NewReminders(inbox.ReminderOptions{Store: s, Every: time.Hour, SignatureDays: -1, ArchiveDays: -1, OfferDays: -1,
			ReadRetention: 90 * 24 * time.Hour, UnreadRetention: 365 * 24 * time.Hour})
		if ran, err := r.RunDue(ctx, inbox.ScanRetention); err != nil || !ran {
			t.Fatalf("the retention scan: ran %v, %v", ran, err)
		}
		for p, want := range map[string]struct {
			ages   []int
			unread int
		}{
			ann: {[]int{10, 100}, 1},      // the read 400 and 200 went; the unread 100 stays
			bob: {[]int{10, 100, 200}, 3}, // unread: only the one older than a year went
		} {
			items, err := s.List(ctx, p, 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, it := range items {
				got = append(got, int(now.Sub(it.CreatedAt).Hours()/24+0.5))
			}
			if len(got) != len(want.ages) {
				t.Errorf("%s keeps items of ages %v, want %v", p, got, want.ages)
				continue
			}
			for i := range got {
				if got[i] != want.ages[i] {
					t.Errorf("%s keeps items of ages %v, want %v", p, got, want.ages)
				}
			}
			if n := unread(t, s, p); n != want.unread {
				t.Errorf("%s: unread %d after the retention, want %d", p, n, want.unread)
			}
		}
		// Nothing more to delete: a second purge deletes nothing and the counts stay.
		if n, err := s.Purge(ctx, now.AddDate(0, 0, -90), now.AddDate(0, 0, -365)); err != nil || n != 0 {
			t.Fatalf("a second purge deleted %d (%v)", n, err)
		}
		if n := unread(t, s, bob); n != 3 {
			t.Errorf("bob: unread %d after a second purge, want 3", n)
		}
	})
}
