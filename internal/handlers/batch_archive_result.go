package handlers

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/jobs"
)

// downloadBatchResult answers GET /contracts/batch-archive/:jobId/result.csv: every line of the
// batch with its status, archive id and error (formula injection neutralised, internal/export).
func (h *Handler) downloadBatchResult(c *gin.Context) {
	job, err := h.loadBatch(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Content-Type", export.CSV.ContentType())
	c.Header("Content-Disposition", contentDisposition("attachment", "batch-archive-"+job.CreatedAt.Format("20060102-150405")+".csv"))
	c.Header("Cache-Control", "no-store")
	w, err := export.New(export.CSV, c.Writer, "", []string{"contract number", "status", "archive id", "error", "line", "note"})
	if err != nil {
		h.log(c).Error("batch result: export failed", "err", err)
		return
	}
	cancelled := job.Status == jobs.StatusCancelled
	for _, it := range job.Items {
		status, _ := itemStatusText(it, job.Status == jobs.StatusDraft, cancelled)
		if err := w.WriteRow([]string{it.Number, status, it.ArchiveID, it.Error, strconv.Itoa(it.Line), it.Note}); err != nil {
			h.log(c).Warn("batch result: the download was cut", "err", err)
			return
		}
	}
	if err := w.Close(); err != nil {
		h.log(c).Warn("batch result: the download was cut", "err", err)
	}
}
