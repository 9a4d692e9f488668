package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/i18n"
)

// exportURL is the export of the list's current search and order (every page) in format.
func (p customerListParams) exportURL(format string) string {
	u := p.url()
	q := u.Query()
	q.Del("page")
	q.Set("format", format)
	return "/customers/export?" + q.Encode()
}

// customerExportHeader are the columns of a customer export.
func customerExportHeader(tr *i18n.Translator) []string {
	return []string{
		tr.T("customers.export.col.id"), tr.T("customers.export.col.name"), tr.T("customers.export.col.tax_id"),
		tr.T("customers.export.col.email"), tr.T("customers.export.col.segment"), tr.T("customers.export.col.city"),
		tr.T("customers.export.col.country"), tr.T("customers.export.col.owners"), tr.T("customers.export.col.configurators"),
		tr.T("customers.export.col.updated"),
	}
}

func customerExportRow(r customercache.Row) []string {
	cpqs := make([]string, len(r.CPQIDs))
	for i, id := range r.CPQIDs {
		cpqs[i] = strconv.Itoa(int(id))
	}
	updated := ""
	if !r.UpdatedAt.IsZero() {
		updated = r.UpdatedAt.UTC().Format(time.RFC3339)
	}
	return []string{strconv.Itoa(int(r.ID)), r.Name, r.TaxID, r.Email, r.Segment, r.City, r.Country, r.Owners, strings.Join(cpqs, " "), updated}
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
	w, err := export.New(format, c.Writer, t(c, "customers.list.title"), customerExportHeader(tr(c)))
	if err != nil {
		h.log(c).Error("customer export failed", "err", err)
		return
	}
	err = walk(func(r customercache.Row) error {
		if err := context.Cause(c.Request.Context()); err != nil {
			return err // the user left
		}
		return w.WriteRow(customerExportRow(r))
	})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		h.log(c).Warn("customer export was cut", "err", err)
	}
}
