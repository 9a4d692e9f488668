package handlers

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/quotes"
	"github.com/cpqportal/portal/web/templates/work"
)

// The work lists (docs/work-index.md): their filters live in the URL, so a list can be
// bookmarked, reloaded and sent; malformed filters answer 400 with the form and its messages,
// never a 5xx. The lists are read from the work index, and the rows of the page shown that are
// older than PORTAL_WORK_STALE_AFTER are re-read with the viewer's token first (work_index.go).

const (
	maxWorkFindRunes = 200
	maxWorkPage      = 100_000
	workDateLayout   = "2006-01-02"
)

// errWorkOff: the handler runs without a work index (some tests): the lists say unavailable.
var errWorkOff = errors.New("the work index is off")

var workDigits = regexp.MustCompile(`^[0-9]{1,10}$`)

// workPersonKey is a person as the work index stores them (workindex.PersonKey: 24 hex digits).
var workPersonKey = regexp.MustCompile(`^[0-9a-f]{24}$`)

// workFilters are a list's filters: the index query, the values as entered and their problems
// (by input id).
type workFilters struct {
	query   workindex.Query
	scope   string
	stages  []string
	values  map[string]string
	errs    map[string]string
	refresh bool
	// narrowing are the filters the form has no field for (the home page's links: when a row
	// entered its stage, one rep's rows), kept as hidden fields and named above the results.
	narrowing []work.Param
}

// parseWorkFilters reads the list's query string. kind decides the stages offered and the
// default scope (quotes: mine; contracts: everything the user may see).
func parseWorkFilters(c *gin.Context, tr *i18n.Translator, kind workindex.Kind) workFilters {
	return parseWorkValues(c.Request.URL.Query(), tr, kind)
}

