package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auditwords"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/internal/worklist"
	"github.com/cpqportal/portal/web/templates/backoffice"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/work"
)

// The audit worklist (docs/backoffice.md): GET /audits/worklist?quotes=&from=&to=&user=&action=&customer=
// shows the validation audits of many quotes in one table (internal/worklist reads them from the
// v2 API, a few at a time); GET /audits/worklist/export?format=csv|xlsx&... downloads the same rows.

// worklistReadsAtOnce bounds the audits the worklist reads side by side for one person waiting on
// the page (issue 27: ten quotes in one round trip, their customers' names in a second). A batch
// job's pace (PORTAL_BATCH_CONCURRENCY) is for work nobody waits on.
const worklistReadsAtOnce = 10

// maxFilterRunes bounds the text filters.
const maxFilterRunes = 200

// worklistRequest is the parsed query of the worklist and its export.
type worklistRequest struct {
	quotesText string
	quoteIDs   []int64
	filter     worklist.Filter
	from, to   string
	problem    i18n.Message // for the form; the request is a 400
	// problemField is the filter input problem belongs to ("" for the quotes box).
	problemField string
	// changed: the quotes changed between from and to (the work index) are asked for too.
	changed bool
}

func parseWorklistRequest(c *gin.Context) worklistRequest {
	return parseWorklistValues(c.Request.URL.Query(), tr(c))
}

// parseWorklistValues reads the worklist's quotes and filters from q (the query string, or a
// saved view's) for the reader of trl.
func parseWorklistValues(q url.Values, trl *i18n.Translator) worklistRequest {
	var req worklistRequest
	req.quotesText = strings.Join(q["quotes"], "\n")
	req.from, req.to = strings.TrimSpace(q.Get("from")), strings.TrimSpace(q.Get("to"))
	req.filter = worklist.Filter{User: q.Get("user"), Action: q.Get("action"), Customer: q.Get("customer"), Zone: trl.Zone(), Tr: trl}
	for _, s := range []string{req.quotesText, req.filter.User, req.filter.Customer} {
		if !utf8.ValidString(s) {
			req.problem = i18n.M("worklist.error.invalid_chars")
			return req
		}
	}
	// Named by its label: which filter is too long (the form keeps the text whole).
	if utf8.RuneCountInString(req.filter.User) > maxFilterRunes {
		req.problem, req.problemField = i18n.M("worklist.error.filter_too_long", i18n.M("worklist.filter.user"), maxFilterRunes), "worklist-user"
		return req
	}
	if utf8.RuneCountInString(req.filter.Customer) > maxFilterRunes {
		req.problem, req.problemField = i18n.M("worklist.error.filter_too_long", i18n.M("worklist.filter.customer"), maxFilterRunes), "worklist-customer"
		return req
	}
	if utf8.RuneCountInString(req.quotesText) > 20*worklist.MaxQuotes+1000 {
		req.problem = i18n.M("worklist.error.too_many", worklist.MaxQuotes)
		return req
	}
	if req.filter.Action != "" && !slices.Contains(worklist.Actions(), req.filter.Action) {
		req.problem = i18n.M("worklist.error.action")
		return req
	}
	for _, d := range []struct {
		raw     string
		into    *time.Time
		problem i18n.Message
	}{{req.from, &req.filter.From, i18n.M("worklist.error.from_day")}, {req.to, &req.filter.To, i18n.M("worklist.error.to_day")}} {
		if d.raw == "" {
			continue
		}
		t, err := time.Parse("2006-01-02", d.raw)
		if err != nil {
			req.problem = d.problem
			return req
		}
		*d.into = t
	}
	if !req.filter.From.IsZero() && !req.filter.To.IsZero() && req.filter.To.Before(req.filter.From) {
		req.problem = i18n.M("worklist.error.order")
		return req
	}
	req.changed = q.Get("changed") == "1"
	if req.changed && req.filter.From.IsZero() {
		req.problem = i18n.M("worklist.error.changed_needs_from")
		return req
	}
	ids, err := worklist.ParseQuoteIDs(q["quotes"]...)
	var input *worklist.InputError
	switch {
	case errors.As(err, &input):
		req.problem = input.Message
		return req
	case err != nil:
		req.problem = i18n.M("worklist.error.invalid_chars")
		return req
	}
	req.quoteIDs = ids
	return req
}

