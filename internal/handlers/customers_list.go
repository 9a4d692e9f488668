package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/work"
)

// The customer list (GET /customers): the portal's own search over the whole list
// (GET /v2/customer/, kept per user by internal/customercache), or a configurator's online
// search (GET /v2/customer/onlinesearch/{cpqId}). One search box serves both; the source is
// shown on each row. Choices where the issue and the spec are silent: docs/customers.md.

const (
	// customerPageSize is the number of rows per page.
	customerPageSize = 25
	// maxCustomerQueryRunes bounds the search text (the online search refuses more than 200,
	// docs/v2-assumptions.md A8).
	maxCustomerQueryRunes = 200
	// maxCustomerPage bounds the page parameter (100,000 customers are 4,000 pages).
	maxCustomerPage = 1_000_000
	// customerListPageWait is how long a full page waits for a list that is not cached yet; after
	// that the page is sent with a "loading" region that fetches itself (the fetch goes on).
	customerListPageWait = 2 * time.Second
	// customerCacheUsers bounds how many users' lists are kept (about 11 MiB each for 100,000
	// customers, see docs/customers.md).
	customerCacheUsers = 5
	// onlineSearchLimit is the most the online search answers (A8).
	onlineSearchLimit = 50
)

// NewCustomerCache builds the per-user customer list cache (Deps.Customers). A fetch of the whole list may take
// four times the time limit of an ordinary v2 call.
func NewCustomerCache(api *apiclient.Client, cfg config.Config, now func() time.Time) *customercache.Cache {
	return customercache.New(api.Customers, customercache.Options{
		TTL:          cfg.CustomerCacheTTL,
		MaxUsers:     customerCacheUsers,
		FetchTimeout: 4 * cfg.V2Timeout,
		Now:          now,
	})
}

// customerCacheKey is the signed-in user's key in the customer cache: the subject of their
// token, never shared between users (each token may see other customers).
func customerCacheKey(c *gin.Context) string {
	if sub := auth.CurrentUser(c).Subject; sub != "" {
		return customercache.SubjectKey(sub)
	}
	sum := sha256.Sum256([]byte(auth.AccessToken(c)))
	return "token:" + hex.EncodeToString(sum[:])
}

// customerListParams are the list's query parameters, validated.
type customerListParams struct {
	Query string
	CPQID int32 // 0: the portal's list
	Sort  customercache.SortKey
	Desc  bool
	Page  int
}

// parseCustomerListParams reads q, cpqId, sort, dir and page; anything malformed is a 400.
func parseCustomerListParams(c *gin.Context) (customerListParams, error) {
	return parseCustomerListValues(c.Request.URL.Query())
}

// parseCustomerListValues reads the list's parameters from values (the query string, or a saved
// view's).
func parseCustomerListValues(values url.Values) (customerListParams, error) {
	p := customerListParams{Query: values.Get("q"), Sort: customercache.SortByName, Page: 1}
	if !utf8.ValidString(p.Query) || utf8.RuneCountInString(p.Query) > maxCustomerQueryRunes {
		return p, badRequest("customers.error.query_too_long", maxCustomerQueryRunes)
	}
	if raw := values.Get("cpqId"); raw != "" {
		id, err := parseID(raw, "cpqId", math.MaxInt32)
		if err != nil {
			return p, badRequest("customers.error.cpq_id")
		}
		p.CPQID = int32(id)
	}
	if raw := values.Get("sort"); raw != "" {
		key, ok := customercache.ParseSortKey(raw)
		if !ok {
			return p, badRequest("customers.error.sort")
		}
		p.Sort = key
	}
	switch values.Get("dir") {
	case "", "asc":
	case "desc":
		p.Desc = true
	default:
		return p, badRequest("customers.error.sort_direction")
	}
	if raw := values.Get("page"); raw != "" {
		n, err := parseID(raw, "page", maxCustomerPage)
		if err != nil {
			return p, badRequest("customers.error.page", maxCustomerPage)
		}
		p.Page = int(n)
	}
	return p, nil
}