// parseWorkValues reads a list's filters from values (the query string, or a saved view's).
func parseWorkValues(values url.Values, tr *i18n.Translator, kind workindex.Kind) workFilters {
	f := workFilters{values: map[string]string{}, errs: map[string]string{}}
	f.query.Kind = kind
	f.query.Scope = workindex.ScopeAll
	if kind == workindex.KindQuote {
		f.query.Scope = workindex.ScopeMine
	}
	switch scope := values.Get("scope"); scope {
	case "":
	case string(workindex.ScopeMine), string(workindex.ScopeAll):
		f.query.Scope = workindex.Scope(scope)
	default:
		f.errs["work-scope-mine"] = tr.T("work.error.scope")
	}
	f.scope = string(f.query.Scope)
	for _, raw := range values["stage"] {
		stage, ok := workindex.ParseStage(raw)
		if !ok || (kind == workindex.KindContract && stage == workindex.StageDraft) {
			f.errs["work-stage-"+stageInputOf(kind)] = tr.T("work.error.stage")
			continue
		}
		f.query.Stages = append(f.query.Stages, stage)
		f.stages = append(f.stages, raw)
	}
	if raw := strings.TrimSpace(values.Get("customer")); raw != "" {
		f.values["customer"] = raw
		if id, ok := workID(raw); ok {
			f.query.CustomerID = id
		} else {
			f.errs["work-customer"] = tr.T("work.error.customer")
		}
	}
	if raw := values.Get("cpq"); raw != "" {
		f.values["cpq"] = raw
		if id, ok := workID(raw); ok {
			f.query.CPQID = id
		} else {
			f.errs["work-cpq"] = tr.T("work.error.configurator")
		}
	}
	from, fromOK := workDate(values.Get("from"))
	to, toOK := workDate(values.Get("to"))
	f.values["from"], f.values["to"] = values.Get("from"), values.Get("to")
	if !fromOK {
		f.errs["work-from"] = tr.T("work.error.date")
	}
	if !toOK {
		f.errs["work-to"] = tr.T("work.error.date")
	}
	if fromOK && toOK && !from.IsZero() && !to.IsZero() && to.Before(from) {
		f.errs["work-to"] = tr.T("work.error.range")
	}
	f.query.From = from
	if !to.IsZero() {
		f.query.To = to.AddDate(0, 0, 1) // the whole last day
	}
	// The home page's links (docs/home.md): when the row entered its stage, and one rep's rows
	// (a team role's filter; the index ignores it for anyone else).
	for _, p := range []struct {
		name, label string
		at          *time.Time
		end         bool
	}{{"entered_from", "work.filters.entered_from", &f.query.EnteredFrom, false}, {"entered_to", "work.filters.entered_to", &f.query.EnteredTo, true},
		{"signed_from", "work.filters.signed_from", &f.query.SignedFrom, false}, {"signed_to", "work.filters.signed_to", &f.query.SignedTo, true}} {
		raw := values.Get(p.name)
		if raw == "" {
			continue
		}
		d, ok := workDate(raw)
		if !ok {
			f.errs["work-find"] = tr.T("work.error.date")
			continue
		}
		// The date as entered (a UTC day, as the lists' dates), in the reader's words.
		label := tr.T(p.label, tr.InZone(time.UTC).Date(d))
		if p.end {
			d = d.AddDate(0, 0, 1) // the whole last day
		}
		*p.at = d
		f.narrowing = append(f.narrowing, work.Param{Name: p.name, Value: raw, Label: label})
	}
	// The contracts signed at some time, whatever their stage now (the home page's conversion).
	switch raw := values.Get("signed"); raw {
	case "":
	case "1":
		f.query.Signed = true
		f.narrowing = append(f.narrowing, work.Param{Name: "signed", Value: raw, Label: tr.T("work.filters.signed")})
	default:
		f.errs["work-find"] = tr.T("work.error.signed")
	}
	if raw := values.Get("by"); raw != "" {
		if !workPersonKey.MatchString(raw) {
			f.errs["work-find"] = tr.T("work.error.person")
		} else {
			f.query.Person = raw
			f.narrowing = append(f.narrowing, work.Param{Name: "by", Value: raw, Label: tr.T("work.filters.by")})
		}
	}
	// The declined contracts of one signer's reason (the team figures' reasons), as the index
	// stores reasons (workindex.DeclineReasonText).
	if raw := values.Get("reason"); raw != "" {
		reason := workindex.DeclineReasonText(raw)
		if reason == "" || !utf8.ValidString(raw) || utf8.RuneCountInString(raw) > maxWorkFindRunes {
			f.errs["work-find"] = tr.T("work.error.reason", maxWorkFindRunes)
		} else {
			f.query.DeclineReason = reason
			f.narrowing = append(f.narrowing, work.Param{Name: "reason", Value: reason, Label: tr.T("work.filters.reason", reason)})
		}
	}
	find := strings.TrimSpace(values.Get("q"))
	f.values["q"] = find
	if utf8.RuneCountInString(find) > maxWorkFindRunes || !utf8.ValidString(find) {
		f.errs["work-find"] = tr.T("work.error.find", maxWorkFindRunes)
	} else {
		f.query.Find = find
	}
	switch sort := values.Get("sort"); sort {
	case "", string(workindex.SortChanged):
		f.query.Sort = workindex.SortChanged
	case string(workindex.SortValue):
		f.query.Sort = workindex.SortValue
	default:
		f.errs["work-sort"] = tr.T("work.error.sort")
	}
	f.values["sort"] = string(f.query.Sort)
	switch dir := values.Get("dir"); dir {
	case "", "desc":
	case "asc":
		f.query.Asc = true
		f.values["dir"] = "asc"
	default:
		f.errs["work-dir"] = tr.T("work.error.sort")
	}
	f.query.Page = 1
	if raw := values.Get("page"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxWorkPage {
			f.errs["work-find"] = tr.T("work.error.page")
		} else {
			f.query.Page = n
		}
	}
	if raw := values.Get("after"); raw != "" {
		c, ok := workindex.ParseCursor(raw)
		if !ok || len(raw) > 50 {
			f.errs["work-find"] = tr.T("work.error.page")
		} else {
			f.query.After = &c
		}
	}
	f.refresh = values.Get("refresh") == "1"
	return f
}

// stageInputOf is the first stage checkbox of a list (where a stage problem is shown).
func stageInputOf(kind workindex.Kind) string {
	if kind == workindex.KindContract {
		return string(workindex.StageGenerated)
	}
	return string(workindex.StageDraft)
}

