package handlers

import (
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/contracts"
)

// exportWorklist answers GET /audits/worklist/export?format=csv|xlsx&...: the rows the worklist
// shows for the same query, as a file (internal/export: CSV neutralised against formulas, XLSX
// through excelize's stream writer).
func (h *Handler) exportWorklist(c *gin.Context) {
	format, ok := export.ParseFormat(c.Query("format"))
	if !ok {
		h.fail(c, badRequest("error.export_format"))
		return
	}
	release, ok := h.startExport(c)
	if !ok {
		return
	}
	defer release()
	req := parseWorklistRequest(c)
	if req.problem.IsZero() {
		if _, _, err := h.changedQuotes(c, &req); err != nil {
			h.fail(c, err)
			return
		}
	}
	if req.problem.IsZero() && len(req.quoteIDs) == 0 && !req.changed {
		req.problem = i18n.M("worklist.error.no_quotes_export")
	}
	if !req.problem.IsZero() {
		h.fail(c, badRequestMessage(req.problem))
		return
	}
	rows, _, _, err := h.gatherWorklist(c, req)
	if err != nil {
		h.fail(c, err)
		return
	}
	tr := tr(c)
	// The file's name, column headings and cells are in the reader's language, convention and
	// time zone (the heading names it); the columns' order stays the same in every language.
	name := safeFileName(tr.T("export.worklist.file", h.now().UTC().Format("20060102-150405"), string(format)), "audit-worklist."+string(format))
	c.Header("Content-Type", format.ContentType())
	c.Header("Content-Disposition", contentDisposition("attachment", name))
	c.Header("Cache-Control", "no-store")
	columns := []export.Column{{Header: tr.T("export.worklist.col.quote"), Kind: export.Integer}, {Header: tr.T("export.worklist.col.customer_id"), Kind: export.Integer},
		{Header: tr.T("export.worklist.col.customer"), Width: 28}, {Header: exportZoneHeader(tr, tr.T("export.worklist.col.when")), Kind: export.DateTime},
		{Header: tr.T("export.worklist.col.who"), Width: 20}, {Header: tr.T("export.worklist.col.action"), Width: 22},
		{Header: tr.T("export.worklist.col.summary"), Width: 48}, {Header: tr.T("export.worklist.col.changes"), Width: 60}}
	w, err := export.New(format, c.Writer, exportOptions(tr, tr.T("export.worklist.sheet"), columns))
	if err != nil {
		h.log(c).Error("worklist export failed", "err", err)
		return
	}
	for _, r := range rows {
		if err := w.WriteRow([]any{r.QuoteID, int64(r.CustomerID), r.Customer,
			r.At, r.Who(tr).Name, contracts.ActionLabel(tr, r.Action), r.Summary, r.ChangesText(tr)}); err != nil {
			h.log(c).Warn("worklist export was cut", "err", err)
			return
		}
	}
	if err := w.Close(); err != nil {
		h.log(c).Warn("worklist export was cut", "err", err)
	}
}
