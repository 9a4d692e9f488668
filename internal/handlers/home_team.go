package handlers

import (
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/pipeline"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/home"
)

// The team lead's figures by rep (issue 41, docs/home.md "Team figures"): a row per rep, named,
// with their open pipeline, signed and declined contracts and win rate, each figure a link to
// the list that makes it; a rep picker (GET /?rep=<person key>) that shows one rep's row, their
// signed value by month and links to their lists. Like every figure they add up only the rows
// revealed to the viewer (workindex.SumsByRepStage): a rep whose rows the viewer's token was
// refused is not in the table, and asking for them by key shows nothing of them.

// homeRep is the rep the home page was asked for: "" for none; ok false when the parameter is
// not a person key (the page then answers 400 with its message). The key is only ever compared
// with the viewer's own reps and put into the portal's own list URLs (workListURL), never into
// an address of its own.
func homeRep(c *gin.Context) (rep string, ok bool) {
	raw := c.Query("rep")
	if raw == "" {
		return "", true
	}
	return raw, workPersonKey.MatchString(raw)
}

// fillTeam reads the team lead's figures by rep into vm, the chosen rep's only when rep is one
// of them.
func (h *Handler) fillTeam(c *gin.Context, trl *i18n.Translator, v workindex.Viewer, vm *home.VM, rep string, repOK bool) error {
	ctx := c.Request.Context()
	reps, err := h.pipeline.TeamFigures(ctx, v)
	if err != nil {
		return err
	}
	t := &home.Team{Caption: trl.T("home.team.caption"), RepHead: trl.T("home.col.rep"), OpenHead: trl.T("home.team.open"),
		SignedHead: trl.T("home.team.signed"), MedianHead: trl.T("home.team.median"), DeclinedHead: trl.T("home.team.declined"), RateHead: trl.T("home.team.rate"),
		Picker: home.RepPicker{Label: trl.T("home.team.picker"), Everyone: trl.T("home.team.everyone"), Submit: trl.T("home.team.show")}}
	chosen := ""
	switch {
	case !repOK:
		t.Problem = trl.T("home.team.bad_rep")
	case rep != "":
		if slices.ContainsFunc(reps, func(r pipeline.RepFigures) bool { return r.Person == rep }) {
			chosen = rep
		} else {
			t.Problem = trl.T("home.team.unknown_rep")
		}
	}
	names := map[string]string{}
	for _, r := range reps {
		name := repDisplayName(trl, r.Name)
		names[r.Person] = name
		t.Picker.Options = append(t.Picker.Options, home.RepOption{Value: r.Person, Label: name, Selected: r.Person == chosen})
		if chosen != "" && r.Person != chosen {
			continue
		}
		row := home.TeamRow{Person: r.Person, Name: name, Href: "/?" + url.Values{"rep": {r.Person}}.Encode(),
			Open: trl.Integer(r.Open.Count), OpenValue: trl.Money(r.Open.ValueCents, "EUR"), OpenHref: workListURL(r.Open.Query),
			Signed: countText(trl, r.Signed), SignedValue: trl.Money(r.SignedValueCents, "EUR"), SignedHref: workListURL(r.Signed.Query),
			Declined: trl.Integer(r.Declined.Count), DeclinedHref: workListURL(r.Declined.Query), Rate: "–", Median: "–"}
		if r.HasRate {
			row.Rate = trl.Percent(r.WinRate)
		}
		if r.HasMedian {
			row.Median, row.MedianHref = medianText(trl, r.MedianDays), workListURL(r.Signed.Query)
		}
		for _, reason := range r.Reasons {
			row.Reasons = append(row.Reasons, home.ReasonLink{Reason: reason.Reason, Count: trl.Integer(reason.Count),
				Href: workListURL(reason.Query)})
		}
		t.Rows = append(t.Rows, row)
	}
	slices.SortStableFunc(t.Picker.Options, func(a, b home.RepOption) int { return strings.Compare(a.Label, b.Label) })
	if chosen != "" {
		t.Chosen = trl.T("home.team.lists", names[chosen])
		q := func(kind workindex.Kind, stages ...workindex.Stage) string {
			return workListURL(workindex.Query{Kind: kind, Scope: workindex.ScopeAll, Stages: stages, Person: chosen})
		}
		t.Lists = []components.Link{
			{Href: q(workindex.KindQuote, pipeline.OpenStages()...), Label: trl.T("home.team.list.open")},
			{Href: q(workindex.KindContract, workindex.StageSignature), Label: trl.T("home.team.list.signature")},
			{Href: q(workindex.KindContract, workindex.StageSigned), Label: trl.T("home.team.list.signed")},
			{Href: q(workindex.KindContract, workindex.StageDeclined), Label: trl.T("home.team.list.declined")},
			{Href: q(workindex.KindQuote), Label: trl.T("home.team.list.quotes")},
			{Href: q(workindex.KindContract), Label: trl.T("home.team.list.contracts")},
		}
	}
	vm.Team = t
	months, err := h.pipeline.SignedByMonth(ctx, v, chosen)
	if err != nil {
		return err
	}
	caption := trl.T("home.months.caption")
	if chosen != "" {
		caption = trl.T("home.months.caption_rep", names[chosen])
	}
	chart := &home.Chart{ID: "home-signed-months", Title: trl.T("home.months.title"), Caption: caption,
		LabelHead: trl.T("home.col.month"), CountHead: trl.T("home.col.count"), ValueHead: trl.T("home.col.value")}
	var top int64
	for _, m := range months {
		top = max(top, m.ValueCents)
	}
	for _, m := range months {
		value := trl.Money(m.ValueCents, "EUR")
		if m.Capped {
			value = trl.T("home.count_more", value) // the value of the rows counted, as the count stops
		}
		chart.Bars = append(chart.Bars, home.Bar{Label: monthLabel(trl, m.Start), Count: countText(trl, m.Count),
			Value: value, Href: workListURL(m.Query), Fraction: fraction(m.ValueCents, top)})
	}
	vm.SignedByMonth = chart
	return nil
}

