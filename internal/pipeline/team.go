package pipeline

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/cpqportal/portal/internal/workindex"
)

// SignedMonthsBack is how many months the team's signed value by month covers (this one included).
const SignedMonthsBack = 12

// RepFigures are one rep's figures in the team lead's table (issue 41): each a count and value
// with the list that shows its rows (the rep's rows: created or changed last by them, revealed
// to the viewer). WinRate is Signed / (Signed + Declined) by count; HasRate is false when both
// are 0.
type RepFigures struct {
	Person, Name string
	// Open are the rep's open quotes (draft, contract generated, out for signature).
	Open Figure
	// Signed are the rep's contracts that were signed, archived since or not (workindex.Query.Signed:
	// a win stays a win), shown as their list counts them (up to workindex.CountBound).
	Signed Count
	// SignedValueCents is the value of the rep's signed contracts.
	SignedValueCents int64
	// MedianDays is the median of the whole days from send to signature of the signed contracts
	// whose send the index knows (DaysKnown of them; HasMedian false when none), over the same
	// list as Signed.
	MedianDays float64
	DaysKnown  int64
	HasMedian  bool
	// Declined are the rep's contracts a signer declined.
	Declined Figure
	// Reasons are the most common reasons of Declined (at most MaxReasons, most frequent first;
	// a decline without a reason is in none), each with the list of those contracts.
	Reasons []ReasonFigure
	WinRate float64
	HasRate bool
}

// MaxReasons is how many decline reasons a rep's row names.
const MaxReasons = 3

// ReasonFigure is a decline reason of one rep with how many of their declined contracts give
// it, and the list of them.
type ReasonFigure struct {
	Reason string
	Count  int64
	Query  workindex.Query
}

// TeamFigures are the team lead's figures by rep, largest open value first; nil for a viewer
// without a team role. They add up only the rows revealed to the viewer (work_viewer_reps: the
// viewer's own totals by rep), so a rep whose rows the viewer's token was refused shows none of
// them; a person with no figure at all is left out.
func (p *Pipeline) TeamFigures(ctx context.Context, v workindex.Viewer) ([]RepFigures, error) {
	if !v.Team || v.Key() == "" {
		return nil, nil
	}
	quotes, err := p.ix.SumsByRepStage(ctx, v, workindex.KindQuote)
	if err != nil {
		return nil, err
	}
	contracts, err := p.ix.SumsByRepStage(ctx, v, workindex.KindContract)
	if err != nil {
		return nil, err
	}
	signed, err := p.ix.SignedByRep(ctx, v)
	if err != nil {
		return nil, err
	}
	declines, err := p.ix.DeclinesByRep(ctx, v)
	if err != nil {
		return nil, err
	}
	byPerson := map[string]*RepFigures{}
	get := func(person, name string) *RepFigures {
		r := byPerson[person]
		if r == nil {
			r = &RepFigures{Person: person}
			r.Open = repFigure(person, workindex.KindQuote, workindex.ScopeAll, OpenStages()...)
			r.Declined = repFigure(person, workindex.KindContract, workindex.ScopeAll, workindex.StageDeclined)
			byPerson[person] = r
		}
		if name != "" {
			r.Name = name
		}
		return r
	}
	for _, q := range quotes {
		r := get(q.Person, q.Name)
		for _, st := range OpenStages() {
			r.Open.Count += q.Stages[st].N
			r.Open.ValueCents += q.Stages[st].ValueCents
		}
	}
	for _, c := range contracts {
		r := get(c.Person, c.Name)
		r.Declined.Count, r.Declined.ValueCents = c.Stages[workindex.StageDeclined].N, c.Stages[workindex.StageDeclined].ValueCents
	}
	out := make([]RepFigures, 0, len(byPerson))
	for _, r := range byPerson {
		// The stage totals hold each row's current stage, so an archived win is no longer in
		// "signed" there: the wins are the viewer's signed sums by rep (signed_at), as the months are.
		r.Signed.Query = workindex.Query{Kind: workindex.KindContract, Scope: workindex.ScopeAll, Person: r.Person, Signed: true}
		if s := signed[r.Person]; s != nil {
			r.Signed.N, r.Signed.Capped, r.SignedValueCents = int(min(s.N, workindex.CountBound)), s.N > workindex.CountBound, s.ValueCents
			r.MedianDays, r.DaysKnown = medianDays(s.Days)
			r.HasMedian = r.DaysKnown > 0
		}
		for _, reason := range declines[r.Person] {
			if reason.Reason == "" || len(r.Reasons) == MaxReasons {
				continue
			}
			q := r.Declined.Query
			q.DeclineReason = reason.Reason
			r.Reasons = append(r.Reasons, ReasonFigure{Reason: reason.Reason, Count: reason.N, Query: q})
		}
		if decided := int64(r.Signed.N) + r.Declined.Count; decided > 0 {
			r.WinRate, r.HasRate = float64(r.Signed.N)/float64(decided), true
		}
		if r.Open.Count > 0 || r.Signed.N > 0 || r.Declined.Count > 0 {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b RepFigures) int {
		return cmp.Or(cmp.Compare(b.Open.ValueCents, a.Open.ValueCents), cmp.Compare(b.SignedValueCents, a.SignedValueCents),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Person, b.Person))
	})
	return out, nil
}

