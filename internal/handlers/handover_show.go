package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/handover"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/web/templates/backoffice"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
)

// A handover's page (preview, then live progress polled like the batch archive's), its actions
// (start, cancel, retry the failed: POSTs answered 303) and its result as CSV.

// loadHandover reads the :jobId handover of the signed-in user: a 400 for a malformed id, a 404
// for one that is not theirs or not a handover.
func (h *Handler) loadHandover(c *gin.Context) (*jobs.Job, error) {
	if h.jobs == nil {
		return nil, errJobsOff
	}
	id := c.Param("jobId")
	if !jobs.ValidID(id) {
		return nil, badRequest("handover.error.bad_id")
	}
	return h.jobs.GetKind(c.Request.Context(), jobs.KindHandover, id, auth.CurrentUser(c).Subject)
}

// showHandover answers GET /customers/handover/:jobId.
func (h *Handler) showHandover(c *gin.Context) {
	job, err := h.loadHandover(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.handOverToken(c, job)
	h.renderPage(c, http.StatusOK, t(c, "handover.title"), layout.SectionCustomers, backoffice.HandoverPage(h.handoverVM(c, job)))
}

// showHandoverProgress answers GET /customers/handover/:jobId/progress[?after=<version>]: the
// region once it differs from after, the job ended, or batchProgressHold passed.
func (h *Handler) showHandoverProgress(c *gin.Context) {
	job, err := h.loadHandover(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.handOverToken(c, job)
	if after := c.Query("after"); after != "" {
		if job, err = h.waitForJobChange(c, job, after, h.loadHandover); err != nil {
			if c.Request.Context().Err() == nil {
				h.fail(c, err)
			}
			return
		}
	}
	c.Header("Cache-Control", "no-store")
	h.render(c, http.StatusOK, backoffice.HandoverProgress(h.handoverVM(c, job)))
}

// handoverAction runs act on the user's handover and goes back to its page.
func (h *Handler) handoverAction(c *gin.Context, act func(job *jobs.Job, s *session.Session) error) {
	job, err := h.loadHandover(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := act(job, auth.CurrentSession(c)); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, handoverPath(job.ID))
}

// startHandover answers POST /customers/handover/:jobId/start.
func (h *Handler) startHandover(c *gin.Context) {
	h.handoverAction(c, func(job *jobs.Job, s *session.Session) error {
		_, err := h.jobs.Start(c.Request.Context(), job.ID, s.Subject, s.AccessToken, s.TokenExpiry)
		return err
	})
}

// cancelHandover answers POST /customers/handover/:jobId/cancel.
func (h *Handler) cancelHandover(c *gin.Context) {
	h.handoverAction(c, func(job *jobs.Job, s *session.Session) error {
		_, err := h.jobs.Cancel(c.Request.Context(), job.ID, s.Subject)
		return err
	})
}

// retryHandover answers POST /customers/handover/:jobId/retry: only the failed lines run again
// (each checked first when it may have been sent).
func (h *Handler) retryHandover(c *gin.Context) {
	h.handoverAction(c, func(job *jobs.Job, s *session.Session) error {
		_, err := h.jobs.RetryFailed(c.Request.Context(), job.ID, s.Subject, s.AccessToken, s.TokenExpiry)
		return err
	})
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
	vm := backoffice.HandoverVM{ID: j.ID, URL: handoverPath(j.ID), Draft: j.Status == jobs.StatusDraft, Active: j.Active(),
		Cancelling: j.Active() && j.CancelRequested, WaitingForSignIn: j.Active() && j.WaitingForSignIn,
		Status: batchStatusText(tr, j), Version: batchVersion(j), Total: counts.Total, Done: counts.Done, Failed: counts.Failed,
		Left: counts.Left, Rejected: counts.Rejected, Resumed: j.Resumes, Verified: j.Verified(), Unverified: j.Unverified(), Created: j.CreatedAt}
	vm.CanRetry = !vm.Active && !vm.Draft && counts.Failed > 0
	if counts.Total > 0 {
		vm.Percent = (counts.Done + counts.Failed + counts.Rejected) * 100 / counts.Total
	}
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
	job, err := h.loadHandover(c)
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
