// Package pipeline answers the home page's figures (docs/home.md): a person's or the team's open
// pipeline by stage (count and value), the figures by rep, the follow-ups (contracts out for
// signature too long, declined, expired, drafts untouched, signed contracts waiting for the
// archive), contracts signed this month and last, the generated-to-signed conversion and the
// aging of what is out for signature or waiting for the archive.
//
// Every figure is read from the work index (internal/workindex) under its rules: a rep's figures
// are their own rows (created or changed last by them, their My quotes), a team role's are every
// row the team lists, and of both only the rows revealed to the viewer (their own token read the
// row as it stands: docs/work-index.md "Visibility rule"), as the lists show them. Each figure
// carries the list query that makes it (Figure.Query and friends), so the page links every number
// and bar to that list, and the list shows the same rows. The rows the viewer may list but has
// not read as they stand are only counted, apart (Unchecked), with no stage or value.
//
// Counts and values by stage add up the viewer's revealed rows (workindex.Sums: the viewer's own
// reads, or their My quotes); the rest are index ranges of stage_since or the lists' own
// queries, counted up to workindex.CountBound.
package pipeline

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/cpqportal/portal/internal/workindex"
)

// Defaults of Options.
const (
	DefaultSignatureDays = 14
	DefaultDraftDays     = 30
	// FollowUpRows is how many rows of each follow-up the page shows (the list has them all).
	FollowUpRows = 5
	// MaxReps is how many reps the team's figures name (largest open value first).
	MaxReps = 10
	// MaxWaiting is how many signed contracts the back office's button takes to the batch check.
	MaxWaiting = 100
)