// url is the list's address with these parameters (defaults left out).
func (p customerListParams) url() url.URL {
	return url.URL{Path: "/customers", RawQuery: p.query("")}
}

// query is the list's query string, as url.Values.Encode writes it (keys in order), with format
// instead of page when format is set (the export). Written by hand: every list page builds one
// for each sort column, and url.Values costs a map and its sorting each time.
func (p customerListParams) query(format string) string {
	var b strings.Builder
	b.Grow(64 + len(p.Query))
	add := func(key, value string) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(key)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(value))
	}
	if p.CPQID != 0 {
		add("cpqId", strconv.FormatInt(int64(p.CPQID), 10))
	}
	add("dir", dirText(p.Desc))
	if format != "" {
		add("format", format)
	} else if p.Page > 1 {
		add("page", strconv.Itoa(p.Page))
	}
	if p.Query != "" {
		add("q", p.Query)
	}
	add("sort", p.Sort.String())
	return b.String()
}

func dirText(desc bool) string {
	if desc {
		return "desc"
	}
	return "asc"
}

// showCustomerList is GET /customers: the whole page, or the results region for htmx (search as
// you type, sort, pages).
func (h *Handler) showCustomerList(c *gin.Context) {
	params, err := parseCustomerListParams(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	if isHTMX(c) {
		var names map[int32]string
		if params.CPQID != 0 {
			// The configurator's name for the source column; without it the id is shown.
			if list, err := h.configuratorList(ctx, customerCacheKey(c)); err == nil {
				names = configuratorNames(list)
			} else if h.mustFailWhole(err) {
				h.fail(c, err)
				return
			}
		}
		results, status, handled := h.customerResults(c, params, names, 0)
		if handled {
			return
		}
		if results.Error == "" {
			announce(c, results.CountText(tr(c)))
		}
		if h.views != nil && c.GetHeader("HX-Target") == customers.ResultsID {
			// The saved views follow the search (out of band).
			h.render(c, status, templ.Join(customers.ResultsPartial(results), work.ToolsOOB(h.customerTools(c, params))))
			return
		}
		h.render(c, status, customers.ResultsPartial(results))
		return
	}

	vm := customers.ListVM{Query: params.Query, CPQID: params.CPQID, CanHandover: h.may(c, toolHandover), CanImport: h.may(c, toolImport)}
	if h.views != nil {
		vm.Tools = work.Tools(h.customerTools(c, params))
	}
	// The configurator list (call 1, reused per user) is read beside the results, not before them
	// (issue 27); it only names the filter's choices and the source column.
	user := customerCacheKey(c)
	listOf := later(func() ([]apiclient.Configurator, error) { return h.configuratorList(ctx, user) })
	defer listOf() //nolint:errcheck // waited for on every path; the result is read below
	results, _, handled := h.customerResults(c, params, nil, customerListPageWait)
	if handled {
		return
	}
	list, err := listOf()
	switch {
	case err == nil:
		for _, cfg := range list {
			vm.Configurators = append(vm.Configurators, customers.Configurator{ID: cfg.ID, Name: cfg.Name, Selected: cfg.ID == params.CPQID})
		}
		if params.CPQID != 0 {
			results.SourceLabel = configuratorLabel(tr(c), params.CPQID, configuratorNames(list))
		}
	case h.mustFailWhole(err):
		h.fail(c, err)
		return
	default:
		h.log(c).Warn("configurator list unavailable on the customer list", "err", err)
		vm.ConfiguratorsError = t(c, "customers.search.configurators_unavailable")
	}
	vm.Results = results
	// 200 even when the results region shows an upstream failure: the page itself works (search,
	// navigation), and the region says what failed (its own htmx requests carry the real status).
	h.renderPage(c, http.StatusOK, t(c, "customers.list.title"), layout.SectionCustomers, customers.ListPage(vm))
}

// mustFailWhole reports errors that the error edge must handle even where a region could show
// a message: a refused token (renew the sign-in) and the user leaving.
func (h *Handler) mustFailWhole(err error) bool {
	return errors.Is(err, apiclient.ErrUnauthorized) || errors.Is(err, context.Canceled)
}

func configuratorNames(list []apiclient.Configurator) map[int32]string {
	names := make(map[int32]string, len(list))
	for _, cfg := range list {
		names[cfg.ID] = cfg.Name
	}
	return names
}

// customerResults builds the results region. wait > 0 bounds how long a page waits for a list
// that is not cached yet (then the region loads itself). Upstream failures become a message in
// the region with their status; handled is true when the error edge already answered.
func (h *Handler) customerResults(c *gin.Context, p customerListParams, names map[int32]string, wait time.Duration) (vm customers.ResultsVM, status int, handled bool) {
	self := p.url()
	vm = customers.ResultsVM{Query: p.Query, CPQID: p.CPQID, Sort: p.Sort.String(), Desc: p.Desc, Columns: customerColumns(tr(c), p), RetryURL: self.RequestURI()}
	vm.ExportCSV, vm.ExportXLSX = p.exportURL("csv"), p.exportURL("xlsx")

	var rows []customercache.Row
	total := 0
	if p.CPQID != 0 {
		found, err := h.api.Customers.Search(h.apiContext(c), int64(p.CPQID), p.Query)
		if err != nil {
			return h.customerRegionError(c, vm, err)
		}
		vm.SourceLabel = configuratorLabel(tr(c), p.CPQID, names)
		for i := range found {
			rows = append(rows, customercache.RowOf(&found[i]))
		}
		vm.Limited = len(found) >= onlineSearchLimit
		vm.LimitCount = onlineSearchLimit
		customercache.SortRows(rows, p.Sort, p.Desc)
		total = len(rows)
		pages := max(1, (total+customerPageSize-1)/customerPageSize)
		p.Page = min(p.Page, pages)
		start := (p.Page - 1) * customerPageSize
		rows = rows[min(start, total):min(start+customerPageSize, total)]
	} else {
		vm.SourceLabel = t(c, "customers.source.list")
		ctx := h.apiContext(c)
		waitCtx, cancel := ctx, context.CancelFunc(func() {})
		if wait > 0 {
			waitCtx, cancel = context.WithTimeout(ctx, wait)
		}
		snap, err := h.customers.Get(waitCtx, customerCacheKey(c))
		cancel()
		if err != nil {
			if wait > 0 && errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, customercache.ErrFetchFailed) && ctx.Err() == nil {
				// Still fetching: send the page now; the region asks again by itself.
				vm.Loading = true
				vm.LoadURL = self.RequestURI()
				return vm, http.StatusOK, false
			}
			return h.customerRegionError(c, vm, err)
		}
		pages := max(1, (snap.Len()+customerPageSize-1)/customerPageSize)
		res := snap.Search(customercache.Query{Text: p.Query, Sort: p.Sort, Desc: p.Desc,
			Offset: (min(p.Page, pages) - 1) * customerPageSize, Limit: customerPageSize})
		total = res.Total
		pages = max(1, (total+customerPageSize-1)/customerPageSize)
		if p.Page > pages {
			// Past the last page (the list shrank, or a hand-made URL): show the last one.
			p.Page = pages
			res = snap.Search(customercache.Query{Text: p.Query, Sort: p.Sort, Desc: p.Desc,
				Offset: (p.Page - 1) * customerPageSize, Limit: customerPageSize})
		}
		rows = res.Rows
	}

	vm.Total = total
	if total > 0 {
		vm.From = (p.Page-1)*customerPageSize + 1
		vm.To = vm.From + len(rows) - 1
	}
	for _, r := range rows {
		vm.Rows = append(vm.Rows, customerRowVM(tr(c), r, vm.SourceLabel))
	}
	base := p.url()
	vm.Pager = components.NewPager(base, "page", p.Page, max(1, (total+customerPageSize-1)/customerPageSize), "#"+customers.ResultsID)
	return vm, http.StatusOK, false
}

