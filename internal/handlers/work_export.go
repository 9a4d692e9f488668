package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// maxWorkExportRows bounds a list export: an XLSX sheet holds 1,048,576 rows, and a list past a
// million rows is a job for the database, not a spreadsheet (docs/work-index.md "Exports").
const maxWorkExportRows = 1_000_000

// errWorkExportCut stops a walk at maxWorkExportRows.
var errWorkExportCut = errors.New("handlers: work export reached its row bound")

// exportWorkQuotes answers GET /work/quotes/export?format=csv|xlsx and the list's filters.
func (h *Handler) exportWorkQuotes(c *gin.Context) { h.exportWorkList(c, workindex.KindQuote) }

// exportWorkContracts answers GET /work/contracts/export?format=csv|xlsx and the list's filters.
func (h *Handler) exportWorkContracts(c *gin.Context) { h.exportWorkList(c, workindex.KindContract) }

// exportWorkList writes every row of the list's current filter and order as a file: amounts are
// numbers, dates are dates (internal/export), in the reader's CSV convention and time zone. The
// rows come from the work index through its keyset cursor one batch at a time (workindex.Walk):
// the list is never held whole. No row is re-read from the v2 API (an export would send one call
// per row): the walk gives only the rows revealed to the viewer (docs/work-index.md "Visibility
// rule": their own token read the row as it stands and was not refused since), filtered and
// ordered on those rows alone, as the list shows them; the others are left out of the file.
func (h *Handler) exportWorkList(c *gin.Context, kind workindex.Kind) {
	format, ok := export.ParseFormat(c.Query("format"))
	if !ok {
		h.fail(c, badRequest("error.export_format"))
		return
	}
	trl := tr(c)
	f := parseWorkFilters(c, trl, kind)
	if len(f.errs) > 0 {
		h.fail(c, badRequestMessage(i18n.M("work.export.invalid")))
		return
	}
	if h.work == nil {
		h.renderError(c, http.StatusServiceUnavailable, t(c, "error.unavailable.title"), t(c, "work.unavailable"))
		return
	}
	release, ok := h.startExport(c)
	if !ok {
		return
	}
	defer release()

	fileKey, sheetKey := "work.export.file.quotes", "work.quotes.title"
	if kind == workindex.KindContract {
		fileKey, sheetKey = "work.export.file.contracts", "work.contracts.title"
	}
	// The file starts with the first batch read: a database that cannot be read answers "lists
	// unavailable" (503) instead of an empty file.
	var w export.Writer
	start := func() error {
		stamp := h.now().UTC().Format("20060102-150405")
		name := safeFileName(trl.T(fileKey, stamp, string(format)), string(kind)+"s-"+stamp+"."+string(format))
		c.Header("Content-Type", format.ContentType())
		c.Header("Content-Disposition", contentDisposition("attachment", name))
		c.Header("Cache-Control", "no-store")
		var err error
		w, err = export.New(format, c.Writer, exportOptions(trl, trl.T(sheetKey), workExportColumns(trl, kind)))
		return err
	}
	viewer, written := h.viewer(c), 0
	var cells []any
	err := h.work.Walk(c.Request.Context(), viewer, f.query, func(r workindex.Row) error {
		if err := context.Cause(c.Request.Context()); err != nil {
			return err // the user left
		}
		if w == nil {
			if err := start(); err != nil {
				return err
			}
		}
		if written == maxWorkExportRows {
			return errWorkExportCut
		}
		if !r.Revealed() {
			return nil // never given by the walk: a row not revealed is left out, never written in part
		}
		written++
		cells = h.workExportRow(trl, r, cells)
		return w.WriteRow(cells)
	})
	if errors.Is(err, errWorkExportCut) {
		h.log(c).Warn("work export stopped at its row bound", "rows", written)
		err = nil
	}
	switch {
	case w == nil && errors.Is(err, workindex.ErrUnavailable):
		h.log(c).Warn("work index: export unavailable", "err", err)
		h.renderError(c, http.StatusServiceUnavailable, t(c, "error.unavailable.title"), t(c, "work.unavailable"))
		return
	case w == nil && err != nil:
		h.fail(c, err)
		return
	case w == nil:
		err = start() // no rows: the headings alone
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		// The headers are gone: the file is cut, and the browser reports a failed download.
		h.log(c).Warn("work export was cut", "err", err)
	}
}