// Options tune the figures (the handlers pass the settings, whose defaults are these; 0 days
// makes everything in the stage a follow-up at once, for demos and tests).
type Options struct {
	// SignatureDays: a contract out for signature longer than this is a follow-up
	// (PORTAL_FOLLOWUP_SIGNATURE_DAYS).
	SignatureDays int
	// DraftDays: a draft untouched for this long is a follow-up (PORTAL_FOLLOWUP_DRAFT_DAYS).
	DraftDays int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Pipeline reads the home page's figures from the work index.
type Pipeline struct {
	ix   *workindex.Index
	opts Options
}

// New returns the figures of ix.
func New(ix *workindex.Index, opts Options) *Pipeline {
	if opts.SignatureDays < 0 {
		opts.SignatureDays = DefaultSignatureDays
	}
	if opts.DraftDays < 0 {
		opts.DraftDays = DefaultDraftDays
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Pipeline{ix: ix, opts: opts}
}

// Options are the settings in use (after defaults).
func (p *Pipeline) Options() Options { return p.opts }

// OpenStages are the stages of a deal still open, in deal order.
func OpenStages() []workindex.Stage {
	return []workindex.Stage{workindex.StageDraft, workindex.StageGenerated, workindex.StageSignature}
}

// Figure is a stage's count and value (one-off plus 12 months of monthly, workindex.Row.ValueCents).
type Figure struct {
	Stage      workindex.Stage
	Count      int64
	ValueCents int64
	// Query is the list that shows these rows.
	Query workindex.Query
}

// Count is a figure counted on a list up to workindex.CountBound.
type Count struct {
	N      int
	Capped bool
	Query  workindex.Query
}

// Rep is one person's open pipeline in the team's figures.
type Rep struct {
	Person, Name string
	Count        int64
	ValueCents   int64
	Query        workindex.Query
}

// Bucket is one bar of an aging chart: the rows that entered their stage between MinDays and
// MaxDays ago (MaxDays 0: or longer).
type Bucket struct {
	MinDays, MaxDays int
	Count
}

// FollowUpKind names a follow-up.
type FollowUpKind string

// The follow-ups, in the order the page shows them.
const (
	FollowUpSignature FollowUpKind = "signature" // out for signature longer than SignatureDays
	FollowUpDeclined  FollowUpKind = "declined"
	FollowUpExpired   FollowUpKind = "expired"
	FollowUpDraft     FollowUpKind = "draft"   // drafts untouched for DraftDays
	FollowUpArchive   FollowUpKind = "archive" // signed, waiting for the archive
)

// FollowUp is one kind of follow-up: how many, and the oldest few.
type FollowUp struct {
	Kind FollowUpKind
	Count
	Rows []workindex.Row
}

// scope is whose figures: the team's (a team role) or the viewer's own.
func scope(v workindex.Viewer) workindex.Scope {
	if v.Team {
		return workindex.ScopeAll
	}
	return workindex.ScopeMine
}

// today is the start of the current day (UTC, as the lists' date filters read their dates).
func (p *Pipeline) today() time.Time {
	return p.opts.Now().UTC().Truncate(24 * time.Hour)
}

// daysAgo is the end of the day n days ago: a row that entered its stage before it has been in
// it for n days or more, counted in whole days as the lists' date filters count them.
func (p *Pipeline) daysAgo(n int) time.Time {
	return p.today().AddDate(0, 0, 1-n)
}

// Stages are the viewer's open pipeline (the team's for a team role) by stage, from the quotes:
// a quote follows its contract's stage, so each deal counts once.
func (p *Pipeline) Stages(ctx context.Context, v workindex.Viewer) ([]Figure, error) {
	totals, err := p.totals(ctx, v, workindex.KindQuote)
	if err != nil {
		return nil, err
	}
	var out []Figure
	for _, st := range OpenStages() {
		t := totals[st]
		out = append(out, Figure{Stage: st, Count: t.n, ValueCents: t.value,
			Query: workindex.Query{Kind: workindex.KindQuote, Scope: scope(v), Stages: []workindex.Stage{st}}})
	}
	return out, nil
}

// Conversion is how many contracts were signed of those generated. A signature counts whatever
// happens to the contract afterwards: an archived contract that was signed stays signed and
// generated (workindex.Row.SignedAt); an archived contract the index never saw signed counts in
// neither (docs/home.md).
type Conversion struct {
	Signed, Generated Figure
}

// Conversion is the viewer's (or the team's) generated-to-signed conversion: signed are the
// contracts ever signed (workindex.SignedByMonth, every month), generated those plus the
// contracts still open or answered without a signature (generated, out for signature, declined,
// expired).
func (p *Pipeline) Conversion(ctx context.Context, v workindex.Viewer) (Conversion, error) {
	totals, err := p.totals(ctx, v, workindex.KindContract)
	if err != nil {
		return Conversion{}, err
	}
	months, err := p.ix.SignedByMonth(ctx, v, scope(v))
	if err != nil {
		return Conversion{}, err
	}
	generated := []workindex.Stage{workindex.StageGenerated, workindex.StageSignature, workindex.StageSigned,
		workindex.StageDeclined, workindex.StageExpired}
	c := Conversion{
		Signed: Figure{Stage: workindex.StageSigned,
			Query: workindex.Query{Kind: workindex.KindContract, Scope: scope(v), Signed: true}},
		Generated: Figure{Stage: workindex.StageGenerated,
			Query: workindex.Query{Kind: workindex.KindContract, Scope: scope(v), Stages: generated}},
	}
	for _, t := range months {
		c.Signed.Count += t.N
		c.Signed.ValueCents += t.ValueCents
	}
	c.Generated.Count, c.Generated.ValueCents = c.Signed.Count, c.Signed.ValueCents
	for _, st := range []workindex.Stage{workindex.StageGenerated, workindex.StageSignature, workindex.StageDeclined, workindex.StageExpired} {
		c.Generated.Count += totals[st].n
		c.Generated.ValueCents += totals[st].value
	}
	return c, nil
}

// Reps are the team's open pipeline by rep, largest open value first, at most MaxReps; nil for a
// viewer without a team role. Like every figure, they add up only the rows revealed to the viewer.
func (p *Pipeline) Reps(ctx context.Context, v workindex.Viewer) ([]Rep, error) {
	if !v.Team || v.Key() == "" {
		return nil, nil
	}
	open := OpenStages()
	people, err := p.ix.SumsByPerson(ctx, v, workindex.KindQuote, open)
	if err != nil {
		return nil, err
	}
	var out []Rep
	for _, pt := range people {
		if pt.N <= 0 {
			continue
		}
		out = append(out, Rep{Person: pt.Person, Name: pt.Name, Count: pt.N, ValueCents: pt.ValueCents,
			Query: workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeAll, Stages: open, Person: pt.Person}})
	}
	slices.SortFunc(out, func(a, b Rep) int {
		return cmp.Or(cmp.Compare(b.ValueCents, a.ValueCents), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Person, b.Person))
	})
	if len(out) > MaxReps {
		out = out[:MaxReps]
	}
	return out, nil
}