// medianText is a median of whole days in the reader's words: whole, or with its half.
func medianText(trl *i18n.Translator, days float64) string {
	if days == float64(int64(days)) {
		return trl.Integer(int64(days))
	}
	return trl.Decimal(days, 1)
}

// repDisplayName is a rep as people know them: the name they signed in with, as their rows
// recorded it.
func repDisplayName(trl *i18n.Translator, name string) string {
	if name == "" {
		return trl.T("home.reps.unnamed")
	}
	return name
}

// monthLabel is a month in the reader's words ("Nov 2026").
func monthLabel(trl *i18n.Translator, start time.Time) string {
	names := [12]string{"home.month.01", "home.month.02", "home.month.03", "home.month.04", "home.month.05", "home.month.06",
		"home.month.07", "home.month.08", "home.month.09", "home.month.10", "home.month.11", "home.month.12"}
	return trl.T("home.months.label", trl.T(names[start.Month()-1]), start.Year())
}

// homeViews are the person's saved views as links (nil when there are none or they cannot be
// read: the home page still answers).
func (h *Handler) homeViews(c *gin.Context) []components.Link {
	if h.views == nil {
		return nil
	}
	views, err := h.views.List(c.Request.Context(), auth.CurrentUser(c).Subject, "")
	if err != nil {
		h.log(c).Warn("home: saved views not listed", slog.Any("err", err))
		return nil
	}
	out := make([]components.Link, 0, len(views))
	for _, v := range views {
		l := viewLink(v, "")
		out = append(out, components.Link{Href: l.Href, Label: l.Name})
	}
	return out
}

// byRepLabel names the list's "by" filter by the rep's name, as the rows revealed to a team role
// give it (workindex.RepName); the general words when no revealed row names them.
func (h *Handler) byRepLabel(c *gin.Context, trl *i18n.Translator, v workindex.Viewer, f *workFilters) {
	if h.work == nil || f.query.Person == "" || !v.Team {
		return
	}
	name, err := h.work.RepName(c.Request.Context(), v, f.query.Person)
	if err != nil || name == "" {
		return
	}
	for i, n := range f.narrowing {
		if n.Name == "by" {
			f.narrowing[i].Label = trl.T("work.filters.by_name", name)
		}
	}
}
