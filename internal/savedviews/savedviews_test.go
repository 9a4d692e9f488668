package savedviews

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

func clock() func() time.Time {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	return func() time.Time { now = now.Add(time.Second); return now }
}

func TestSaveListRenameDeleteOwnViewsOnly(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		s := New(db, clock())
		ctx := context.Background()
		late, err := s.Save(ctx, "alice", "contracts", "  Out for   signature ", "stage=signature")
		if err != nil {
			t.Fatal(err)
		}
		if late.Name != "Out for signature" || len(late.ID) != 16 {
			t.Fatalf("saved %+v", late)
		}
		if _, err := s.Save(ctx, "alice", "quotes", "Drafts", "stage=draft"); err != nil {
			t.Fatal(err)
		}
		// The same name on another list, and another person's same name, are fine.
		if _, err := s.Save(ctx, "alice", "quotes", "out for signature", "scope=all"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Save(ctx, "bob", "contracts", "Out for signature", "stage=signed"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Save(ctx, "alice", "contracts", "OUT FOR SIGNATURE", "stage=declined"); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("a second name differing in case: %v, want ErrDuplicate", err)
		}
		contracts, err := s.List(ctx, "alice", "contracts")
		if err != nil || len(contracts) != 1 || contracts[0].Query != "stage=signature" {
			t.Fatalf("alice's contract views: %+v %v", contracts, err)
		}
		all, _ := s.List(ctx, "alice", "")
		if len(all) != 3 || all[0].Name != "Drafts" {
			t.Fatalf("alice's views by name: %+v", all)
		}
		// Bob cannot read, rename or delete Alice's view by its id.
		if _, err := s.Get(ctx, "bob", late.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob reads alice's view: %v", err)
		}
		if _, err := s.Rename(ctx, "bob", late.ID, "Mine now"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob renames alice's view: %v", err)
		}
		if err := s.Delete(ctx, "bob", late.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob deletes alice's view: %v", err)
		}
		renamed, err := s.Rename(ctx, "alice", late.ID, "Waiting two weeks")
		if err != nil || renamed.Name != "Waiting two weeks" || renamed.Query != "stage=signature" {
			t.Fatalf("rename: %+v %v", renamed, err)
		}
		if _, err := s.Rename(ctx, "alice", late.ID, "waiting TWO weeks"); err != nil {
			t.Fatalf("a view may take its own name in another case: %v", err)
		}
		if err := s.Delete(ctx, "alice", late.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "alice", late.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted view still read: %v", err)
		}
		if bobs, _ := s.List(ctx, "bob", ""); len(bobs) != 1 || bobs[0].Query != "stage=signed" {
			t.Fatalf("bob's views changed: %+v", bobs)
		}
	})
}

func TestNamesQueriesAndTheLimit(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		s := New(db, clock())
		ctx := context.Background()
		for _, tc := range []struct {
			name, query string
			want        error
		}{
			{"   ", "stage=draft", ErrEmptyName},
			{strings.Repeat("é", MaxNameRunes+1), "stage=draft", ErrNameTooLong},
			{"bell\a", "stage=draft", ErrNameInvalid},
			{"ok", "?stage=draft", ErrQuery},
			{"ok", "q=<script> x", ErrQuery},
			{"ok", strings.Repeat("a", MaxQueryLen+1), ErrQuery},
		} {
			if _, err := s.Save(ctx, "carol", "quotes", tc.name, tc.query); !errors.Is(err, tc.want) {
				t.Errorf("Save(%q, %q) = %v, want %v", tc.name, tc.query, err, tc.want)
			}
		}
		if _, err := s.Save(ctx, "carol", "quotes", strings.Repeat("é", MaxNameRunes), ""); err != nil {
			t.Fatalf("a name of exactly the limit: %v", err)
		}
		for i := 1; i < MaxPerPerson; i++ {
			if _, err := s.Save(ctx, "carol", "contracts", fmt.Sprintf("View %d", i), "page=2"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Save(ctx, "carol", "quotes", "One too many", ""); !errors.Is(err, ErrTooMany) {
			t.Fatalf("view %d: %v, want ErrTooMany", MaxPerPerson+1, err)
		}
		views, _ := s.List(ctx, "carol", "")
		if len(views) != MaxPerPerson {
			t.Fatalf("%d views kept, want %d", len(views), MaxPerPerson)
		}
		if _, err := s.Save(ctx, "dave", "quotes", "Another person", ""); err != nil {
			t.Fatalf("the limit is per person: %v", err)
		}
	})
}