// total is one stage's count and value.
type total struct{ n, value int64 }

// totals are the viewer's (or the team's) counts and values of kind by stage, over the rows
// revealed to the viewer (workindex.Sums): the rows the lists of the same scope show.
func (p *Pipeline) totals(ctx context.Context, v workindex.Viewer, kind workindex.Kind) (map[workindex.Stage]total, error) {
	sums, err := p.ix.Sums(ctx, v, kind, scope(v))
	if err != nil {
		return nil, err
	}
	out := make(map[workindex.Stage]total, len(sums))
	for st, t := range sums {
		out[st] = total{n: t.N, value: t.ValueCents}
	}
	return out, nil
}

// FollowUps are the viewer's follow-ups (the team's for a team role), each with its count and its
// oldest FollowUpRows rows (by last change). A follow-up of one whole stage (declined, expired,
// signed) takes its count from the stage sums as the pipeline does; the others count their range.
func (p *Pipeline) FollowUps(ctx context.Context, v workindex.Viewer) ([]FollowUp, error) {
	contracts := func(st workindex.Stage) workindex.Query {
		return workindex.Query{Kind: workindex.KindContract, Scope: scope(v), Stages: []workindex.Stage{st}}
	}
	signature := contracts(workindex.StageSignature)
	signature.EnteredTo = p.daysAgo(p.opts.SignatureDays)
	draft := workindex.Query{Kind: workindex.KindQuote, Scope: scope(v), Stages: []workindex.Stage{workindex.StageDraft},
		To: p.daysAgo(p.opts.DraftDays)}
	specs := []struct {
		kind FollowUpKind
		q    workindex.Query
	}{
		{FollowUpSignature, signature},
		{FollowUpDeclined, contracts(workindex.StageDeclined)},
		{FollowUpExpired, contracts(workindex.StageExpired)},
		{FollowUpDraft, draft},
		{FollowUpArchive, contracts(workindex.StageSigned)},
	}
	totals, err := p.totals(ctx, v, workindex.KindContract)
	if err != nil {
		return nil, err
	}
	out := make([]FollowUp, 0, len(specs))
	for _, s := range specs {
		whole := wholeStage(v, s.q)
		f, err := p.oldest(ctx, v, s.q, FollowUpRows, whole)
		if err != nil {
			return nil, err
		}
		if whole {
			f.Count = stageCount(totals, s.q)
		}
		f.Kind = s.kind
		out = append(out, f)
	}
	return out, nil
}

// wholeStage says whether q's count is a stage's figure of the sums: one whole stage, no other
// filter, and the rows the sums add up for v (the revealed rows of the team for a team role, of
// the viewer's My quotes for anyone else: the list's own rows).
func wholeStage(v workindex.Viewer, q workindex.Query) bool {
	plain := len(q.Stages) == 1 && q.CustomerID == 0 && q.CPQID == 0 && q.Find == "" && q.Person == "" &&
		q.From.IsZero() && q.To.IsZero() && q.EnteredFrom.IsZero() && q.EnteredTo.IsZero()
	return plain && v.Key() != "" && (v.Team && q.Scope == workindex.ScopeAll || !v.Team && q.Scope == workindex.ScopeMine)
}

// stageCount is q's count (wholeStage) from totals, bounded as the lists bound theirs.
func stageCount(totals map[workindex.Stage]total, q workindex.Query) Count {
	n := max(totals[q.Stages[0]].n, 0)
	return Count{N: int(min(n, workindex.CountBound)), Capped: n > workindex.CountBound, Query: q}
}

// Waiting are the signed contracts waiting for the archive (the back office's), the oldest
// MaxWaiting of them.
func (p *Pipeline) Waiting(ctx context.Context, v workindex.Viewer) (FollowUp, error) {
	q := workindex.Query{Kind: workindex.KindContract, Scope: workindex.ScopeAll, Stages: []workindex.Stage{workindex.StageSigned}}
	if !wholeStage(v, q) {
		f, err := p.oldest(ctx, v, q, MaxWaiting, false)
		f.Kind = FollowUpArchive
		return f, err
	}
	f, err := p.oldest(ctx, v, q, MaxWaiting, true)
	if err != nil {
		return FollowUp{}, err
	}
	totals, err := p.totals(ctx, v, workindex.KindContract)
	if err != nil {
		return FollowUp{}, err
	}
	f.Kind, f.Count = FollowUpArchive, stageCount(totals, q)
	return f, nil
}

