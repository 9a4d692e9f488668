package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/backoffice"
)

// The batch archive's check (POST /contracts/batch-archive) follows the deal: each contract's
// stage is derived from the document the check reads anyway (workindex.StageOfContract, the same
// rules as the work index, so it holds for a contract the index never saw and for any v2), and is
// kept on the line (jobs.Item.Stage). A contract that is not signed (never sent for signature or
// its request removed, out for signature, declined, expired) is left out with the reason of its
// stage, however the list came (typed, pasted, uploaded, "Archive selected"), unless the person
// includes such contracts explicitly for this batch (include_unsent=1: the form's box, or the
// preview's "Include them"). The v2 API stays the judge: an included contract is archived if it
// accepts. docs/backoffice.md.

// leftOutUnsent is the reason of a contract left out because it was never sent for signature (or
// its request was removed).
const leftOutUnsent = "work.batch.left_out_unsent"

// leftOutReasons are the reasons of a contract left out for its stage: every stage but signed
// (and archived, which the check counts as done).
var leftOutReasons = map[workindex.Stage]string{
	workindex.StageGenerated: leftOutUnsent,
	workindex.StageSignature: "work.batch.left_out_signature",
	workindex.StageDeclined:  "work.batch.left_out_declined",
	workindex.StageExpired:   "work.batch.left_out_expired",
}

// leftOutForStage reports whether a problem is the reason of a contract left out for its stage.
func leftOutForStage(key string) bool {
	for _, k := range leftOutReasons {
		if k == key {
			return true
		}
	}
	return false
}

// batchLookup is jobs.V2's Lookup (the same v2 call and the same answers) that also derives each
// contract's stage. It reads and records nothing in the work index (a check changes nothing; the
// archive's effect reaches the index through the jobs engine's Effects), except that a contract
// the v2 API refuses the person leaves their lists at once (the visibility rule).
func (h *Handler) batchLookup(c *gin.Context, token string) func(ctx context.Context, number string) (jobs.Found, error) {
	viewer := h.viewer(c)
	return func(ctx context.Context, number string) (jobs.Found, error) {
		contract, err := h.api.Contracts.GetByNumber(apiclient.WithToken(ctx, token), number)
		switch {
		case errors.Is(err, apiclient.ErrNotFound), errors.Is(err, apiclient.ErrBadRequest):
			return jobs.Found{}, jobs.ErrUnknown
		case errors.Is(err, apiclient.ErrForbidden):
			// One contract the person may not read is a refused line; the others are checked. It
			// leaves everything of theirs at once (docs/work-index.md "Visibility rule").
			if h.work != nil {
				if ferr := h.work.ForgetContractNumber(ctx, viewer, number); ferr != nil {
					h.log(c).Warn("work index: row not forgotten", "err", ferr)
				}
			}
			return jobs.Found{}, fmt.Errorf("%w: %w", jobs.ErrRefused, err)
		case err != nil:
			return jobs.Found{}, fmt.Errorf("batch archive: look up contract %q: %w", number, err)
		}
		customer := contract.Customer.Name
		if customer == "" {
			customer = fmt.Sprintf("customer %d", contract.CustomerID)
		}
		return jobs.Found{Customer: customer, Archived: isArchived(contract), ArchiveID: string(contract.Archive.ArchiveID),
			Stage: string(workindex.StageOfContract(contractFacts(contract)))}, nil
	}
}

// leaveOutUnsigned marks the pending items whose contract is not signed (as the check read it)
// as left out, each with the reason of its stage; it returns how many. A line whose stage the
// check did not learn stays: the portal asks, it does not guess.
func leaveOutUnsigned(items []jobs.Item) int {
	left := 0
	for i := range items {
		reason, ok := leftOutReasons[workindex.Stage(items[i].Stage)]
		if items[i].Status == jobs.ItemPending && ok {
			items[i].Status = jobs.ItemRejected
			items[i].Problem = i18n.M(reason)
			left++
		}
	}
	return left
}

