package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
	"github.com/cpqportal/portal/web/templates/layout"
)

// The import's run (issue 34, docs/backoffice.md "Import customers"): POST
// /customers/import/:importId/run turns the dry run into a job of the job engine (kind
// customer_import, internal/customerimport.Kind: every line of the file, the included ones to
// create, the others left out with the dry run's reason), starts it with the person's token and
// goes to its page, /customers/import-runs/:jobId: live progress polled like the batch archive's,
// cancel, retry of the failed lines, the result as CSV or XLSX.

func importRunPath(id string) string { return "/customers/import-runs/" + id }

// runImport answers POST /customers/import/:importId/run.
func (h *Handler) runImport(c *gin.Context) {
	if h.jobs == nil {
		h.fail(c, errJobsOff)
		return
	}
	imp, err := h.loadImport(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	counts, err := h.imports.Counts(ctx, imp.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	if counts.Included() == 0 {
		h.fail(c, badRequest("import.run.error.nothing_included"))
		return
	}
	// The configurator whose customer search finds a created customer by tax id (any one: a
	// customer created without configurators is offered by all of them, A8).
	cfgs, err := h.configuratorList(h.apiContext(c), customerCacheKey(c))
	if err != nil {
		h.fail(c, err)
		return
	}
	if len(cfgs) == 0 {
		h.fail(c, badRequest("import.run.error.no_configurator"))
		return
	}
	cpqID := int64(cfgs[0].ID)
	lines, err := h.imports.BeginRun(ctx, imp.ID, imp.Owner)
	if errors.Is(err, customerimport.ErrNotDraft) {
		h.fail(c, jobs.ErrState)
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	job, err := h.createImportRun(c, imp, lines, cpqID)
	if err != nil {
		if gone := h.imports.AbandonRun(ctx, imp.ID, imp.Owner); gone != nil {
			h.log(c).Warn("customer import: giving the import back failed", "err", gone)
		}
		h.fail(c, err)
		return
	}
	if err := h.imports.RecordRun(ctx, job.ID, imp.Owner, imp.FileName); err != nil {
		// The run works without its name; the list says "Import run" instead.
		h.log(c).Warn("customer import: naming the run failed", "err", err)
	}
	if err := h.imports.EndRun(ctx, imp.ID, imp.Owner); err != nil {
		// The job holds the lines; the import left "starting" goes after its retention.
		h.log(c).Warn("customer import: deleting the run's import failed", "err", err)
	}
	s := auth.CurrentSession(c)
	if _, err := h.jobs.Start(ctx, job.ID, s.Subject, s.AccessToken, s.TokenExpiry); err != nil {
		// The draft waits on its page with its start button (e.g. too many jobs running).
		h.log(c).Info("customer import: the run was not started", "job", job.ID, "err", err)
	}
	h.log(c).Info("customer import run created", "job", job.ID, "lines", len(lines), "included", counts.Included())
	c.Redirect(http.StatusSeeOther, importRunPath(job.ID))
}

func (h *Handler) createImportRun(c *gin.Context, imp *customerimport.Import, lines []customerimport.StoredLine, cpqID int64) (*jobs.Job, error) {
	items := make([]jobs.Item, 0, len(lines))
	for _, l := range lines {
		it, err := customerimport.RunItem(imp.FileName, l, cpqID)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	u := auth.CurrentUser(c)
	job, err := h.jobs.CreateKind(c.Request.Context(), jobs.KindCustomerImport, u.Subject, u.Name, items)
	if errors.Is(err, jobs.ErrNothingToArchive) {
		return nil, badRequest("import.run.error.nothing_included")
	}
	return job, err
}

// importRunJobs are the pages of an import's run (job_page.go); the page is not stored either.
var importRunJobs = &jobPage{kind: jobs.KindCustomerImport, path: importRunPath, badID: "import.run.error.bad_id",
	section: layout.SectionCustomers, noStore: true, page: (*Handler).importRunPage, progress: (*Handler).importRunProgress}

// importRunPage is the page of GET /customers/import-runs/:jobId.
func (h *Handler) importRunPage(c *gin.Context, job *jobs.Job) (string, templ.Component, error) {
	vm := h.importRunVM(c, job)
	return t(c, "import.run.title", vm.FileName), customers.ImportRunPage(vm), nil
}

// importRunProgress is the progress region of GET /customers/import-runs/:jobId/progress.
func (h *Handler) importRunProgress(c *gin.Context, job *jobs.Job) templ.Component {
	return customers.ImportRunProgress(h.importRunVM(c, job))
}

// importRunItemStatus is a line's status in words of tr's language (also the result file's).
func importRunItemStatus(tr *i18n.Translator, it jobs.Item, draft, cancelled bool) (string, components.BadgeLevel) {
	switch it.Status {
	case jobs.ItemDone:
		return tr.T("import.run.item.created"), components.BadgeSuccess
	case jobs.ItemFailed:
		if it.MaybeSent && !it.Problem.IsZero() && it.Problem.Key == "import.run.unverifiable" {
			return tr.T("import.run.item.unknown"), components.BadgeWarning
		}
		return tr.T("batch.item.failed"), components.BadgeDanger
	case jobs.ItemRejected:
		return tr.T("import.run.item.skipped"), components.BadgeNeutral
	case jobs.ItemRunning:
		return tr.T("batch.item.in_flight"), components.BadgeInfo
	}
	switch {
	case draft:
		return tr.T("import.run.item.will_create"), components.BadgeInfo
	case it.MaybeSent:
		// Sent before an interruption, not checked yet: never called "not created".
		return tr.T("import.run.item.unknown"), components.BadgeWarning
	case cancelled:
		return tr.T("import.run.item.not_created_cancelled"), components.BadgeNeutral
	}
	return tr.T("batch.item.waiting"), components.BadgeNeutral
}

// importRunMessage is a line's message: its problem, else its note, else that it was checked.
func importRunMessage(tr *i18n.Translator, it jobs.Item) string {
	if msg := it.ProblemMessage().In(tr); msg != "" {
		return msg
	}
	if msg := customerimport.RunNoteMessage(it).In(tr); msg != "" {
		return msg
	}
	if it.Verified {
		return tr.T("batch.note.verified")
	}
	return ""
}

func (h *Handler) importRunVM(c *gin.Context, j *jobs.Job) customers.ImportRunVM {
	tr := tr(c)
	counts := j.Counts()
	vm := customers.ImportRunVM{Job: jobVM(tr, j, importRunPath(j.ID)), Started: j.CreatedAt}
	if len(j.Items) > 0 {
		if l, err := customerimport.RunLineOf(j.Items[0]); err == nil {
			vm.FileName = l.File
		}
	}
	vm.StartLabel = tr.Plural(counts.Left, "import.run.button.one", "import.run.button.other")
	cancelled := j.Status == jobs.StatusCancelled
	for _, it := range j.Items {
		if len(vm.Rows) >= maxBatchRowsShown {
			vm.MoreRows++
			continue
		}
		row := customers.ImportRunRow{Line: it.Line, Name: it.Customer, TaxID: it.Number, Message: importRunMessage(tr, it)}
		if l, err := customerimport.RunLineOf(it); err == nil {
			row.Row = l.Row
		}
		row.Status, row.Level = importRunItemStatus(tr, it, vm.Draft, cancelled)
		if id := customerimport.RunResultOf(it).CustomerID; id > 0 && it.Status == jobs.ItemDone {
			row.CustomerURL, row.CustomerText = customerHref(id), tr.T("import.open_customer", id)
			row.CustomerID = strconv.Itoa(int(id))
		}
		vm.Rows = append(vm.Rows, row)
	}
	return vm
}

// downloadImportRunResult answers GET /customers/import-runs/:jobId/result?format=csv|xlsx: every
// line with its row, customer, status, the new customer's id and the message (typed columns; a
// CSV's cells neutralised against formula injection).
func (h *Handler) downloadImportRunResult(c *gin.Context) {
	job, err := h.loadJob(c, importRunJobs)
	if err != nil {
		h.fail(c, err)
		return
	}
	format, ok := export.ParseFormat(c.DefaultQuery("format", "csv"))
	if !ok {
		h.fail(c, badRequest("import.run.error.bad_format"))
		return
	}
	tr := tr(c)
	name := safeFileName(tr.T("import.run.result.file", job.CreatedAt.UTC().Format("20060102-150405"))+"."+string(format), "customer-import."+string(format))
	c.Header("Content-Type", format.ContentType())
	c.Header("Content-Disposition", contentDisposition("attachment", name))
	c.Header("Cache-Control", "no-store")
	columns := []export.Column{{Header: tr.T("import.col.row"), Kind: export.Integer},
		{Header: tr.T("customer.field.name")}, {Header: tr.T("customer.field.tax_id")}, {Header: tr.T("batch.col.status")},
		{Header: tr.T("import.run.col.customer_id"), Kind: export.Integer}, {Header: tr.T("batch.col.message")}}
	w, err := export.New(format, c.Writer, exportOptions(tr, tr.T("import.run.result.sheet"), columns))
	if err != nil {
		h.log(c).Error("import result: export failed", "err", err)
		return
	}
	draft, cancelled := job.Status == jobs.StatusDraft, job.Status == jobs.StatusCancelled
	for _, it := range job.Items {
		status, _ := importRunItemStatus(tr, it, draft, cancelled)
		var row, id any
		if l, err := customerimport.RunLineOf(it); err == nil {
			row = l.Row
		}
		if cid := customerimport.RunResultOf(it).CustomerID; cid > 0 && it.Status == jobs.ItemDone {
			id = cid
		}
		if err := w.WriteRow([]any{row, it.Customer, it.Number, status, id, importRunMessage(tr, it)}); err != nil {
			h.log(c).Warn("import result: the download was cut", "err", err)
			return
		}
	}
	if err := w.Close(); err != nil {
		h.log(c).Warn("import result: the download was cut", "err", err)
	}
}
