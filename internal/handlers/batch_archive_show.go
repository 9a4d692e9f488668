package handlers

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/web/templates/backoffice"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
)

// maxBatchRowsShown bounds the lines a batch page lists (the CSV has them all).
const maxBatchRowsShown = 500

// batchJobs are the pages of a batch (job_page.go): a batch the store does not know answers
// failBatch's 404, and the page lists every line of an ended batch, a page at a time.
var batchJobs = &jobPage{kind: jobs.KindArchive, path: batchPath, badID: "batch.error.bad_id", section: layout.SectionContracts,
	page: (*Handler).batchPage, progress: (*Handler).batchProgress, fail: (*Handler).failBatch}

// failBatch answers a batch page, its progress region or its result download that could not be
// read. A batch the store does not know (any more: its record was lost, or it was removed or
// expired; another user's reads the same) is a 404 that says so and what to do, in full: the page
// for a page or a download, the progress region (no longer polling) for the region's own request.
// Anything else goes to the error edge.
func (h *Handler) failBatch(c *gin.Context, err error) {
	if !errors.Is(err, jobs.ErrNotFound) {
		h.fail(c, err)
		return
	}
	h.log(c).Info("batch not known", slog.String("path", c.Request.URL.Path), slog.Any("err", err))
	c.Header("Cache-Control", "no-store")
	if isHTMX(c) {
		h.render(c, http.StatusNotFound, backoffice.BatchMissingProgress())
		return
	}
	h.renderPage(c, http.StatusNotFound, t(c, "batch.missing.title"), layout.SectionContracts, backoffice.BatchMissingPage())
}

// batchPage is the page of GET /contracts/batch-archive/:jobId[?page=]: the preview of a draft,
// or the progress.
func (h *Handler) batchPage(c *gin.Context, job *jobs.Job) (string, templ.Component, error) {
	page, err := batchPageParam(c)
	if err != nil {
		return "", nil, err
	}
	vm := h.batchVM(c, tr(c), job)
	if !vm.Draft && !vm.Active {
		batchLinesPage(c, tr(c), job, page, &vm)
	}
	return t(c, "batch.title"), backoffice.BatchPage(vm), nil
}

// batchProgress is the progress region of GET /contracts/batch-archive/:jobId/progress.
func (h *Handler) batchProgress(c *gin.Context, job *jobs.Job) templ.Component {
	vm := h.batchVM(c, tr(c), job)
	if !vm.Draft && !vm.Active {
		// The batch ended while its page waited: the region now lists every line (first page).
		batchLinesPage(c, tr(c), job, 1, &vm)
	}
	return backoffice.BatchProgress(vm)
}

// batchStatusText says where a batch stands, in words of tr's language.
func batchStatusText(tr *i18n.Translator, j *jobs.Job) string {
	switch {
	case j.Status == jobs.StatusDraft:
		return tr.T("batch.status.not_started")
	case j.Active() && j.CancelRequested:
		return tr.T("batch.status.cancelling")
	case j.Active() && j.WaitingForSignIn:
		return tr.T("batch.status.paused")
	case j.Status == jobs.StatusQueued:
		return tr.T("batch.status.queued")
	case j.Status == jobs.StatusRunning:
		return tr.T("batch.status.running")
	case j.Status == jobs.StatusCancelled:
		return tr.T("batch.status.cancelled")
	case j.Status == jobs.StatusStopped:
		return tr.T("batch.status.record_lost")
	}
	if c := j.Counts(); c.Failed > 0 {
		return tr.T("batch.status.finished_failed", c.Failed)
	}
	return tr.T("batch.status.finished")
}

func (h *Handler) batchVM(gc *gin.Context, tr *i18n.Translator, j *jobs.Job) backoffice.BatchVM {
	c := j.Counts()
	vm := backoffice.BatchVM{Job: jobVM(tr, j, batchPath(j.ID)), Pending: c.Left, Current: j.Current(),
		Concurrency: max(h.cfg.BatchConcurrency, 1)}
	// A batch whose record was lost is resumed (all its lines that did not end), not retried.
	vm.RecordLost = j.Status == jobs.StatusStopped
	vm.CanRetry = vm.CanRetry && !vm.RecordLost
	if vm.Draft {
		vm.IncludeUnsent, vm.IncludeAll = unsentNumbers(j)
	}
	vm.Summary = tr.T("batch.preview.summary",
		backoffice.Count(tr, c.Left, "batch.preview.pending.one", "batch.preview.pending.other"),
		backoffice.Count(tr, c.Done, "batch.preview.done.one", "batch.preview.done.other"),
		backoffice.Count(tr, c.Rejected, "batch.preview.rejected.one", "batch.preview.rejected.other"))
	vm.StartLabel = backoffice.Count(tr, c.Left, "batch.start.one", "batch.start.other")
	for _, it := range j.Items {
		if len(vm.Rows) >= maxBatchRowsShown {
			break
		}
		if !vm.Draft && it.Status != jobs.ItemFailed && it.Status != jobs.ItemRejected && !it.Verified && !it.MaybeSent {
			continue
		}
		row := backoffice.BatchItemRow{Line: it.Line, Number: it.Number, Customer: it.Customer, ArchiveID: it.ArchiveID,
			Message: it.ProblemMessage().In(tr)}
		row.Status, row.Level = itemStatusText(tr, it, vm.Draft, j.Status == jobs.StatusCancelled)
		if row.Message == "" {
			row.Message = it.NoteMessage().In(tr)
		}
		if row.Message == "" && it.Verified {
			row.Message = tr.T("batch.note.verified")
		}
		row.Verified = it.Verified
		if vm.Draft || it.Status == jobs.ItemRejected {
			row.Stage = itemStage(tr, it)
		}
		vm.Rows = append(vm.Rows, row)
	}
	if vm.Draft {
		h.addIndexedStages(gc, tr, j.Items, vm.Rows)
	}
	return vm
}

