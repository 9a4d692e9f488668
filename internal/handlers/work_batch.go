package handlers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/backoffice"
)

// The batch archive's check (POST /contracts/batch-archive) follows the deal: each contract's
// stage is derived from the document the check reads anyway (workindex.StageOfContract), and a
// contract that was never sent for signature, or whose request was removed (stage "generated"),
// is left out with that reason unless the person includes such contracts explicitly
// (include_unsent=1, the preview's "Include them" button). docs/backoffice.md. The leaving out
// applies to lists sent with leave_unsent=1 ("Archive selected" on the contracts list); a list
// typed or uploaded on the batch page is checked as before, its preview showing each stage.

// leftOutUnsent is the reason of a contract left out for its stage.
const leftOutUnsent = "work.batch.left_out_unsent"

// batchStages remembers the stage of each contract the check read.
type batchStages struct {
	mu     sync.Mutex
	stages map[string]workindex.Stage
}

func (s *batchStages) set(number string, stage workindex.Stage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stages[number] = stage
}

// batchLookup is jobs.V2's Lookup (the same v2 call and the same answers) that also records each
// contract's stage and gives the document to the work index.
func (h *Handler) batchLookup(c *gin.Context, token string, stages *batchStages) func(ctx context.Context, number string) (jobs.Found, error) {
	viewer := h.viewer(c)
	return func(ctx context.Context, number string) (jobs.Found, error) {
		contract, err := h.api.Contracts.GetByNumber(apiclient.WithToken(ctx, token), number)
		switch {
		case errors.Is(err, apiclient.ErrNotFound), errors.Is(err, apiclient.ErrBadRequest):
			return jobs.Found{}, jobs.ErrUnknown
		case err != nil:
			return jobs.Found{}, fmt.Errorf("batch archive: look up contract %q: %w", number, err)
		}
		stages.set(number, workindex.StageOfContract(contractFacts(contract)))
		if h.work != nil {
			if err := h.work.ObserveContract(ctx, viewer, contractSighting(contract), workindex.ActOpened); err != nil {
				h.log(c).Warn("work index: batch check not recorded", "err", err)
			}
		}
		customer := contract.Customer.Name
		if customer == "" {
			customer = fmt.Sprintf("customer %d", contract.CustomerID)
		}
		return jobs.Found{Customer: customer, Archived: isArchived(contract), ArchiveID: string(contract.Archive.ArchiveID)}, nil
	}
}

// leaveOutUnsent marks the pending items whose contract is only generated as left out, with the
// reason; it returns how many.
func leaveOutUnsent(items []jobs.Item, stages *batchStages) int {
	left := 0
	for i := range items {
		if items[i].Status == jobs.ItemPending && stages.stages[items[i].Number] == workindex.StageGenerated {
			items[i].Status = jobs.ItemRejected
			items[i].Problem = i18n.M(leftOutUnsent)
			left++
		}
	}
	return left
}

// unsentNumbers are the numbers a draft left out for their stage (the preview offers to include
// them) and, when there are any, the draft's other usable numbers (checked again with them).
func unsentNumbers(j *jobs.Job) (unsent, others []string) {
	for _, it := range j.Items {
		switch {
		case it.Status == jobs.ItemRejected && it.Problem.Key == leftOutUnsent:
			unsent = append(unsent, it.Number)
		case it.Status != jobs.ItemRejected:
			others = append(others, it.Number)
		}
	}
	if len(unsent) == 0 {
		return nil, nil
	}
	return unsent, others
}

// addBatchStages writes each previewed contract's stage (as the work index saw it during the
// check) into its row.
func (h *Handler) addBatchStages(tr *i18n.Translator, rows []backoffice.BatchItemRow) {
	if h.work == nil || len(rows) == 0 {
		return
	}
	numbers := make([]string, 0, len(rows))
	for _, r := range rows {
		numbers = append(numbers, r.Number)
	}
	stages := h.work.ContractStages(numbers)
	for i := range rows {
		if st, ok := stages[rows[i].Number]; ok {
			rows[i].Stage = stageLabel(tr, st)
		}
	}
}
