package handlers

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/pipeline"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/home"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// The home page at "/" (docs/home.md): figures by role from internal/pipeline, each linked to
// the work list that makes it (workListURL). Every figure adds up only the rows revealed to the
// viewer (docs/work-index.md "Visibility rule": their own token read the row as it stands). So
// that the page's main action is there on a first visit, it first re-reads with the viewer's
// token, within maxStaleRereads v2 calls, the rows of its figures they may see but have not read
// as they stand (checkUnchecked); the rest are only counted, apart ("N not checked yet").

// showHome answers GET /, the page people land on after signing in.
func (h *Handler) showHome(c *gin.Context) {
	trl := tr(c)
	viewer := h.viewer(c)
	vm := home.VM{Role: home.RoleRep, Title: trl.T("home.title.rep"), Intro: trl.T("home.intro.rep")}
	switch {
	case h.isBackoffice(c):
		vm.Role, vm.Title, vm.Intro = home.RoleBackoffice, trl.T("home.title.backoffice"), trl.T("home.intro.backoffice")
	case viewer.Team:
		vm.Role, vm.Title, vm.Intro = home.RoleTeam, trl.T("home.title.team"), trl.T("home.intro.team")
	}
	vm.Links = []components.Link{{Href: "/work/quotes", Label: trl.T("home.link.quotes")}, {Href: "/work/contracts", Label: trl.T("home.link.contracts")}}
	rep, repOK := homeRep(c)
	status := http.StatusOK
	if !repOK && vm.Role == home.RoleTeam {
		status = http.StatusBadRequest // the page still answers, with the picker's message
	}
	vm.Views = h.homeViews(c)
	err := errWorkOff
	if h.pipeline != nil {
		kinds, scope := h.checkHomeRows(c, vm.Role, viewer)
		err = h.fillHome(c, trl, viewer, &vm)
		if err == nil && vm.Role == home.RoleTeam {
			err = h.fillTeam(c, trl, viewer, &vm, rep, repOK)
		}
		if vm.Unchecked = h.uncheckedCount(c, kinds, scope); vm.Unchecked != "" {
			vm.UncheckedHint = trl.T("home.unchecked_count.hint", maxStaleRereads)
		}
	}
	switch {
	case errors.Is(err, errWorkOff):
		vm.Unavailable = true
	case errors.Is(err, workindex.ErrUnavailable):
		h.log(c).Warn("home: figures unavailable", slog.Any("err", err))
		vm.Unavailable = true
	case err != nil:
		h.fail(c, err)
		return
	}
	h.renderPage(c, status, vm.Title, layout.SectionNone, home.Page(vm))
}

// checkHomeRows re-reads with the viewer's token, within maxStaleRereads v2 calls, the rows of
// the role's figures the viewer may see but has not read as they stand: the back office's
// contracts (the signed ones first: its main action), everyone else's quotes and contracts of
// their figures' scope (contracts with an answer to act on first). It returns the kinds and the
// scope of those figures.
func (h *Handler) checkHomeRows(c *gin.Context, role home.Role, v workindex.Viewer) ([]workindex.Kind, workindex.Scope) {
	if role == home.RoleBackoffice {
		h.checkUnchecked(c, workindex.KindContract, workindex.ScopeAll, []workindex.Stage{workindex.StageSigned}, maxStaleRereads)
		return []workindex.Kind{workindex.KindContract}, workindex.ScopeAll
	}
	scope := workindex.ScopeMine
	if v.Team {
		scope = workindex.ScopeAll
	}
	used := h.checkUnchecked(c, workindex.KindContract, scope,
		[]workindex.Stage{workindex.StageSigned, workindex.StageDeclined, workindex.StageExpired, workindex.StageSignature}, maxStaleRereads/2)
	h.checkUnchecked(c, workindex.KindQuote, scope, pipeline.OpenStages(), maxStaleRereads-used)
	return []workindex.Kind{workindex.KindQuote, workindex.KindContract}, scope
}

