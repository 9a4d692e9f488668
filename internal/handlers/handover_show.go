package handlers

import (
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/handover"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/web/templates/backoffice"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
)

// A handover's page (preview, then live progress polled like the batch archive's), its actions
// (start, cancel, retry the failed: POSTs answered 303) and its result as CSV.

// handoverJobs are the pages of a handover (job_page.go).
var handoverJobs = &jobPage{kind: jobs.KindHandover, path: handoverPath, badID: "handover.error.bad_id", section: layout.SectionCustomers,
	page: (*Handler).handoverPage, progress: (*Handler).handoverProgress}

// handoverPage is the page of GET /customers/handover/:jobId.
func (h *Handler) handoverPage(c *gin.Context, job *jobs.Job) (string, templ.Component, error) {
	return t(c, "handover.title"), backoffice.HandoverPage(h.handoverVM(c, job)), nil
}

// handoverProgress is the progress region of GET /customers/handover/:jobId/progress.
func (h *Handler) handoverProgress(c *gin.Context, job *jobs.Job) templ.Component {
	return backoffice.HandoverProgress(h.handoverVM(c, job))
}

// handoverNames are the owners' labels the user's cached customer list knows (never a v2 call:
// a progress poll costs the v2 API nothing).
func (h *Handler) handoverNames(c *gin.Context) map[int64]string {
	names := map[int64]string{}
	if snap, ok := h.customers.Peek(customerCacheKey(c)); ok {
		for _, o := range snap.Owners() {
			names[o.ID] = ownerChoiceLabel(o.ID, o.Name, o.Email)
		}
	}
	return names
}

// handoverItemStatus is a line's status in words of tr's language (also the CSV's).
func handoverItemStatus(tr *i18n.Translator, it jobs.Item, draft, cancelled bool) (string, components.BadgeLevel) {
	switch it.Status {
	case jobs.ItemDone:
		return tr.T("handover.item.changed"), components.BadgeSuccess
	case jobs.ItemFailed:
		return tr.T("batch.item.failed"), components.BadgeDanger
	case jobs.ItemRejected:
		return tr.T("batch.item.left_out"), components.BadgeWarning
	case jobs.ItemRunning:
		return tr.T("batch.item.in_flight"), components.BadgeInfo
	}
	switch {
	case draft:
		return tr.T("handover.item.will_change"), components.BadgeInfo
	case it.MaybeSent:
		// Sent before an interruption, not checked yet: never called "not changed".
		return tr.T("handover.item.not_verified"), components.BadgeWarning
	case cancelled:
		return tr.T("handover.item.not_changed_cancelled"), components.BadgeNeutral
	}
	return tr.T("batch.item.waiting"), components.BadgeNeutral
}

// handoverMessage is a line's message: its problem, else its note, else that it was checked.
func handoverMessage(tr *i18n.Translator, it jobs.Item) string {
	if msg := it.ProblemMessage().In(tr); msg != "" {
		return msg
	}
	if msg := handover.NoteMessage(it).In(tr); msg != "" {
		return msg
	}
	if l, err := handover.LineOf(it); err == nil && l.Release && it.Status == jobs.ItemPending {
		return tr.T("handover.line.will_release")
	}
	if it.Verified {
		return tr.T("batch.note.verified")
	}
	return ""
}

// ownersAfter names a done line's owners after the change.
func ownersAfter(names map[int64]string, it jobs.Item) string {
	var out []string
	for _, id := range handover.ResultOf(it).Owners {
		out = append(out, ownerName(names, id))
	}
	return strings.Join(out, ", ")
}

