package inbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestInboxTellAnswerOncePerPersonWhoeverLearnsIt: a decline learnt by the watcher and again by a
// page is one item for the creator and one for the last changer (one when they are the same
// person), with the reason; a contract that went back to generated tells nobody.
func TestInboxTellAnswerOncePerPersonWhoeverLearnsIt(t *testing.T) {
	statedbtest.Each(t, func(t *testing.T, db *statedb.DB) {
		s := newStore(t, db, nil)
		ctx := context.Background()
		sam, bea := inbox.PersonKey("sam"), inbox.PersonKey("bea")
		for _, id := range []int32{42, 43, 44} { // each read the contracts (they made them)
			opened(t, db, "sam", id, "SIGNATURE_REQUESTED", "SENT")
			opened(t, db, "bea", id, "SIGNATURE_REQUESTED", "SENT")
		}
		c := workindex.ContractSighting{ContractID: 42, Number: "C-2026-000042", Customer: "Laura Rossi",
			AnsweredAt: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC), DeclineReason: "Too expensive"}
		for range 2 { // the watcher, then a colleague's page
			if err := s.TellAnswer(ctx, sam, bea, c, workindex.StageDeclined); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.TellAnswer(ctx, sam, sam, workindex.ContractSighting{ContractID: 43, Number: "C-43"}, workindex.StageGenerated); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{sam, bea} {
			items, err := s.List(ctx, p, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 1 || items[0].Kind != inbox.KindDeclined || items[0].Params[inbox.ParamReason] != "Too expensive" ||
				!strings.HasSuffix(items[0].Link, "/contracts/42") {
				t.Errorf("person %s: items %+v, want the one decline of contract 42", p, items)
			}
		}
		if err := s.TellAnswer(ctx, sam, sam, workindex.ContractSighting{ContractID: 44, Number: "C-44"}, workindex.StageSigned); err != nil {
			t.Fatal(err)
		}
		if n := unread(t, s, sam); n != 2 {
			t.Errorf("sam has %d unread, want 2 (one per answer, the same person told once)", n)
		}
	})
}