// changedQuotes adds to req the quotes changed between its From and To days (in the reader's time
// zone, both included), newest change first, as the work index lists them for the viewer (their own
// rows, or every row for a team role; never a row the v2 API refused them: docs/work-index.md), up
// to worklist.MaxQuotes in all. The audits are then read with the viewer's token, so a quote they
// can no longer read is named as a problem, never shown. found is how many the index listed; more
// says it listed more than the worklist takes.
func (h *Handler) changedQuotes(c *gin.Context, req *worklistRequest) (found int, more bool, err error) {
	if !req.changed {
		return 0, false, nil
	}
	if h.work == nil {
		return 0, false, errWorkOff
	}
	zone := tr(c).Zone()
	day := func(d time.Time) time.Time { return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, zone) }
	q := workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeAll, From: day(req.filter.From),
		Sort: workindex.SortChanged, PerPage: workindex.MaxPerPage}
	if !req.filter.To.IsZero() {
		q.To = day(req.filter.To).AddDate(0, 0, 1)
	}
	have := map[int64]bool{}
	for _, id := range req.quoteIDs {
		have[id] = true
	}
	// The range lists only quotes revealed to the viewer (docs/work-index.md "Visibility rule"):
	// those they may see but their token has not read as they stand are read with it first,
	// within a page's budget, so a team role's range holds the team's quotes they can read.
	h.checkUnchecked(c, workindex.KindQuote, workindex.ScopeAll, nil, maxStaleRereads)
	for q.Page = 1; ; q.Page++ {
		page, err := h.work.List(c.Request.Context(), h.viewer(c), q)
		if err != nil {
			return 0, false, fmt.Errorf("audit worklist: the quotes changed in the range: %w", err)
		}
		for i := range page.Rows {
			found++
			id := page.Rows[i].ID()
			if have[id] {
				continue
			}
			if len(req.quoteIDs) >= worklist.MaxQuotes {
				return found, true, nil
			}
			have[id] = true
			req.quoteIDs = append(req.quoteIDs, id)
		}
		if q.Page >= page.Pages || len(page.Rows) == 0 {
			return found, page.Capped, nil
		}
	}
}

// gather reads and filters the rows of req (with the user's token).
func (h *Handler) gatherWorklist(c *gin.Context, req worklistRequest) ([]worklist.Row, int, []worklist.Problem, error) {
	rows, problems, err := worklist.Gather(h.apiContext(c), h.worklistSource(c), req.quoteIDs, worklistReadsAtOnce)
	if err != nil {
		return nil, 0, nil, err
	}
	// A quote the v2 API refused the viewer (or does not know) leaves everything of theirs at once.
	if h.work != nil {
		v := h.viewer(c)
		for _, p := range problems {
			if p.Message.Key == worklist.ProblemForbidden || p.Message.Key == worklist.ProblemNotFound {
				if err := h.work.Forget(c.Request.Context(), v, workindex.KindQuote, p.QuoteID); err != nil {
					h.log(c).Warn("work index: row not forgotten", slog.Int64("id", p.QuoteID), slog.Any("err", err))
				}
			}
		}
	}
	// The rows share one view of the people directory: their actors are looked up in one query.
	if len(rows) > 0 {
		actors := make([]string, len(rows))
		for i, r := range rows {
			actors[i] = r.Actor
		}
		rows[0].Names.Prefetch(actors...)
	}
	return req.filter.Apply(rows), len(rows), problems, nil
}