func (h *Handler) handoverVM(c *gin.Context, j *jobs.Job) backoffice.HandoverVM {
	tr := tr(c)
	names := h.handoverNames(c)
	counts := j.Counts()
	vm := backoffice.HandoverVM{Job: jobVM(tr, j, handoverPath(j.ID)), Created: j.CreatedAt}
	if len(j.Items) > 0 {
		if l, err := handover.LineOf(j.Items[0]); err == nil {
			vm.Summary = tr.T("handover.summary", ownerName(names, l.From), ownerName(names, l.To))
		}
	}
	vm.StartLabel = backoffice.Count(tr, counts.Left, "handover.start.one", "handover.start.other")
	vm.ConcurrencyMessage = backoffice.Count(tr, max(h.cfg.BatchConcurrency, 1), "handover.preview.concurrency.one", "handover.preview.concurrency.other")
	cancelled := j.Status == jobs.StatusCancelled
	for _, it := range j.Items {
		if it.Status == jobs.ItemRunning {
			vm.Current = append(vm.Current, it.Customer)
		}
		if len(vm.Rows) >= maxBatchRowsShown {
			vm.MoreRows++
			continue
		}
		row := backoffice.HandoverRow{Line: it.Line, Message: handoverMessage(tr, it), Verified: it.Verified,
			Customer: backoffice.HandoverCustomer{ID: it.Number, Name: it.Customer}}
		if id, err := strconv.ParseInt(it.Number, 10, 32); err == nil {
			row.Customer.URL = customerHref(int32(id))
		}
		if row.Customer.Name == "" {
			row.Customer.Name = it.Number
		}
		row.Status, row.Level = handoverItemStatus(tr, it, vm.Draft, cancelled)
		if it.Status == jobs.ItemDone {
			row.Owners = ownersAfter(names, it)
		}
		vm.Rows = append(vm.Rows, row)
	}
	return vm
}

// downloadHandoverResult answers GET /customers/handover/:jobId/result.csv: every line with its
// status, the owners after the change and the error (formula injection neutralised).
func (h *Handler) downloadHandoverResult(c *gin.Context) {
	job, err := h.loadJob(c, handoverJobs)
	if err != nil {
		h.fail(c, err)
		return
	}
	tr := tr(c)
	names := h.handoverNames(c)
	name := safeFileName(tr.T("handover.result.file", job.CreatedAt.UTC().Format("20060102-150405")), "customer-handover.csv")
	c.Header("Content-Type", export.CSV.ContentType())
	c.Header("Content-Disposition", contentDisposition("attachment", name))
	c.Header("Cache-Control", "no-store")
	columns := []export.Column{{Header: tr.T("handover.result.col.customer_id"), Kind: export.Integer},
		{Header: tr.T("handover.result.col.customer")}, {Header: tr.T("handover.result.col.status")},
		{Header: tr.T("handover.result.col.from")}, {Header: tr.T("handover.result.col.to")},
		{Header: tr.T("handover.result.col.owners_after")}, {Header: tr.T("handover.result.col.message")},
		{Header: tr.T("handover.result.col.verified")}, {Header: tr.T("handover.result.col.line"), Kind: export.Integer}}
	w, err := export.New(export.CSV, c.Writer, exportOptions(tr, "", columns))
	if err != nil {
		h.log(c).Error("handover result: export failed", "err", err)
		return
	}
	cancelled := job.Status == jobs.StatusCancelled
	for _, it := range job.Items {
		status, _ := handoverItemStatus(tr, it, job.Status == jobs.StatusDraft, cancelled)
		l, _ := handover.LineOf(it)
		verified := ""
		if it.Verified {
			verified = tr.T("batch.result.yes")
		}
		id, _ := strconv.ParseInt(it.Number, 10, 64)
		after := ""
		if it.Status == jobs.ItemDone {
			after = ownersAfter(names, it)
		}
		row := []any{id, it.Customer, status, ownerName(names, l.From), ownerName(names, l.To), after, handoverMessage(tr, it), verified, it.Line}
		if err := w.WriteRow(row); err != nil {
			h.log(c).Warn("handover result: the download was cut", "err", err)
			return
		}
	}
	if err := w.Close(); err != nil {
		h.log(c).Warn("handover result: the download was cut", "err", err)
	}
}
