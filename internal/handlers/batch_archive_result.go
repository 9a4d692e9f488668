package handlers

import (
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/jobs"
)

// downloadBatchResult answers GET /contracts/batch-archive/:jobId/result.csv: every line of the
// batch with its status, archive id and error (formula injection neutralised, internal/export).
func (h *Handler) downloadBatchResult(c *gin.Context) {
	job, err := h.loadJob(c, batchJobs)
	if err != nil {
		h.failBatch(c, err)
		return
	}
	tr := tr(c)
	// Headings, status words and messages are in the reader's language; the columns keep their
	// order in every language, so the file stays machine-readable.
	name := safeFileName(tr.T("batch.result.file", job.CreatedAt.UTC().Format("20060102-150405")), "batch-archive.csv")
	c.Header("Content-Type", export.CSV.ContentType())
	c.Header("Content-Disposition", contentDisposition("attachment", name))
	c.Header("Cache-Control", "no-store")
	// The customer and the stage are the ones the validation found for the line (jobs.Item.Customer
	// and Stage; empty for a line that was never found). A line left out for its stage says why in
	// the error column.
	columns := []export.Column{{Header: tr.T("batch.result.col.number")}, {Header: tr.T("batch.result.col.status")},
		{Header: tr.T("batch.result.col.archive_id")}, {Header: tr.T("batch.result.col.error")},
		{Header: tr.T("batch.result.col.line"), Kind: export.Integer}, {Header: tr.T("batch.result.col.note")},
		{Header: tr.T("batch.result.col.customer")}, {Header: tr.T("batch.result.col.verified")}, {Header: tr.T("batch.result.col.stage")}}
	w, err := export.New(export.CSV, c.Writer, exportOptions(tr, "", columns))
	if err != nil {
		h.log(c).Error("batch result: export failed", "err", err)
		return
	}
	cancelled := job.Status == jobs.StatusCancelled
	for _, it := range job.Items {
		status, _ := itemStatusText(tr, it, job.Status == jobs.StatusDraft, cancelled)
		verified := ""
		if it.Verified {
			verified = tr.T("batch.result.yes")
		}
		row := []any{it.Number, status, it.ArchiveID, it.ProblemMessage().In(tr), it.Line, it.NoteMessage().In(tr), it.Customer, verified, itemStage(tr, it)}
		if err := w.WriteRow(row); err != nil {
			h.log(c).Warn("batch result: the download was cut", "err", err)
			return
		}
	}
	if err := w.Close(); err != nil {
		h.log(c).Warn("batch result: the download was cut", "err", err)
	}
}
