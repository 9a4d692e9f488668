package workindex

import (
	"context"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// Facts, not sightings (issue 39): a signer's answer is dated by the v2 API's time, not by the
// read that learnt it, and credited to the sender (never to whoever read it); a batch archive is
// credited to the batch's owner at the archive's time; a signature stays a fact when the
// contract is archived (SignedAt, SignedByMonth, the Signed filter); and the answer is told to
// OnAnswer once, with who created and sent the contract.
func TestFactsDatedByTheV2AnswerAndSignaturesOutliveTheArchive(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
		var told []Change
		ix := New(db, Options{Now: c.now, OnAnswer: func(_ context.Context, _ ContractSighting, ch Change) { told = append(told, ch) }})
		contract := func(id int32, statuses ...string) ContractSighting {
			return ContractSighting{ContractID: id, Number: "C-2026-00000" + string(rune('0'+id)), QuoteID: int64(id), CPQID: 1, CustomerID: 7,
				Customer: "Acme", Facts: ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: statuses}, OneOffCents: 10000}
		}
		// Alice generates and sends two contracts.
		for _, id := range []int32{1, 2} {
			must(t, ix.ObserveContract(ctx, alice, contract(id), ActCreated))
			must(t, ix.ObserveContract(ctx, alice, contract(id, "SENT"), ActChanged))
		}
		// The signer of 1 declines at 19:45; bob (a colleague) reads it at 19:46:53.
		declinedAt := time.Date(2026, 3, 2, 19, 45, 0, 0, time.UTC)
		c.t = time.Date(2026, 3, 2, 19, 46, 53, 0, time.UTC)
		declined := contract(1, "DECLINED")
		declined.AnsweredAt, declined.ChangedAt = declinedAt, declinedAt
		must(t, ix.ObserveContract(ctx, bob, declined, ActChanged))
		row, _ := ix.Peek(ctx, KindContract, 1)
		if !row.ChangedAt.Equal(declinedAt) || row.ChangedBy != alice.Key() || row.ChangedByName != "Alice" || row.Stage != StageDeclined {
			t.Fatalf("declined: changed %v by %q (%s), want the signer's time %v, still credited to the sender Alice", row.ChangedAt, row.ChangedByName, row.Stage, declinedAt)
		}
		if !row.SignedAt.IsZero() {
			t.Fatalf("a declined contract has a signature at %v", row.SignedAt)
		}
		// A read that learns nothing new tells nobody again.
		c.t = c.t.Add(2 * time.Minute)
		must(t, ix.ObserveContract(ctx, alice, declined, ActOpened))
		if len(told) != 1 || told[0].From != StageSignature || told[0].To != StageDeclined || told[0].ChangedBy != alice.Key() || told[0].CreatedBy != alice.Key() {
			t.Fatalf("answers told: %+v, want one decline of Alice's contract", told)
		}

		// The signer of 2 signs on 28 February (the v2 time); the watcher reads it in March.
		signedAt := time.Date(2026, 2, 28, 23, 30, 0, 0, time.UTC)
		signed := contract(2, "SIGNED")
		signed.Facts.Status = "SIGNED"
		signed.SignedAt, signed.AnsweredAt, signed.ChangedAt = signedAt, signedAt, signedAt
		must(t, ix.ObserveContract(ctx, alice, signed, ActRefreshed))
		row, _ = ix.Peek(ctx, KindContract, 2)
		if !row.SignedAt.Equal(signedAt) || !row.ChangedAt.Equal(signedAt) || row.ChangedByName != "Alice" {
			t.Fatalf("signed: signed %v, changed %v by %q; want both at the v2 signedAt %v, by Alice", row.SignedAt, row.ChangedAt, row.ChangedByName, signedAt)
		}
		byMonth, err := ix.SignedByMonth(ctx, alice, ScopeMine)
		must(t, err)
		if byMonth[202602] != (Total{N: 1, ValueCents: 10000}) || len(byMonth) != 1 {
			t.Fatalf("Alice's signed by month: %v, want one in 2026-02", byMonth)
		}

		// Bea runs a batch archive of it at 10:00 on 3 March; the v2 API says archived at 09:59:58.
		bea := Viewer{Subject: "bea", Name: "Bea Backoffice", Team: true}
		c.t = time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC)
		archivedAt := c.t.Add(-2 * time.Second)
		must(t, ix.Archive(ctx, bea, row.ContractNumber, archivedAt))
		row, _ = ix.Peek(ctx, KindContract, 2)
		if row.Stage != StageArchived || row.ChangedByName != "Bea Backoffice" || row.ChangedBy != bea.Key() || !row.ChangedAt.Equal(archivedAt) {
			t.Fatalf("archived: %s, changed %v by %q; want archived by Bea Backoffice at %v", row.Stage, row.ChangedAt, row.ChangedByName, archivedAt)
		}
		if !row.SignedAt.Equal(signedAt) {
			t.Fatalf("the archive lost the signature: signed %v, want %v", row.SignedAt, signedAt)
		}
		// Alice reads it again as it stands: her win is still counted, in its month.
		archivedDoc := signed
		archivedDoc.Facts = ContractFacts{Status: "ARCHIVED", Archived: true, SignatureStatuses: []string{"SIGNED"}}
		archivedDoc.ChangedAt = archivedAt
		must(t, ix.ObserveContract(ctx, alice, archivedDoc, ActOpened))
		row, _ = ix.Peek(ctx, KindContract, 2)
		if row.ChangedByName != "Bea Backoffice" || !row.ChangedAt.Equal(archivedAt) {
			t.Fatalf("Alice's read moved the archive's credit: changed %v by %q", row.ChangedAt, row.ChangedByName)
		}
		for _, v := range []Viewer{alice, bea} {
			byMonth, err = ix.SignedByMonth(ctx, v, ScopeAll)
			must(t, err)
			if byMonth[202602].N != 1 {
				t.Fatalf("%s's signed by month after the archive: %v, want the February signature", v.Name, byMonth)
			}
		}
		page, err := ix.List(ctx, alice, Query{Kind: KindContract, Scope: ScopeMine, SignedFrom: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
			SignedTo: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
		must(t, err)
		if page.Total != 1 || len(page.Rows) != 1 || page.Rows[0].ContractID != 2 || page.Rows[0].Stage != StageArchived {
			t.Fatalf("Alice's contracts signed in February: %+v", page)
		}
		// Bob never read it as it stands: nothing of it reaches him.
		byMonth, err = ix.SignedByMonth(ctx, bob, ScopeAll)
		must(t, err)
		if len(byMonth) != 0 {
			t.Fatalf("Bob's signed by month: %v, want nothing (his token never read it)", byMonth)
		}
		// What the writes kept is what the rows and reads give.
		checkViewerSums(t, db, ix, []Viewer{alice, bob, bea})
	})
}