// unsentNumbers are the numbers a draft left out for their stage (the preview offers to include
// them) and, when there are any, every line's number in the draft's order (checked again with
// include_unsent=1: the lines with a problem come back with it, so nothing is dropped silently
// and a list of one number a line keeps its line numbers).
func unsentNumbers(j *jobs.Job) (unsent, again []string) {
	for _, it := range j.Items {
		if it.Status == jobs.ItemRejected && leftOutForStage(it.Problem.Key) {
			unsent = append(unsent, it.Number)
		}
		if it.Number != "" {
			again = append(again, it.Number)
		}
	}
	if len(unsent) == 0 {
		return nil, nil
	}
	return unsent, again
}

// addIndexedStages fills the stage of the rows that have none (lines checked before the check
// kept each contract's stage) from the work index: only lines the check found (never one the v2
// API refused), and only stages the viewer's own token read within PORTAL_WORK_STALE_AFTER.
func (h *Handler) addIndexedStages(c *gin.Context, tr *i18n.Translator, items []jobs.Item, rows []backoffice.BatchItemRow) {
	found := make(map[string]bool, len(items))
	for _, it := range items {
		if it.Status != jobs.ItemRejected {
			found[it.Number] = true
		}
	}
	var numbers []string
	for _, r := range rows {
		if r.Stage == "" && found[r.Number] {
			numbers = append(numbers, r.Number)
		}
	}
	if h.work == nil || len(numbers) == 0 {
		return
	}
	stages, err := h.work.ContractStages(c.Request.Context(), h.viewer(c), numbers, h.cfg.WorkStaleAfter)
	if err != nil {
		h.log(c).Warn("work index: stages of a batch unavailable", "err", err)
		return
	}
	for i := range rows {
		if st, ok := stages[rows[i].Number]; ok && rows[i].Stage == "" && found[rows[i].Number] {
			rows[i].Stage = stageLabel(tr, st)
		}
	}
}

// itemStage is a line's stage as the check read it, in tr's words ("" when unknown).
func itemStage(tr *i18n.Translator, it jobs.Item) string {
	if it.Stage == "" {
		return ""
	}
	return stageLabel(tr, workindex.Stage(it.Stage))
}

// maxMatchingQueryBytes bounds the filters "Archive all N matching" posts (a list's query string).
const maxMatchingQueryBytes = 4 << 10

// matchingContractNumbers are the numbers of every contract the contracts list shows for the
// posted filters (the list's query string), in the list's order, up to jobs.MaxItems:
// "Archive all N matching". The visibility rule of the list holds (docs/work-index.md): only rows
// revealed to the viewer are listed, one their token has not read within PORTAL_WORK_STALE_AFTER
// is re-read with it first, a row it can no longer read is left out (counted in left), so no
// number reaches the check that the viewer's own token has not read. The check then reads every
// number again, as for a typed list.
func (h *Handler) matchingContractNumbers(c *gin.Context, matching string) (numbers []string, left int, err error) {
	if h.work == nil {
		return nil, 0, errWorkOff
	}
	values, err := url.ParseQuery(matching)
	if err != nil || len(matching) > maxMatchingQueryBytes {
		return nil, 0, badRequest("work.error.matching")
	}
	f := parseWorkValues(values, tr(c), workindex.KindContract)
	if len(f.errs) > 0 {
		return nil, 0, badRequest("work.error.matching")
	}
	q := f.query
	q.Page, q.After, q.PerPage = 1, nil, workindex.MaxPerPage
	seen := map[string]bool{}
	for {
		page, err := h.work.List(c.Request.Context(), h.viewer(c), q)
		if err != nil {
			return nil, 0, fmt.Errorf("batch archive: the contracts matching the list: %w", err)
		}
		// refreshRows re-reads at most maxStaleRereads rows a call.
		for start := 0; start < len(page.Rows); start += maxStaleRereads {
			chunk := page.Rows[start:min(start+maxStaleRereads, len(page.Rows))]
			for _, r := range h.refreshRows(c, chunk, false, maxStaleRereads) {
				switch {
				case r.unchecked || r.ContractNumber == "":
					left++
				case !seen[r.ContractNumber]:
					if len(numbers) >= jobs.MaxItems {
						return numbers, left, nil
					}
					seen[r.ContractNumber] = true
					numbers = append(numbers, r.ContractNumber)
				}
			}
		}
		switch {
		case len(page.Rows) < q.PerPage:
			return numbers, left, nil
		case page.Next != nil:
			q.After = page.Next
		case q.After == nil && q.Page < page.Pages:
			q.Page++
		default:
			return numbers, left, nil
		}
	}
}