// itemStatusText is an item's status in words of tr's language (also the CSV's status column).
func itemStatusText(tr *i18n.Translator, it jobs.Item, draft, cancelled bool) (string, components.BadgeLevel) {
	switch it.Status {
	case jobs.ItemDone:
		if it.Note == jobs.NoteAlreadyArchived {
			return tr.T("batch.item.already_archived"), components.BadgeSuccess
		}
		return tr.T("batch.item.archived"), components.BadgeSuccess
	case jobs.ItemFailed:
		return tr.T("batch.item.failed"), components.BadgeDanger
	case jobs.ItemRejected:
		return tr.T("batch.item.left_out"), components.BadgeWarning
	case jobs.ItemRunning:
		return tr.T("batch.item.in_flight"), components.BadgeInfo
	}
	switch {
	case draft:
		return tr.T("batch.item.will_archive"), components.BadgeInfo
	case it.MaybeSent:
		// Sent before an interruption, not checked yet: never called "not archived".
		return tr.T("batch.item.not_verified"), components.BadgeWarning
	case cancelled:
		return tr.T("batch.item.not_archived_cancelled"), components.BadgeNeutral
	}
	return tr.T("batch.item.waiting"), components.BadgeNeutral
}

// batchLinesPerPage is how many lines a page of an ended batch lists.
const batchLinesPerPage = 100

// batchPageParam reads ?page= of a batch's page (1 when absent; 400 when not a page number).
func batchPageParam(c *gin.Context) (int, error) {
	raw := c.Query("page")
	if raw == "" {
		return 1, nil
	}
	n, err := parseID(raw, "page", jobs.MaxItems/batchLinesPerPage+1)
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// batchLinesPage lists every line of an ended batch, a page at a time in the list's order, each
// with a link to its contract (found by its number: /contracts/lookup?q=, the number only ever in
// the query) when the check found the contract.
func batchLinesPage(c *gin.Context, tr *i18n.Translator, j *jobs.Job, page int, vm *backoffice.BatchVM) {
	pages := max(1, (len(j.Items)+batchLinesPerPage-1)/batchLinesPerPage)
	page = min(max(page, 1), pages)
	vm.Rows = vm.Rows[:0]
	vm.AllLines = true
	for _, it := range j.Items[(page-1)*batchLinesPerPage : min(page*batchLinesPerPage, len(j.Items))] {
		row := backoffice.BatchItemRow{Line: it.Line, Number: it.Number, Customer: it.Customer, ArchiveID: it.ArchiveID,
			Message: it.ProblemMessage().In(tr), Verified: it.Verified}
		row.Status, row.Level = itemStatusText(tr, it, false, j.Status == jobs.StatusCancelled)
		if row.Message == "" {
			row.Message = it.NoteMessage().In(tr)
		}
		if row.Message == "" && it.Verified {
			row.Message = tr.T("batch.note.verified")
		}
		if it.Status == jobs.ItemRejected {
			row.Stage = itemStage(tr, it)
		}
		if it.Status != jobs.ItemRejected || it.Problem.Key == leftOutUnsent {
			row.Href = "/contracts/lookup?" + url.Values{"q": {it.Number}}.Encode()
		}
		vm.Rows = append(vm.Rows, row)
	}
	base := *c.Request.URL
	base.Path = batchPath(j.ID)
	q := base.Query()
	q.Del("after")
	base.RawQuery = q.Encode()
	vm.Pager = components.NewPager(base, "page", page, pages, "")
	vm.LinesShown = tr.T("batch.rows.shown", (page-1)*batchLinesPerPage+1, (page-1)*batchLinesPerPage+len(vm.Rows), len(j.Items))
}