// showWorklist answers GET /audits/worklist.
func (h *Handler) showWorklist(c *gin.Context) {
	req := parseWorklistRequest(c)
	vm := backoffice.WorklistVM{
		Quotes: components.Field{ID: "worklist-quotes", Name: "quotes", Label: t(c, "worklist.field.quotes"),
			Hint:  t(c, "worklist.field.quotes_hint", worklist.MaxQuotes),
			Attrs: map[string]any{"rows": 4, "spellcheck": "false", "autocomplete": "off", "data-testid": "worklist-quotes"}},
		From: req.from, To: req.to, User: req.filter.User, Customer: req.filter.Customer, Action: req.filter.Action,
		Actions: worklistActions(tr(c)), Changed: req.changed, ChangedHint: t(c, "worklist.changed.hint", worklist.MaxQuotes),
	}
	// The textarea keeps what was typed; ticked recent quotes stay ticked.
	picked := map[string]bool{}
	var typed []string
	recentItems := h.recentItems(c, "")
	offered := map[string]bool{}
	for _, it := range recentItems {
		offered[strconv.FormatInt(it.QuoteID, 10)] = true
	}
	for _, v := range c.QueryArray("quotes") {
		if offered[strings.TrimSpace(v)] {
			picked[strings.TrimSpace(v)] = true
		} else {
			typed = append(typed, v)
		}
	}
	vm.Quotes.Value = strings.ToValidUTF8(strings.Join(typed, "\n"), "\uFFFD")
	vm.Recent = worklistPicks(tr(c), recentItems, picked)
	if !req.problem.IsZero() {
		switch msg := req.problem.In(tr(c)); req.problemField {
		case "worklist-user":
			vm.UserError, vm.Errors = msg, []components.FieldError{{FieldID: req.problemField, Message: msg}}
		case "worklist-customer":
			vm.CustomerError, vm.Errors = msg, []components.FieldError{{FieldID: req.problemField, Message: msg}}
		default:
			vm.Quotes.Error = msg
			vm.Errors = components.SummaryFrom(vm.Quotes)
		}
		h.renderPage(c, http.StatusBadRequest, t(c, "worklist.title"), layout.SectionAudits, backoffice.WorklistPage(vm))
		return
	}
	found, more, err := h.changedQuotes(c, &req)
	if err != nil {
		h.fail(c, err)
		return
	}
	if req.changed {
		vm.ChangedNote = t(c, "worklist.changed.found", found)
		if more {
			vm.ChangedNote = t(c, "worklist.changed.capped", worklist.MaxQuotes)
		}
	}
	if len(req.quoteIDs) > 0 || req.changed {
		rows, total, problems, err := h.gatherWorklist(c, req)
		if err != nil {
			h.fail(c, err)
			return
		}
		vm.Searched, vm.Total = true, total
		for _, p := range problems {
			vm.Problems = append(vm.Problems, i18n.M("worklist.problem", strconv.FormatInt(p.QuoteID, 10), p.Message.In(tr(c))))
		}
		for _, r := range rows {
			vm.Rows = append(vm.Rows, worklistRowVM(tr(c), r))
		}
		vm.ExportCSV, vm.ExportXLSX = worklistExportURL(c, "csv"), worklistExportURL(c, "xlsx")
	} else if c.Request.URL.Query().Has("quotes") {
		vm.Quotes.Error = t(c, "worklist.error.no_quotes")
		vm.Errors = components.SummaryFrom(vm.Quotes)
		h.renderPage(c, http.StatusBadRequest, t(c, "worklist.title"), layout.SectionAudits, backoffice.WorklistPage(vm))
		return
	}
	vm.Tools = h.worklistTools(c, req)
	h.renderPage(c, http.StatusOK, t(c, "worklist.title"), layout.SectionAudits, backoffice.WorklistPage(vm))
}

