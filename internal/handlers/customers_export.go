package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/i18n"
)

// exportURL is the export of the list's current search and order (every page) in format.
func (p customerListParams) exportURL(format string) string {
	return "/customers/export?" + p.query(format)
}

// customerExportColumns are the columns of a customer export. The tax id stays text (leading
// zeros, letters); the id is a number, the update a date.
func customerExportColumns(tr *i18n.Translator) []export.Column {
	return []export.Column{
		{Header: tr.T("customers.export.col.id"), Kind: export.Integer}, {Header: tr.T("customers.export.col.name"), Width: 32},
		{Header: tr.T("customers.export.col.tax_id"), Width: 16}, {Header: tr.T("customers.export.col.email"), Width: 28},
		{Header: tr.T("customers.export.col.segment"), Width: 16}, {Header: tr.T("customers.export.col.city"), Width: 18},
		{Header: tr.T("customers.export.col.country"), Width: 10}, {Header: tr.T("customers.export.col.owners"), Width: 28},
		{Header: tr.T("customers.export.col.configurators"), Width: 28},
		{Header: exportZoneHeader(tr, tr.T("customers.export.col.updated")), Kind: export.DateTime},
	}
}

// customerExportRow is one customer in the reader's words: the segment as a word, configurators
// by name (names may be nil: their numbered words then).
func customerExportRow(tr *i18n.Translator, configurators map[int32]string, r customercache.Row, cells []any) []any {
	var cpqs strings.Builder
	for i, id := range r.CPQIDs {
		if i > 0 {
			cpqs.WriteString(", ")
		}
		if name, ok := configurators[id]; ok {
			cpqs.WriteString(name)
		} else {
			cpqs.WriteString(tr.T("customer.configurator_id", strconv.Itoa(int(id))))
		}
	}
	return append(cells[:0], int64(r.ID), r.Name, r.TaxID, r.Email, segmentLabel(tr, r.Segment), r.City, r.Country, r.Owners, cpqs.String(), r.UpdatedAt)
}

// exportCustomers answers GET /customers/export?format=csv|xlsx&q=&cpqId=&sort=&dir=: every
// customer of the search in its order, streamed (internal/export): the rows are read from the
// user's cached list one at a time (customercache.Snapshot.Walk), never gathered in memory.
func (h *Handler) exportCustomers(c *gin.Context) {
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
	p, err := parseCustomerListParams(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	var walk func(fn func(customercache.Row) error) error
	if p.CPQID != 0 {
		found, err := h.api.Customers.Search(ctx, int64(p.CPQID), p.Query)
		if err != nil {
			h.fail(c, fmt.Errorf("customers: export the online search: %w", err))
			return
		}
		rows := make([]customercache.Row, 0, len(found))
		for i := range found {
			rows = append(rows, customercache.RowOf(&found[i]))
		}
		customercache.SortRows(rows, p.Sort, p.Desc)
		walk = func(fn func(customercache.Row) error) error {
			for _, r := range rows {
				if err := fn(r); err != nil {
					return err
				}
			}
			return nil
		}
	} else {
		snap, err := h.customers.Get(ctx, customerCacheKey(c))
		if err != nil {
			h.fail(c, fmt.Errorf("customers: export: %w", err))
			return
		}
		walk = func(fn func(customercache.Row) error) error {
			return snap.Walk(customercache.Query{Text: p.Query, Sort: p.Sort, Desc: p.Desc}, fn)
		}
	}
	name := t(c, "customers.export.file_name") + "-" + h.now().UTC().Format("20060102-150405") + "." + string(format)
	c.Header("Content-Type", format.ContentType())
	c.Header("Content-Disposition", contentDisposition("attachment", name))
	c.Header("Cache-Control", "no-store")
	tr := tr(c)
	configurators := h.configuratorNamesQuietly(c)
	w, err := export.New(format, c.Writer, exportOptions(tr, t(c, "customers.list.title"), customerExportColumns(tr)))
	if err != nil {
		h.log(c).Error("customer export failed", "err", err)
		return
	}
	var cells []any
	err = walk(func(r customercache.Row) error {
		if err := context.Cause(c.Request.Context()); err != nil {
			return err // the user left
		}
		cells = customerExportRow(tr, configurators, r, cells)
		return w.WriteRow(cells)
	})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		h.log(c).Warn("customer export was cut", "err", err)
	}
}