// A contract first seen already signed, without the v2 API's signedAt, is dated by the read that
// saw it; a later document that gives signedAt does not move a known signature's month.
func TestSignedAtWithoutTheV2Time(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 4, 30, 23, 59, 0, 0, time.UTC)}
		ix := newIndex(db, c)
		s := ContractSighting{ContractID: 5, Number: "C-5", QuoteID: 5, CPQID: 1, CustomerID: 1, Facts: ContractFacts{Status: "SIGNED"}}
		must(t, ix.ObserveContract(ctx, alice, s, ActOpened))
		row, _ := ix.Peek(ctx, KindContract, 5)
		if !row.SignedAt.Equal(c.t) {
			t.Fatalf("signed at %v, want the read's %v", row.SignedAt, c.t)
		}
		c.t = c.t.Add(time.Hour)
		s.SignedAt = time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)
		must(t, ix.ObserveContract(ctx, alice, s, ActOpened))
		if row2, _ := ix.Peek(ctx, KindContract, 5); !row2.SignedAt.Equal(row.SignedAt) {
			t.Fatalf("a known signature moved to %v", row2.SignedAt)
		}
		if got := SignedMonth(row.SignedAt); got != 202604 {
			t.Fatalf("SignedMonth = %d", got)
		}
	})
}