func workID(raw string) (int32, bool) {
	if !workDigits.MatchString(raw) {
		return 0, false
	}
	n, err := strconv.ParseInt(raw, 10, 32)
	return int32(n), err == nil && n >= 1
}

func workDate(raw string) (time.Time, bool) {
	if raw == "" {
		return time.Time{}, true
	}
	t, err := time.Parse(workDateLayout, raw)
	if err != nil || t.Year() < 2000 || t.Year() > 2200 {
		return time.Time{}, false
	}
	return t, true
}

// workListSpec is what differs between the quotes and the contracts list.
type workListSpec struct {
	kind   workindex.Kind
	path   string
	title  string
	stages []workindex.Stage
	// mineLabel and allLabel name the scopes.
	mineLabel, allLabel string
	emptyHint           string
	section             layout.Section
}

// showWorkList answers a work list: the page, or the results region for htmx.
func (h *Handler) showWorkList(c *gin.Context, spec workListSpec) {
	trl := tr(c)
	f := parseWorkFilters(c, trl, spec.kind)
	viewer := h.viewer(c)
	h.byRepLabel(c, trl, viewer, &f)
	vm := work.ListVM{Title: spec.title, Action: spec.path, Contracts: spec.kind == workindex.KindContract,
		Customer: f.values["customer"], From: f.values["from"], To: f.values["to"], Find: f.values["q"],
		Sort: f.values["sort"], Dir: f.values["dir"], FieldErrors: f.errs, Narrowing: f.narrowing, Tools: h.workTools(c, spec, f)}
	vm.Scopes = []work.Choice{
		{Value: string(workindex.ScopeMine), Label: spec.mineLabel, Selected: f.scope == string(workindex.ScopeMine)},
		{Value: string(workindex.ScopeAll), Label: spec.allLabel, Selected: f.scope == string(workindex.ScopeAll)},
	}
	for _, st := range spec.stages {
		vm.Stages = append(vm.Stages, work.Choice{Value: string(st), Label: stageLabel(trl, st), Selected: containsString(f.stages, string(st))})
	}
	status := http.StatusOK
	if len(f.errs) > 0 {
		status = http.StatusBadRequest
		for id, msg := range f.errs {
			vm.Errors = append(vm.Errors, components.FieldError{FieldID: id, Message: msg})
		}
		sortFieldErrors(vm.Errors)
		vm.Results = work.ResultsVM{Invalid: true}
		if isHTMX(c) {
			// The filters' messages belong beside the form: the whole page content is answered.
			c.Header("HX-Retarget", "#main")
			c.Header("HX-Reswap", "innerHTML")
			h.render(c, status, work.ListPage(vm))
			return
		}
		h.renderPage(c, status, spec.title, spec.section, work.ListPage(vm))
		return
	}
	// The product catalogues by name (names.go): for a whole page from the v2 API (call 1, kept per
	// user for a minute), read while the index answers; a refreshed results region uses the names
	// this replica holds.
	wholePage := !isHTMX(c) || c.GetHeader("HX-Target") != work.ResultsID
	var (
		wg       sync.WaitGroup
		cpqNames map[int32]string
		cpqErr   error
	)
	if wholePage {
		ctx, user := h.apiContext(c), customerCacheKey(c)
		wg.Go(func() { cpqNames, cpqErr = h.configuratorNamesNow(ctx, user) })
	} else {
		cpqNames = h.configuratorNamesHeld(c)
	}
	page, err := workindex.Page{}, errWorkOff
	budget := maxStaleRereads
	if h.work != nil {
		// The rows of the list's scope the viewer's token has not read as they stand are checked
		// with it first (a whole page or "Refresh", within the page's budget), so a first visit
		// lists what the viewer may see; the rest are counted apart.
		if wholePage || f.refresh {
			if f.refresh {
				budget -= h.checkUnchecked(c, spec.kind, f.query.Scope, nil, maxStaleRereads/2)
			} else {
				budget -= h.checkUnchecked(c, spec.kind, f.query.Scope, nil, budget)
			}
		}
		page, err = h.work.List(c.Request.Context(), viewer, f.query)
	}
	wg.Wait()
	if cpqErr != nil {
		if h.mustFailWhole(cpqErr) {
			h.fail(c, cpqErr)
			return
		}
		h.log(c).Warn("work list: product catalogues unavailable", slog.Any("err", cpqErr))
		vm.ConfiguratorsNote = trl.T("work.filters.configurators_unavailable")
	}
	names := workNames{configurators: cpqNames, customer: func(id int32) string { return h.customerNameHeld(c, id) }}
	numbered := func(id int32) string { return trl.T("customer.configurator_id", strconv.Itoa(int(id))) }
	switch {
	case errors.Is(err, errWorkOff):
		vm.Results = work.ResultsVM{Unavailable: true}
	case errors.Is(err, workindex.ErrUnavailable):
		h.log(c).Warn("work index: list unavailable", slog.Any("err", err))
		vm.Results = work.ResultsVM{Unavailable: true}
	case err != nil:
		h.fail(c, err)
		return
	default:
		rows := h.refreshRows(c, page.Rows, f.refresh, budget)
		for i := range rows {
			names.nameRow(&rows[i].Row)
		}
		vm.Results = workResultsVM(trl, c.Request.URL, spec, page, rows)
		// The rows not checked yet: a count of the scope, no filter, stage or value of them.
		if vm.Results.Unchecked = h.uncheckedCount(c, []workindex.Kind{spec.kind}, f.query.Scope); vm.Results.Unchecked != "" {
			vm.Results.UncheckedHint = trl.T("work.unchecked_count.hint", maxStaleRereads)
		}
		vm.Results.Archivable = vm.Results.Contracts && h.may(c, toolBatchArchive)
		vm.Configurators = configuratorChoices(numbered, page.Configurators, cpqNames, f.values["cpq"])
	}
	if vm.Configurators == nil {
		// The index cannot be read: the filter still names the user's catalogues.
		vm.Configurators = configuratorChoices(numbered, nil, cpqNames, f.values["cpq"])
	}
	if isHTMX(c) && c.GetHeader("HX-Target") == work.ResultsID {
		// The saved views and exports follow the filters (out of band).
		h.render(c, status, templ.Join(work.ResultsPartial(vm.Results), work.ToolsOOB(vm.Tools)))
		return
	}
	h.renderPage(c, status, spec.title, spec.section, work.ListPage(vm))
}