// customerRegionError turns an upstream failure into a message inside the results region (the
// rest of the page keeps working), logged like the error edge does. A refused token and a user
// who left go to the error edge itself.
func (h *Handler) customerRegionError(c *gin.Context, vm customers.ResultsVM, err error) (customers.ResultsVM, int, bool) {
	if h.mustFailWhole(err) {
		h.fail(c, err)
		return vm, 0, true
	}
	f := classify(err)
	h.log(c).Log(c.Request.Context(), f.level, "customer list region failed",
		"status", f.status, "path", c.Request.URL.Path, "err", err)
	vm.Error = f.message.In(tr(c))
	if f.status == http.StatusNotFound && vm.CPQID != 0 {
		vm.Error = t(c, "customers.error.no_configurator", strconv.FormatInt(int64(vm.CPQID), 10), f.message.In(tr(c)))
	}
	return vm, f.status, false
}

func configuratorLabel(tr *i18n.Translator, cpqID int32, names map[int32]string) string {
	if name := names[cpqID]; name != "" {
		return tr.T("customers.source.online", name)
	}
	return tr.T("customers.source.online_id", strconv.FormatInt(int64(cpqID), 10))
}

// customerColumns are the table's headers; sortable ones link to their order (the current one
// toggles its direction) on page 1.
func customerColumns(tr *i18n.Translator, p customerListParams) []customers.ColumnVM {
	cols := []customers.ColumnVM{
		{Label: tr.T("customers.col.number"), Key: customercache.SortByID.String(), Numeric: true},
		{Label: tr.T("customers.col.name"), Key: customercache.SortByName.String()},
		{Label: tr.T("customers.col.tax_id"), Key: customercache.SortByTaxID.String()},
		{Label: tr.T("customers.col.segment"), Key: customercache.SortBySegment.String()},
		{Label: tr.T("customers.col.city"), Key: customercache.SortByCity.String()},
		{Label: tr.T("customers.col.owners")},
		{Label: tr.T("customers.col.updated"), Key: customercache.SortByUpdated.String()},
		{Label: tr.T("customers.col.source")},
	}
	for i := range cols {
		if cols[i].Key == "" {
			continue
		}
		key, _ := customercache.ParseSortKey(cols[i].Key)
		next := p
		next.Sort, next.Page, next.Desc = key, 1, false
		if key == p.Sort {
			next.Desc = !p.Desc
			cols[i].AriaSort = "ascending"
			if p.Desc {
				cols[i].AriaSort = "descending"
			}
		}
		u := next.url()
		cols[i].Href = u.RequestURI()
	}
	return cols
}

// customerRowVM is one table row.
func customerRowVM(tr *i18n.Translator, r customercache.Row, source string) customers.RowVM {
	city := r.City
	if r.Country != "" {
		if city != "" {
			city += ", "
		}
		city += r.Country
	}
	return customers.RowVM{
		ID: r.ID, Name: r.Name, TaxID: r.TaxID, Email: r.Email, Segment: segmentLabel(tr, r.Segment), City: city,
		Owners: r.Owners, Updated: r.UpdatedAt, Source: source,
		Href: customerHref(r.ID),
	}
}

// customerHref is the detail page of a customer.
func customerHref(id int32) string {
	return "/customers/" + strconv.FormatInt(int64(id), 10)
}

// customerTools are the person's saved views of the customer list and the form that saves the
// current search (work_views.go); the list's exports stay above its results.
func (h *Handler) customerTools(c *gin.Context, p customerListParams) work.ToolsVM {
	query := customerViewQuery(p)
	return work.ToolsVM{List: viewListCustomers, Query: query, Valid: true, Views: h.viewLinks(c, viewListCustomers, query)}
}