// medianDays is the median of a histogram of days (days -> how many), and how many it holds: the
// middle value, or the mean of the two middle ones.
func medianDays(days map[int]int64) (float64, int64) {
	var n int64
	for _, c := range days {
		n += c
	}
	if n == 0 {
		return 0, 0
	}
	keys := slices.Sorted(maps.Keys(days))
	// at is the value of the i-th (0-based) of the n days in order.
	at := func(i int64) int {
		for _, k := range keys {
			if i < days[k] {
				return k
			}
			i -= days[k]
		}
		return keys[len(keys)-1]
	}
	if n%2 == 1 {
		return float64(at(n / 2)), n
	}
	return float64(at(n/2-1)+at(n/2)) / 2, n
}

// repFigure is an empty figure of one rep's rows of kind in stages, with its list.
func repFigure(person string, kind workindex.Kind, sc workindex.Scope, stages ...workindex.Stage) Figure {
	return Figure{Stage: stages[0], Query: workindex.Query{Kind: kind, Scope: sc, Stages: stages, Person: person}}
}

// Month is one month of the signed value by month: its first day (UTC), and the count and value
// of the contracts signed in it, with their list.
type Month struct {
	Start      time.Time
	ValueCents int64
	Count
}

// SignedByMonth are the contracts signed in each of the last SignedMonthsBack months (oldest
// first), the team's for a team role (one rep's when person is set: their rows, created or
// changed last by them, as the list's "by" filter), each month's count and value over the rows
// revealed to the viewer, whatever happened to them since (an archived contract that was signed
// stays counted), each linked to the list of the contracts signed in that month. A signature is
// dated by signedIn (workindex.Row.SignedAt). Both read the viewer's own sums kept on write, one
// read of a few rows: the team's workindex.SignedByMonth (work_viewer_signed), one rep's
// workindex.RepSignedByMonth (work_viewer_rep_months). A count is shown as the month's list counts
// it, to workindex.CountBound (Capped past it); the value is always the whole month's.
func (p *Pipeline) SignedByMonth(ctx context.Context, v workindex.Viewer, person string) ([]Month, error) {
	today := p.today()
	first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1-SignedMonthsBack, 0)
	var sums map[int]workindex.Total
	var err error
	if person == "" || !v.Team {
		sums, err = p.ix.SignedByMonth(ctx, v, scope(v))
	} else {
		sums, err = p.ix.RepSignedByMonth(ctx, v, person, workindex.SignedMonth(first))
	}
	if err != nil {
		return nil, err
	}
	out := make([]Month, 0, SignedMonthsBack)
	for i := range SignedMonthsBack {
		start := first.AddDate(0, i, 0)
		q := signedIn(workindex.Query{Kind: workindex.KindContract, Scope: scope(v), Person: person}, start, start.AddDate(0, 1, 0))
		t := sums[workindex.SignedMonth(start)]
		out = append(out, Month{Start: start, ValueCents: t.ValueCents,
			Count: Count{N: int(min(t.N, workindex.CountBound)), Capped: t.N > workindex.CountBound, Query: q}})
	}
	return out, nil
}

// signedIn narrows q to the contracts signed from from to to (exclusive): the one place the team
// figures date a signature, by workindex.Row.SignedAt (the v2 API's signedAt, else when the
// portal first saw the contract signed; kept after it is archived), as SignedMonths does.
func signedIn(q workindex.Query, from, to time.Time) workindex.Query {
	q.Stages = nil
	q.SignedFrom, q.SignedTo = from, to
	return q
}
