package handlers

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/export"
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
	req := parseWorklistRequest(c)
	if req.problem == "" && len(req.quoteIDs) == 0 {
		req.problem = "Enter at least one quote id."
	}
	if req.problem != "" {
		h.fail(c, badRequest("%s", req.problem))
		return
	}
	rows, _, _, err := h.gatherWorklist(c, req)
	if err != nil {
		h.fail(c, err)
		return
	}
	name := "audit-worklist-" + h.now().UTC().Format("20060102-150405") + "." + string(format)
	c.Header("Content-Type", format.ContentType())
	c.Header("Content-Disposition", contentDisposition("attachment", name))
	c.Header("Cache-Control", "no-store")
	w, err := export.New(format, c.Writer, "Audit worklist", []string{"quote", "customer id", "customer", "when", "who", "action", "summary", "changes"})
	if err != nil {
		h.log(c).Error("worklist export failed", "err", err)
		return
	}
	for _, r := range rows {
		if err := w.WriteRow([]string{strconv.FormatInt(r.QuoteID, 10), strconv.Itoa(int(r.CustomerID)), r.Customer,
			r.At.UTC().Format(time.RFC3339), r.Actor, r.Action, r.Summary, r.ChangesText()}); err != nil {
			h.log(c).Warn("worklist export was cut", "err", err)
			return
		}
	}
	if err := w.Close(); err != nil {
		h.log(c).Warn("worklist export was cut", "err", err)
	}
}