// fillHome reads the figures of vm.Role.
func (h *Handler) fillHome(c *gin.Context, trl *i18n.Translator, v workindex.Viewer, vm *home.VM) error {
	ctx := c.Request.Context()
	p := h.pipeline
	if vm.Role == home.RoleBackoffice {
		waiting, err := p.Waiting(ctx, v)
		if err != nil {
			return err
		}
		vm.Waiting = h.waitingVM(trl, waiting)
		if !h.may(c, toolBatchArchive) {
			vm.Waiting.Numbers = nil // no button to a check the person would be refused
		}
		aging, err := p.Aging(ctx, v, workindex.StageSigned, workindex.ScopeAll)
		if err != nil {
			return err
		}
		vm.Aging = agingChart(trl, "home-aging-archive", trl.T("home.aging.archive.title"), trl.T("home.aging.archive.caption"), aging)
		return nil
	}
	stages, err := p.Stages(ctx, v)
	if err != nil {
		return err
	}
	vm.Pipeline, vm.PipelineTotal = pipelineChart(trl, stages)
	followUps, err := p.FollowUps(ctx, v)
	if err != nil {
		return err
	}
	opts := p.Options()
	for _, f := range followUps {
		fv := home.FollowUp{Kind: string(f.Kind), Count: countText(trl, f.Count), Href: workListURL(f.Query)}
		switch f.Kind {
		case pipeline.FollowUpSignature:
			fv.Title = trl.T("home.followups.signature", opts.SignatureDays)
		case pipeline.FollowUpDraft:
			fv.Title = trl.T("home.followups.draft", opts.DraftDays)
		case pipeline.FollowUpDeclined:
			fv.Title = trl.T("home.followups.declined")
		case pipeline.FollowUpExpired:
			fv.Title = trl.T("home.followups.expired")
		case pipeline.FollowUpArchive:
			fv.Title = trl.T("home.followups.archive")
		}
		for _, r := range f.Rows {
			fv.Items = append(fv.Items, h.homeItem(trl, r))
		}
		vm.FollowUps = append(vm.FollowUps, fv)
	}
	recentRows, err := p.Recent(ctx, v)
	if err != nil {
		return err
	}
	vm.Recent = &home.Recent{AllHref: "/work/quotes"}
	for _, r := range recentRows {
		vm.Recent.Items = append(vm.Recent.Items, h.homeItem(trl, r))
	}
	if vm.Role != home.RoleTeam {
		return nil
	}
	reps, err := p.Reps(ctx, v)
	if err != nil {
		return err
	}
	vm.Reps = repsChart(trl, reps)
	this, last, err := p.SignedMonths(ctx, v)
	if err != nil {
		return err
	}
	vm.Signed = countChart(trl, "home-signed", trl.T("home.signed.title"), trl.T("home.signed.caption"), trl.T("home.col.month"),
		[]string{trl.T("home.signed.this_month"), trl.T("home.signed.last_month")}, []pipeline.Count{this, last})
	conv, err := p.Conversion(ctx, v)
	if err != nil {
		return err
	}
	vm.Conversion = &home.Conversion{Title: trl.T("home.conversion.title"),
		GeneratedLabel: trl.T("home.conversion.generated"), Generated: trl.Integer(conv.Generated.Count), GenHref: workListURL(conv.Generated.Query),
		SignedLabel: trl.T("home.conversion.signed"), Signed: trl.Integer(conv.Signed.Count), SignedHref: workListURL(conv.Signed.Query),
		RateLabel: trl.T("home.conversion.rate"), Rate: "–"}
	if conv.Generated.Count > 0 {
		vm.Conversion.Rate = trl.Percent(float64(conv.Signed.Count) / float64(conv.Generated.Count))
	}
	aging, err := p.Aging(ctx, v, workindex.StageSignature, workindex.ScopeAll)
	if err != nil {
		return err
	}
	vm.Aging = agingChart(trl, "home-aging-signature", trl.T("home.aging.signature.title"), trl.T("home.aging.signature.caption"), aging)
	return nil
}

