package handlers

import (
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/savedviews"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/work"
)

// Saved views (internal/savedviews, docs/work-index.md "Saved views"): a person names the filters
// of a work list and finds them again on the list, on /work/views and in the palette. A view is
// only ever the list's query string, passed through the list's own parser and written back in
// one normal form (workFilters.canonicalQuery), so a view holds nothing the list would refuse and
// opening one is opening a URL: the URL stays the way to share it.

// The lists that have saved views, by the name a view stores.
const (
	viewListQuotes    = "quotes"
	viewListContracts = "contracts"
	viewListCustomers = "customers"
	viewListAudits    = "audits"
)

// viewListOf names kind's list in the saved views.
func viewListOf(kind workindex.Kind) string {
	if kind == workindex.KindContract {
		return viewListContracts
	}
	return viewListQuotes
}

// viewListPath is the path of a saved view's list.
func viewListPath(list string) (string, bool) {
	switch list {
	case viewListQuotes:
		return "/work/quotes", true
	case viewListContracts:
		return "/work/contracts", true
	case viewListCustomers:
		return "/customers", true
	case viewListAudits:
		return "/audits/worklist", true
	}
	return "", false
}

// canonicalQuery is the filters in one normal form: only what the parser read, in a fixed order
// (stages sorted, defaults left out but the scope, whose default differs by list), without the
// page, the cursor or "refresh". Two URLs of the same filters give the same text.
func (f workFilters) canonicalQuery() string {
	v := url.Values{}
	v.Set("scope", f.scope)
	stages := slices.Clone(f.stages)
	slices.Sort(stages)
	for _, s := range slices.Compact(stages) {
		v.Add("stage", s)
	}
	for _, key := range []string{"customer", "cpq", "from", "to", "q"} {
		if f.values[key] != "" {
			v.Set(key, f.values[key])
		}
	}
	// The home page's narrowing filters (when a row entered its stage, one rep's rows), as parsed.
	for _, p := range f.narrowing {
		v.Set(p.Name, p.Value)
	}
	if f.query.Sort == workindex.SortValue {
		v.Set("sort", string(workindex.SortValue))
	}
	if f.query.Asc {
		v.Set("dir", "asc")
	}
	return v.Encode()
}

// normaliseViewQuery reads a query string offered for list through the list's own parser and
// writes it back in the list's normal form (the page left out); false when it does not parse or
// holds a filter the list refuses.
func normaliseViewQuery(trl *i18n.Translator, list, raw string) (string, bool) {
	if len(raw) > savedviews.MaxQueryLen {
		return "", false
	}
	values, err := url.ParseQuery(strings.TrimPrefix(raw, "?"))
	if err != nil {
		return "", false
	}
	// The query is posted percent-encoded: its decoded values pass the rules every query
	// parameter passes (a saved "q=ab%00" would answer 400 each time it is opened).
	if _, bad := hiddenCharacterProblem(values); bad {
		return "", false
	}
	switch list {
	case viewListQuotes, viewListContracts:
		kind := workindex.KindQuote
		if list == viewListContracts {
			kind = workindex.KindContract
		}
		f := parseWorkValues(values, trl, kind)
		if len(f.errs) > 0 {
			return "", false
		}
		return f.canonicalQuery(), true
	case viewListCustomers:
		p, err := parseCustomerListValues(values)
		if err != nil {
			return "", false
		}
		return customerViewQuery(p), true
	case viewListAudits:
		req := parseWorklistValues(values, trl)
		if !req.problem.IsZero() || len(req.quoteIDs) == 0 {
			return "", false
		}
		return worklistViewQuery(req), true
	}
	return "", false
}

// customerViewQuery is the customer list's parameters as a saved view keeps them: the list's
// own address without the page.
func customerViewQuery(p customerListParams) string {
	p.Page = 1
	return p.query("")
}

// workTools is a list's saved views and exports for filters f (invalid: the views only).
func (h *Handler) workTools(c *gin.Context, spec workListSpec, f workFilters) work.ToolsVM {
	list := viewListOf(spec.kind)
	vm := work.ToolsVM{List: list, Valid: len(f.errs) == 0}
	if vm.Valid {
		vm.Query = f.canonicalQuery()
		vm.ExportCSV = spec.path + "/export?format=csv&" + vm.Query
		vm.ExportXLSX = spec.path + "/export?format=xlsx&" + vm.Query
	}
	vm.Views = h.viewLinks(c, list, vm.Query)
	return vm
}

// viewLinks are the person's views of list, current marking the one with that query.
func (h *Handler) viewLinks(c *gin.Context, list, current string) []work.ViewLink {
	if h.views == nil {
		return nil
	}
	views, err := h.views.List(c.Request.Context(), auth.CurrentUser(c).Subject, list)
	if err != nil {
		// The list still answers: its saved views are a convenience.
		h.log(c).Warn("saved views: not listed", slog.Any("err", err))
		return nil
	}
	out := make([]work.ViewLink, 0, len(views))
	for _, v := range views {
		out = append(out, viewLink(v, current))
	}
	return out
}

func viewLink(v savedviews.View, current string) work.ViewLink {
	path, _ := viewListPath(v.List)
	href := path + "?" + v.Query
	if v.Query == "" {
		href = path
	}
	return work.ViewLink{ID: v.ID, Name: v.Name, Href: href, Current: current != "" && v.Query == current}
}

// errViewsOff: the handler runs without the saved views store (some tests).
var errViewsOff = errors.New("handlers: saved views are off")

// viewProblem is a store error in the person's words; the zero Message for an error that is not
// theirs (the error edge answers it).
func viewProblem(err error) (i18n.Message, int) {
	switch {
	case errors.Is(err, savedviews.ErrEmptyName):
		return i18n.M("views.error.empty"), 422
	case errors.Is(err, savedviews.ErrNameTooLong):
		return i18n.M("views.error.too_long", savedviews.MaxNameRunes), 422
	case errors.Is(err, savedviews.ErrNameInvalid):
		return i18n.M("views.error.invalid"), 422
	case errors.Is(err, savedviews.ErrDuplicate):
		return i18n.M("views.error.duplicate"), 409
	case errors.Is(err, savedviews.ErrTooMany):
		return i18n.M("views.error.too_many", savedviews.MaxPerPerson), 422
	case errors.Is(err, savedviews.ErrQuery):
		return i18n.M("views.error.query"), 400
	case errors.Is(err, savedviews.ErrNotFound):
		return i18n.M("views.error.not_found"), 404
	}
	return i18n.Message{}, 0
}

// validViewID: a saved view's id is 16 hex digits (savedviews.View.ID); anything else is no view.
func validViewID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for _, r := range id {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
