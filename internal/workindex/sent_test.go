package workindex

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestTeamFiguresSentAtAndDeclineReasonAreFacts: a contract's send is dated by the v2 request's
// sentAt, else when the portal first saw it out for signature (a later read leaves it); the
// signer's decline reason is stored while it is declined (collapsed, bounded), is a fact (another
// reason hides the row from a viewer who read the old one), filters the contracts list, and
// leaves with a new send; the sums by rep are a team role's only.
func TestTeamFiguresSentAtAndDeclineReasonAreFacts(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
		ix := New(db, Options{Now: c.now})
		lead := Viewer{Subject: "lead", Name: "Lea", Team: true}
		contract := func(statuses ...string) ContractSighting {
			return ContractSighting{ContractID: 5, Number: "C-5", CPQID: 1, CustomerID: 7, Customer: "Acme",
				Facts: ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: statuses}, OneOffCents: 100}
		}
		row := func() Row {
			t.Helper()
			r, ok := ix.Peek(ctx, KindContract, 5)
			if !ok {
				t.Fatal("no row")
			}
			return r
		}
		// Out for signature, the document without a request: sent when first seen so.
		firstSeen := c.t
		must(t, ix.ObserveContract(ctx, alice, contract(), ActCreated))
		c.t = c.t.Add(2 * time.Hour)
		must(t, ix.ObserveContract(ctx, alice, contract(), ActOpened))
		if r := row(); !r.SentAt.Equal(firstSeen) || r.Stage != StageSignature {
			t.Fatalf("sent %v (%s), want when first seen out for signature %v", r.SentAt, r.Stage, firstSeen)
		}
		// The v2 request's own sentAt wins when a document gives it.
		sentAt := time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC)
		sent := contract("SENT")
		sent.SentAt = sentAt
		must(t, ix.ObserveContract(ctx, alice, sent, ActOpened))
		if r := row(); !r.SentAt.Equal(sentAt) {
			t.Fatalf("sent %v, want the v2 sentAt %v", r.SentAt, sentAt)
		}

		// Declined with a reason: stored collapsed and bounded, revealed to who read it.
		declined := contract("DECLINED")
		declined.SentAt, declined.DeclineReason = sentAt, "  Too\n expensive \t"+strings.Repeat("x", 300)
		c.t = c.t.Add(time.Hour)
		must(t, ix.ObserveContract(ctx, alice, declined, ActOpened))
		must(t, ix.ObserveContract(ctx, lead, declined, ActRefreshed))
		r := row()
		if want := DeclineReasonText(declined.DeclineReason); r.DeclineReason != want || len([]rune(want)) != maxDeclineReason ||
			!strings.HasPrefix(want, "Too expensive xxx") {
			t.Fatalf("reason %q, want %q (200 characters)", r.DeclineReason, want)
		}
		byReason := Query{Kind: KindContract, Scope: ScopeAll, Stages: []Stage{StageDeclined}, DeclineReason: r.DeclineReason}
		if p, err := ix.List(ctx, lead, byReason); err != nil || p.Total != 1 || p.Rows[0].DeclineReason != r.DeclineReason {
			t.Fatalf("the list of the reason: %+v %v", p, err)
		}
		other := byReason
		other.DeclineReason = "Too expensive"
		if p, err := ix.List(ctx, lead, other); err != nil || p.Total != 0 {
			t.Fatalf("another reason lists %+v %v", p, err)
		}
		if d, err := ix.DeclinesByRep(ctx, lead); err != nil || len(d[alice.Key()]) != 1 || d[alice.Key()][0].Reason != r.DeclineReason {
			t.Fatalf("declines by rep: %+v %v", d, err)
		}
		for _, f := range []func() (bool, error){
			func() (bool, error) { d, err := ix.DeclinesByRep(ctx, alice); return d == nil, err },
			func() (bool, error) { s, err := ix.SignedByRep(ctx, alice); return s == nil, err },
		} {
			if none, err := f(); err != nil || !none {
				t.Fatalf("a rep without a team role reads the sums by rep (%v)", err)
			}
		}

		// Another reason is another fact: the lead's read of the old one no longer reveals it.
		changed := declined
		changed.DeclineReason = "Changed our mind"
		c.t = c.t.Add(time.Minute)
		must(t, ix.ObserveContract(ctx, alice, changed, ActOpened))
		if _, ok := ix.Lookup(ctx, lead, KindContract, 5); ok {
			t.Fatal("a row whose reason changed is still revealed to a viewer who read the old one")
		}
		if d, _ := ix.DeclinesByRep(ctx, lead); len(d) != 0 {
			t.Fatalf("the lead's declines still count the old reason: %+v", d)
		}

		// Sent again: no longer declined, no reason.
		again := contract("DECLINED", "SENT")
		again.SentAt = c.t
		c.t = c.t.Add(time.Minute)
		must(t, ix.ObserveContract(ctx, alice, again, ActChanged))
		if r := row(); r.DeclineReason != "" || r.Stage != StageSignature || !r.SentAt.Equal(again.SentAt) {
			t.Fatalf("sent again: reason %q, stage %s, sent %v", r.DeclineReason, r.Stage, r.SentAt)
		}
	})
}