// pipelineChart is the open pipeline by stage and its total value in words.
func pipelineChart(trl *i18n.Translator, stages []pipeline.Figure) (*home.Chart, string) {
	c := &home.Chart{ID: "home-pipeline", Title: trl.T("home.pipeline.title"), Caption: trl.T("home.pipeline.caption"),
		LabelHead: trl.T("home.col.stage"), CountHead: trl.T("home.col.count"), ValueHead: trl.T("home.col.value")}
	var top, total, count int64
	for _, f := range stages {
		top = max(top, f.ValueCents)
		total += f.ValueCents
		count += f.Count
	}
	for _, f := range stages {
		c.Bars = append(c.Bars, home.Bar{Label: stageLabel(trl, f.Stage), Count: trl.Integer(f.Count), Value: trl.Money(f.ValueCents, "EUR"),
			Href: workListURL(f.Query), Fraction: fraction(f.ValueCents, top)})
	}
	return c, trl.T("home.pipeline.total", trl.Money(total, "EUR"), trl.Integer(count))
}

// repsChart is the team's open pipeline by rep (largest value first).
func repsChart(trl *i18n.Translator, reps []pipeline.Rep) *home.Chart {
	c := &home.Chart{ID: "home-reps", Title: trl.T("home.reps.title"), Caption: trl.T("home.reps.caption"),
		LabelHead: trl.T("home.col.rep"), CountHead: trl.T("home.col.count"), ValueHead: trl.T("home.col.value")}
	var top int64
	for _, r := range reps {
		top = max(top, r.ValueCents)
	}
	for _, r := range reps {
		name := r.Name
		if name == "" {
			name = trl.T("home.reps.unnamed")
		}
		c.Bars = append(c.Bars, home.Bar{Label: name, Count: trl.Integer(r.Count), Value: trl.Money(r.ValueCents, "EUR"),
			Href: workListURL(r.Query), Fraction: fraction(r.ValueCents, top)})
	}
	return c
}

// agingChart counts contracts by days in their stage.
func agingChart(trl *i18n.Translator, id, title, caption string, buckets []pipeline.Bucket) *home.Chart {
	labels := make([]string, len(buckets))
	counts := make([]pipeline.Count, len(buckets))
	for i, b := range buckets {
		switch {
		case b.MinDays == 0:
			labels[i] = trl.T("home.aging.under", b.MaxDays)
		case b.MaxDays == 0:
			labels[i] = trl.T("home.aging.over", b.MinDays)
		default:
			labels[i] = trl.T("home.aging.range", b.MinDays, b.MaxDays)
		}
		counts[i] = b.Count
	}
	return countChart(trl, id, title, caption, trl.T("home.col.age"), labels, counts)
}

// countChart is a chart of counts (no values).
func countChart(trl *i18n.Translator, id, title, caption, labelHead string, labels []string, counts []pipeline.Count) *home.Chart {
	c := &home.Chart{ID: id, Title: title, Caption: caption, LabelHead: labelHead, CountHead: trl.T("home.col.count")}
	top := 0
	for _, n := range counts {
		top = max(top, n.N)
	}
	for i, n := range counts {
		c.Bars = append(c.Bars, home.Bar{Label: labels[i], Count: countText(trl, n), Href: workListURL(n.Query), Fraction: fraction(int64(n.N), int64(top))})
	}
	return c
}