// worklistTools are the person's saved views of the worklist and, once quotes were asked for,
// the form that saves them with the filters (work_views.go); nil when saved views are off.
func (h *Handler) worklistTools(c *gin.Context, req worklistRequest) templ.Component {
	if h.views == nil {
		return nil
	}
	vm := work.ToolsVM{List: viewListAudits, Hint: t(c, "views.worklist_hint")}
	if len(req.quoteIDs) > 0 {
		vm.Query, vm.Valid = worklistViewQuery(req), true
	}
	vm.Views = h.viewLinks(c, viewListAudits, vm.Query)
	return work.Tools(vm)
}

// worklistViewQuery is the worklist's quotes and filters as a saved view keeps them: the quote
// ids in one list, then the filters that are set.
func worklistViewQuery(req worklistRequest) string {
	v := url.Values{}
	sorted := slices.Clone(req.quoteIDs)
	slices.Sort(sorted)
	ids := make([]string, 0, len(sorted))
	for _, id := range slices.Compact(sorted) {
		ids = append(ids, strconv.FormatInt(id, 10))
	}
	v.Set("quotes", strings.Join(ids, ","))
	for key, value := range map[string]string{"from": req.from, "to": req.to, "user": req.filter.User, "action": req.filter.Action, "customer": req.filter.Customer} {
		if value != "" {
			v.Set(key, value)
		}
	}
	return v.Encode()
}

// worklistPicks are the user's recent quotes and contracts, one checkbox per quote.
func worklistPicks(tr *i18n.Translator, items []recent.Item, picked map[string]bool) []backoffice.WorklistPick {
	var out []backoffice.WorklistPick
	seen := map[int64]bool{}
	for _, it := range items {
		if it.QuoteID == 0 || seen[it.QuoteID] {
			continue
		}
		seen[it.QuoteID] = true
		id := strconv.FormatInt(it.QuoteID, 10)
		label := tr.T("worklist.pick.quote", id)
		if it.Kind == recent.KindContract {
			label += " " + tr.T("worklist.pick.contract", i18n.Isolate(it.Number))
		}
		if it.Customer != "" {
			label += " · " + i18n.Isolate(it.Customer)
		}
		out = append(out, backoffice.WorklistPick{QuoteID: id, Label: label, Checked: picked[id]})
	}
	return out
}

func worklistRowVM(tr *i18n.Translator, r worklist.Row) backoffice.WorklistRow {
	who := r.Who(tr)
	row := backoffice.WorklistRow{QuoteID: strconv.FormatInt(r.QuoteID, 10), AuditURL: auditURL(r.QuoteID), Customer: worklistCustomer(tr, r),
		When: r.At, Who: who.Name, WhoLogin: who.Login, Action: r.Action, ActionLabel: contracts.ActionLabel(tr, r.Action)}
	if auditwords.ShowSummary(r.Action, len(r.Changes)) {
		row.Summary = r.Summary
	}
	for _, ch := range r.Words(tr) {
		row.Changes = append(row.Changes, backoffice.WorklistChange{Field: ch.Field, Before: cut(ch.Before), After: cut(ch.After)})
	}
	return row
}

func worklistCustomer(tr *i18n.Translator, r worklist.Row) string {
	if r.Customer != "" {
		return fmt.Sprintf("%s (%d)", r.Customer, r.CustomerID)
	}
	return tr.T("worklist.customer_fallback", strconv.Itoa(int(r.CustomerID)))
}

// worklistActions are the audit actions of the filter, each with its label in tr's language.
func worklistActions(tr *i18n.Translator) []backoffice.WorklistAction {
	actions := worklist.Actions()
	out := make([]backoffice.WorklistAction, 0, len(actions))
	for _, a := range actions {
		out = append(out, backoffice.WorklistAction{Value: a, Label: contracts.ActionLabel(tr, a)})
	}
	return out
}

// worklistExportURL is the export of the current query in format.
func worklistExportURL(c *gin.Context, format string) string {
	q := url.Values{}
	for _, k := range []string{"quotes", "from", "to", "changed", "user", "action", "customer"} {
		for _, v := range c.QueryArray(k) {
			q.Add(k, v)
		}
	}
	q.Set("format", format)
	return "/audits/worklist/export?" + q.Encode()
}