// workExportColumns are the columns of a list export: the contracts' start with the contract and
// its quote, the quotes' name their contract after the stage.
func workExportColumns(trl *i18n.Translator, kind workindex.Kind) []export.Column {
	var cols []export.Column
	if kind == workindex.KindContract {
		cols = append(cols, export.Column{Header: trl.T("work.export.col.contract"), Width: 18},
			export.Column{Header: trl.T("work.export.col.contract_id"), Kind: export.Integer})
	}
	cols = append(cols,
		export.Column{Header: trl.T("work.export.col.quote"), Kind: export.Integer},
		export.Column{Header: trl.T("work.export.col.customer_id"), Kind: export.Integer},
		export.Column{Header: trl.T("work.export.col.customer"), Width: 28},
		export.Column{Header: trl.T("work.export.col.configurator"), Width: 20},
		export.Column{Header: trl.T("work.export.col.stage"), Width: 22})
	if kind == workindex.KindQuote {
		cols = append(cols, export.Column{Header: trl.T("work.export.col.contract"), Width: 18})
	}
	return append(cols,
		export.Column{Header: trl.T("work.export.col.one_off", "EUR"), Kind: export.Money},
		export.Column{Header: trl.T("work.export.col.monthly", "EUR"), Kind: export.Money},
		// The pipeline value the lists sort by and the home page adds up (issue 41).
		export.Column{Header: trl.T("work.export.col.value", "EUR"), Kind: export.Money},
		export.Column{Header: exportZoneHeader(trl, trl.T("work.export.col.changed")), Kind: export.DateTime},
		export.Column{Header: trl.T("work.export.col.changed_by"), Width: 20},
		export.Column{Header: exportZoneHeader(trl, trl.T("work.export.col.as_of")), Kind: export.DateTime},
		export.Column{Header: trl.T("work.export.col.link"), Width: 40},
	)
}

// workExportRow is one row in the reader's words, a cell per column of workExportColumns.
func (h *Handler) workExportRow(trl *i18n.Translator, r workindex.Row, cells []any) []any {
	cells = cells[:0]
	contractNumber := func() any {
		if r.ContractID < 1 {
			return nil
		}
		return firstNonEmptyString(r.ContractNumber, "#"+strconv.Itoa(int(r.ContractID)))
	}
	var link string
	switch r.Kind {
	case workindex.KindContract:
		link = contractPath(r.ContractID)
		var quoteID any
		if r.QuoteID > 0 {
			quoteID = r.QuoteID
		}
		cells = append(cells, contractNumber(), int64(r.ContractID), quoteID)
	default:
		link = quotes.Ref{CPQID: r.CPQID, CustomerID: r.CustomerID, QuoteID: r.QuoteID}.URL()
		cells = append(cells, r.QuoteID)
	}
	link = h.absoluteURL(link)
	customer := r.Customer
	if customer == "" {
		customer = trl.T("worklist.customer_fallback", strconv.Itoa(int(r.CustomerID)))
	}
	cells = append(cells, int64(r.CustomerID), customer, r.Configurator, stageLabel(trl, r.Stage))
	if r.Kind == workindex.KindQuote {
		cells = append(cells, contractNumber())
	}
	var seen any
	if !r.SeenAt.IsZero() {
		seen = r.SeenAt
	}
	return append(cells, float64(r.OneOffCents)/100, float64(r.MonthlyCents)/100, float64(r.ValueCents())/100, r.ChangedAt, r.ChangedByName, seen, link)
}

// absoluteURL is path on the portal's public address, so a link in a spreadsheet opens the page.
func (h *Handler) absoluteURL(path string) string {
	u := *h.cfg.PublicURL
	ref, err := url.Parse(path)
	if err != nil {
		return path
	}
	return u.ResolveReference(ref).String()
}