// waitingVM is the back office's signed contracts waiting for the archive: the oldest few shown,
// and the numbers their own token read taken to the batch check by the button.
func (h *Handler) waitingVM(trl *i18n.Translator, w pipeline.FollowUp) *home.Waiting {
	vm := &home.Waiting{Count: countText(trl, w.Count), Href: workListURL(w.Query)}
	for i, r := range w.Rows {
		item := h.homeItem(trl, r)
		if i < pipeline.FollowUpRows*2 {
			vm.Items = append(vm.Items, item)
		}
		if !item.Unchecked && r.ContractNumber != "" {
			vm.Numbers = append(vm.Numbers, r.ContractNumber)
		}
		vm.Unchecked = vm.Unchecked || item.Unchecked
	}
	vm.Button = trl.Plural(len(vm.Numbers), "home.waiting.check.one", "home.waiting.check.other")
	return vm
}

// homeItem is a row in a short list: its customer and stage only when it is revealed to the
// viewer (workindex.Row.Revealed, docs/work-index.md "Visibility rule"); else its link only.
func (h *Handler) homeItem(trl *i18n.Translator, r workindex.Row) home.Item {
	it := home.Item{}
	switch r.Kind {
	case workindex.KindQuote:
		it.Label = trl.T("worklist.pick.quote", strconv.FormatInt(r.QuoteID, 10))
		it.Href = quotes.Ref{CPQID: r.CPQID, CustomerID: r.CustomerID, QuoteID: r.QuoteID}.URL()
	case workindex.KindContract:
		it.Label = trl.T("contract.title", "#"+strconv.Itoa(int(r.ContractID)))
		it.Href = contractPath(r.ContractID)
	}
	if !r.Revealed() {
		// Never given by the index's lists (they read revealed rows only): its link, nothing else.
		it.Unchecked = true
		return it
	}
	if r.Kind == workindex.KindContract && r.ContractNumber != "" {
		it.Label = trl.T("contract.title", r.ContractNumber)
	}
	it.Customer = r.Customer
	it.StageLabel, it.StageLevel = stageLabel(trl, r.Stage), stageLevel(r.Stage)
	it.Changed = trl.T("home.item.changed", trl.Date(r.ChangedAt))
	return it
}

// countText is a count as the lists write it ("1,000+" when it stopped counting).
func countText(trl *i18n.Translator, n pipeline.Count) string {
	if n.Capped {
		return trl.T("home.count_more", trl.Integer(int64(n.N)))
	}
	return trl.Integer(int64(n.N))
}

func fraction(v, top int64) float64 {
	if top <= 0 || v <= 0 {
		return 0
	}
	return float64(v) / float64(top)
}

// workListURL is the work list that shows q's rows (docs/work-index.md "Lists and pages"): the
// same filters as URL parameters, so a figure and its list agree.
func workListURL(q workindex.Query) string {
	path := "/work/quotes"
	defaultScope := workindex.ScopeMine
	if q.Kind == workindex.KindContract {
		path, defaultScope = "/work/contracts", workindex.ScopeAll
	}
	v := url.Values{}
	if q.Scope != "" && q.Scope != defaultScope {
		v.Set("scope", string(q.Scope))
	}
	for _, st := range q.Stages {
		v.Add("stage", string(st))
	}
	day := func(t time.Time) string { return t.UTC().Format(workDateLayout) }
	if !q.From.IsZero() {
		v.Set("from", day(q.From))
	}
	if !q.To.IsZero() {
		v.Set("to", day(q.To.AddDate(0, 0, -1))) // the list's "to" is the last whole day
	}
	if !q.EnteredFrom.IsZero() {
		v.Set("entered_from", day(q.EnteredFrom))
	}
	if !q.EnteredTo.IsZero() {
		v.Set("entered_to", day(q.EnteredTo.AddDate(0, 0, -1)))
	}
	if q.Signed {
		v.Set("signed", "1")
	}
	if !q.SignedFrom.IsZero() {
		v.Set("signed_from", day(q.SignedFrom))
	}
	if !q.SignedTo.IsZero() {
		v.Set("signed_to", day(q.SignedTo.AddDate(0, 0, -1)))
	}
	if q.Person != "" {
		v.Set("by", q.Person)
	}
	if q.DeclineReason != "" {
		v.Set("reason", q.DeclineReason)
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}