// workResultsVM builds the results region of a list page.
func workResultsVM(trl *i18n.Translator, current *url.URL, spec workListSpec, page workindex.Page, rows []workRow) work.ResultsVM {
	base := *current
	q := base.Query()
	q.Del("refresh")
	base.RawQuery = q.Encode()
	refresh := base
	rq := refresh.Query()
	rq.Set("refresh", "1")
	refresh.RawQuery = rq.Encode()
	vm := work.ResultsVM{
		Count:      workCount(trl, page),
		Pager:      components.NewPager(base, "page", page.Page, page.Pages, "#"+work.ResultsID),
		RefreshURL: refresh.RequestURI(),
		CheckURL:   base.RequestURI(),
		Contracts:  spec.kind == workindex.KindContract,
		EmptyHint:  spec.emptyHint,
	}
	for _, r := range rows {
		row := workRowVM(trl, r)
		if !row.Unchecked && row.Number != "" {
			vm.PageSelectable++
		}
		vm.Rows = append(vm.Rows, row)
	}
	if vm.Contracts && page.Total > 0 {
		// "Archive all N matching": the list's filters, without its page.
		mq := base.Query()
		for _, k := range []string{"page", "after", "refresh"} {
			mq.Del(k)
		}
		vm.MatchingQuery = mq.Encode()
		n := trl.Integer(int64(page.Total))
		if page.Capped {
			n += "+"
		}
		vm.MatchingLabel = trl.T("work.contracts.archive_matching", n)
	}
	if page.Next != nil {
		// Past the counted pages the list goes on by cursor: "More" continues after the last row.
		more := base
		mq := more.Query()
		mq.Del("page")
		mq.Set("after", page.Next.String())
		more.RawQuery = mq.Encode()
		vm.MoreURL = more.RequestURI()
	}
	if q.Get("after") != "" {
		// A page reached by cursor has no number: the pager would name the wrong one.
		vm.Pager = components.Pager{}
	}
	return vm
}