// oldest lists q's oldest rows (by last change) with q's count (none when noCount: the caller
// has it).
func (p *Pipeline) oldest(ctx context.Context, v workindex.Viewer, q workindex.Query, n int, noCount bool) (FollowUp, error) {
	list := q
	list.Asc, list.PerPage, list.NoOptions, list.NoCount = true, n, true, noCount
	page, err := p.ix.List(ctx, v, list)
	if err != nil {
		return FollowUp{}, err
	}
	return FollowUp{Count: Count{N: page.Total, Capped: page.Capped, Query: q}, Rows: page.Rows}, nil
}

// Recent is the viewer's own recent work: their latest quotes (My quotes, the list it links to),
// read without a count (the page shows none).
func (p *Pipeline) Recent(ctx context.Context, v workindex.Viewer) ([]workindex.Row, error) {
	q := workindex.Query{Kind: workindex.KindQuote, Scope: workindex.ScopeMine, PerPage: FollowUpRows, NoOptions: true, NoCount: true}
	page, err := p.ix.List(ctx, v, q)
	if err != nil {
		return nil, err
	}
	return page.Rows, nil
}

// SignedMonths are the contracts signed this month and last month (UTC months of their
// signature, workindex.Row.SignedAt: the v2 API's signedAt, else when the portal first saw them
// signed), whatever happened to them since: an archived contract that was signed stays counted
// (docs/home.md). Read from the viewer's signed sums (workindex.SignedByMonth), each linked to the
// list of the contracts signed in that month.
func (p *Pipeline) SignedMonths(ctx context.Context, v workindex.Viewer) (this, last Count, err error) {
	today := p.today()
	month := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	q := workindex.Query{Kind: workindex.KindContract, Scope: scope(v)}
	this.Query, last.Query = q, q
	this.Query.SignedFrom, this.Query.SignedTo = month, month.AddDate(0, 1, 0)
	last.Query.SignedFrom, last.Query.SignedTo = month.AddDate(0, -1, 0), month
	months, err := p.ix.SignedByMonth(ctx, v, scope(v))
	if err != nil {
		return this, last, err
	}
	for _, c := range []*Count{&this, &last} {
		n := months[workindex.SignedMonth(c.Query.SignedFrom)].N
		c.N, c.Capped = int(min(n, workindex.CountBound)), n > workindex.CountBound
	}
	return this, last, nil
}

// AgingDays are the aging chart's bucket bounds in days.
var AgingDays = []int{7, 14, 30}

// Aging counts the contracts in stage (out for signature, or signed and waiting for the archive)
// by how long they have been in it: under 7 days, 7 to 14, 14 to 30, 30 and more (whole days,
// UTC, as the lists' date filters).
func (p *Pipeline) Aging(ctx context.Context, v workindex.Viewer, stage workindex.Stage, sc workindex.Scope) ([]Bucket, error) {
	var out []Bucket
	lower := 0
	for i := 0; i <= len(AgingDays); i++ {
		q := workindex.Query{Kind: workindex.KindContract, Scope: sc, Stages: []workindex.Stage{stage}}
		b := Bucket{MinDays: lower}
		if lower > 0 {
			q.EnteredTo = p.daysAgo(lower)
		}
		if i < len(AgingDays) {
			b.MaxDays = AgingDays[i]
			q.EnteredFrom = p.daysAgo(b.MaxDays)
			lower = b.MaxDays
		}
		b.Query = q
		var err error
		if b.N, b.Capped, err = p.ix.Count(ctx, v, q); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Unchecked is how many rows of the viewer's figures' scope (quotes and contracts) they may list
// but their token has not read as they stand: counted apart, with no stage, value or filter
// (docs/home.md), and re-read with their token a few at a time (the handlers).
func (p *Pipeline) Unchecked(ctx context.Context, v workindex.Viewer) (Count, error) {
	var out Count
	for _, kind := range []workindex.Kind{workindex.KindQuote, workindex.KindContract} {
		u, err := p.ix.Unchecked(ctx, v, kind, scope(v), 0)
		if err != nil {
			return Count{}, err
		}
		out.N += u.Count
		out.Capped = out.Capped || u.Capped
	}
	return out, nil
}
