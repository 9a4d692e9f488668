package inbox

import (
	"context"
	"slices"

	"github.com/cpqportal/portal/internal/workindex"
)

// TellAnswer puts a signer's answer into the inboxes of the people who created the contract and
// changed it last (person keys, as the work index stores them), once per answer: the item's
// dedupe key names the contract, its stage and the answer's time, so the signature watcher and a
// page that learn the same answer make one item. Stages other than signed and declined tell
// nobody, and neither is told a person without a read of the contract the v2 API has not refused
// them since (workindex.MayTell: a handover or an owner restriction took the customer from them).
func (s *Store) TellAnswer(ctx context.Context, createdBy, changedBy string, c workindex.ContractSighting, stage workindex.Stage) error {
	if s == nil || (stage != workindex.StageSigned && stage != workindex.StageDeclined) {
		return nil
	}
	for _, person := range slices.Compact([]string{createdBy, changedBy}) {
		if person == "" {
			continue
		}
		it := SignatureAnswered("", c.ContractID, c.Number, c.Customer, string(stage), c.DeclineReason, c.AnsweredAt)
		it.Person = person
		it.RowKind, it.RowID = workindex.KindContract, int64(c.ContractID)
		if err := s.Deliver(ctx, it); err != nil {
			return err
		}
	}
	return nil
}