// workCount is "N found", or "10,000+ found" when the list stopped counting.
func workCount(trl *i18n.Translator, page workindex.Page) string {
	if page.Capped {
		return trl.T("work.count_more", trl.Integer(int64(page.Total)))
	}
	return trl.Plural(page.Total, "work.count.one", "work.count.other")
}

// workRowVM is one row in the reader's language: of an unchecked row (refreshRows), its link only.
func workRowVM(trl *i18n.Translator, wr workRow) work.RowVM {
	r := wr.Row
	if wr.unchecked {
		vm := work.RowVM{ID: strconv.FormatInt(r.ID(), 10), Unchecked: true}
		switch r.Kind {
		case workindex.KindQuote:
			vm.Label = trl.T("worklist.pick.quote", strconv.FormatInt(r.QuoteID, 10))
			vm.Href = quotes.Ref{CPQID: r.CPQID, CustomerID: r.CustomerID, QuoteID: r.QuoteID}.URL()
		case workindex.KindContract:
			// Its number is the index's, not yet the viewer's: the contract is named by its id.
			vm.Label = trl.T("contract.title", "#"+strconv.Itoa(int(r.ContractID)))
			vm.Href = contractPath(r.ContractID)
		}
		return vm
	}
	vm := work.RowVM{
		ID: strconv.FormatInt(r.ID(), 10), Customer: r.Customer, CustomerHref: customerHref(r.CustomerID),
		Configurator: r.Configurator, Stage: string(r.Stage), StageLabel: stageLabel(trl, r.Stage), StageLevel: stageLevel(r.Stage),
		OneOff: trl.Money(r.OneOffCents, "EUR"), Monthly: trl.Money(r.MonthlyCents, "EUR"),
		ChangedBy: r.ChangedByName, AsOf: r.SeenAt, Number: r.ContractNumber, DeclineReason: r.DeclineReason,
	}
	vm.Changed = r.ChangedAt
	if vm.Customer == "" {
		vm.Customer = trl.T("worklist.customer_fallback", strconv.Itoa(int(r.CustomerID)))
	}
	switch r.Kind {
	case workindex.KindQuote:
		vm.Label = trl.T("worklist.pick.quote", strconv.FormatInt(r.QuoteID, 10))
		vm.Href = quotes.Ref{CPQID: r.CPQID, CustomerID: r.CustomerID, QuoteID: r.QuoteID}.URL()
		if r.ContractID > 0 {
			vm.ContractLabel = trl.T("contract.title", firstNonEmptyString(r.ContractNumber, "#"+strconv.Itoa(int(r.ContractID))))
			vm.ContractHref = contractPath(r.ContractID)
		}
	case workindex.KindContract:
		vm.Label = trl.T("contract.title", firstNonEmptyString(r.ContractNumber, "#"+strconv.Itoa(int(r.ContractID))))
		vm.Href = contractPath(r.ContractID)
	}
	return vm
}

// stageLabel is a stage in the reader's language.
func stageLabel(trl *i18n.Translator, s workindex.Stage) string {
	switch s {
	case workindex.StageDraft:
		return trl.T("work.stage.draft")
	case workindex.StageGenerated:
		return trl.T("work.stage.generated")
	case workindex.StageSignature:
		return trl.T("work.stage.signature")
	case workindex.StageSigned:
		return trl.T("work.stage.signed")
	case workindex.StageDeclined:
		return trl.T("work.stage.declined")
	case workindex.StageExpired:
		return trl.T("work.stage.expired")
	case workindex.StageArchived:
		return trl.T("work.stage.archived")
	}
	return string(s)
}

// stageLevel is a stage's badge colour.
func stageLevel(s workindex.Stage) components.BadgeLevel {
	switch s {
	case workindex.StageGenerated:
		return components.BadgeInfo
	case workindex.StageSignature, workindex.StageExpired:
		return components.BadgeWarning
	case workindex.StageSigned, workindex.StageArchived:
		return components.BadgeSuccess
	case workindex.StageDeclined:
		return components.BadgeDanger
	}
	return components.BadgeNeutral
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func firstNonEmptyString(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
