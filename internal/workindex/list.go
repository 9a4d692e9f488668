package workindex

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/textfold"
)

// Scope says whose rows a list shows.
type Scope string

// The scopes.
const (
	// ScopeMine: rows the viewer created or changed last ("My quotes").
	ScopeMine Scope = "mine"
	// ScopeAll: every row the viewer may list: the rows they created, changed or opened, and for
	// a team role every row (never one the v2 API refused them).
	ScopeAll Scope = "all"
)

// Sort orders a list.
type Sort string

// The orders.
const (
	SortChanged Sort = "changed" // last change, newest first
	SortValue   Sort = "value"   // value, largest first
)

// MaxPerPage bounds a page.
const MaxPerPage = 100

// CountBound is where a list stops counting: beyond it the count reads "1,000+" (Page.Capped), so
// a broad filter over millions of rows never waits for an exact count (counting reads every
// matching index entry: 10,000 of them cost a page about 10 ms at 1M rows per kind, 1,000 about 1).
const CountBound = 1_000

// Query is a list's filters, validated by the caller (the handlers answer 400 for bad ones).
type Query struct {
	Kind   Kind
	Scope  Scope
	Stages []Stage // none: every stage
	// CustomerID and CPQID filter by customer and configurator (0: any).
	CustomerID int32
	CPQID      int32
	// From and To bound the last change (zero: open).
	From, To time.Time
	// EnteredFrom and EnteredTo bound when the row entered its stage (zero: open): the home
	// page's follow-ups and aging link to them ("out for signature since before ...").
	EnteredFrom, EnteredTo time.Time
	// Signed lists only contracts that were signed (Row.SignedAt set: signed, or archived after
	// their signature); SignedFrom and SignedTo bound when (zero: open; either implies Signed).
	// The home page's "signed this month" and conversion link to them.
	Signed               bool
	SignedFrom, SignedTo time.Time
	// Person (a PersonKey) lists the rows that person created or changed last, as their My quotes
	// would: a team role's view of one rep (the home page's figures by rep). It is ignored for a
	// viewer without a team role, who lists only their own rows.
	Person string
	// DeclineReason lists the declined contracts whose signer gave this reason (Row.DeclineReason,
	// as DeclineReasonText stores it; "": any): the team figures' reasons link to it.
	DeclineReason string
	// NoOptions leaves Page.Configurators out (a page that shows no filter form).
	NoOptions bool
	// NoCount reads the page without counting (Page.Total 0, one page): a short list that shows
	// no count (the home page's recent work).
	NoCount bool
	// Find is a quote or contract number or part of the customer's name (folded as the customer
	// search folds: case, accents and punctuation).
	Find string
	Sort Sort
	// Asc reverses the order.
	Asc bool
	// Page is 1-based; PerPage at most MaxPerPage (default 25).
	Page, PerPage int
	// After continues a list past the rows it counts (keyset paging): the page starts after this
	// row of the same order (Page.Next of the page before). Page is then ignored.
	After *Cursor
}

// signed: the query lists signed contracts only (Signed, SignedFrom, SignedTo).
func (q Query) signed() bool { return q.Signed || !q.SignedFrom.IsZero() || !q.SignedTo.IsZero() }

// Cursor is a row's place in a list's order: its sort key (last change in unix microseconds, or
// value in cents) and its id.
type Cursor struct{ Key, ID int64 }

// String is the cursor as a URL parameter ("key.id").
func (c Cursor) String() string {
	return strconv.FormatInt(c.Key, 10) + "." + strconv.FormatInt(c.ID, 10)
}

// ParseCursor reads a cursor written by String.
func ParseCursor(s string) (Cursor, bool) {
	key, id, ok := strings.Cut(s, ".")
	k, err1 := strconv.ParseInt(key, 10, 64)
	i, err2 := strconv.ParseInt(id, 10, 64)
	if !ok || err1 != nil || err2 != nil || i < 0 {
		return Cursor{}, false
	}
	return Cursor{Key: k, ID: i}, true
}

// Page is one page of a list.
type Page struct {
	Rows []Row
	// Total is how many rows match, at most CountBound; Capped says there are more.
	Total  int
	Capped bool
	// Pages is how many pages Total fills.
	Pages int
	// Page is the page shown (clamped to Pages).
	Page int
	// Configurators are the configurators the index knows by name (for the filter).
	Configurators []Option
	// Next continues the list past this page when there may be more rows than the pages count
	// (the count stopped at CountBound, or the page was itself reached by a cursor); nil otherwise.
	Next *Cursor
}

// Option is a value of a filter with its label.
type Option struct {
	ID   int32
	Name string
}

// List answers one page of rows for the viewer. ErrUnavailable when the database cannot be read.
//
// The query is built from the filters (docs/work-index.md "Lists as queries"): the order is an
// index's order, so a page reads the rows it shows and few more; "My quotes" is a UNION of two
// ordered scans (created by, last changed by) rather than an OR that would sort the user's whole
// set; the count stops at CountBound.
func (ix *Index) List(ctx context.Context, v Viewer, q Query) (Page, error) {
	key := v.Key()
	if key == "" {
		return Page{Pages: 1, Page: 1}, nil
	}
	if q.PerPage <= 0 {
		q.PerPage = 25
	}
	q.PerPage = min(q.PerPage, MaxPerPage)
	if !v.Team {
		q.Person = "" // a rep lists their own rows only
	}
	b := listQuery{args: []any{string(q.Kind), key}}
	var matching []int32
	broad := false
	if folded := textfold.Fold(strings.TrimSpace(q.Find)); folded != "" {
		var err error
		if matching, broad, err = ix.customersMatching(ctx, folded); err != nil {
			return Page{}, err
		}
	}
	b.filters(q, matching, broad)
	b.useOwnReads(q, v)
	order := orderBy(q)

	var count int
	if !q.NoCount {
		var err error
		if count, err = ix.count(ctx, v, q, &b); err != nil {
			return Page{}, err
		}
	}
	page := Page{Total: min(count, CountBound), Capped: count > CountBound}
	page.Pages = max(1, (page.Total+q.PerPage-1)/q.PerPage)
	page.Page = min(max(q.Page, 1), page.Pages)
	offset := (page.Page - 1) * q.PerPage
	if q.After != nil {
		// Past the counted pages: the rows after the cursor, in order (an index range).
		b.after(q, *q.After)
		page.Page, offset = page.Pages, 0
	}

	rows, err := ix.db.SQL.QueryContext(ctx, b.pageSQL(q, v, order, q.PerPage, offset), b.args...)
	if err != nil {
		return Page{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRow(rows, true)
		if err != nil {
			return Page{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		page.Rows = append(page.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if len(page.Rows) == q.PerPage && page.Capped && (q.After != nil || page.Page == page.Pages) {
		last := page.Rows[len(page.Rows)-1]
		page.Next = &Cursor{Key: sortKey(q, &last), ID: last.ID()}
	}
	if q.NoOptions {
		return page, nil
	}
	if page.Configurators, err = ix.configurators(ctx); err != nil {
		return Page{}, err
	}
	return page, nil
}

func (ix *Index) configurators(ctx context.Context) ([]Option, error) {
	rows, err := ix.db.SQL.QueryContext(ctx, `SELECT cpq_id, name FROM work_configurators ORDER BY name, cpq_id`)
	if err != nil {
		return nil, fmt.Errorf("%w: configurators: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	var out []Option
	for rows.Next() {
		var o Option
		if err := rows.Scan(&o.ID, &o.Name); err != nil {
			return nil, fmt.Errorf("%w: configurators: %w", ErrUnavailable, err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// listQuery builds a list's SQL: $1 is the kind, $2 the viewer's key.
type listQuery struct {
	args  []any
	where []string
	// person is the placeholder of Query.Person ("": none).
	person string
	// unchecked selects the rows the viewer may list but are not revealed to them (Unchecked)
	// instead of the revealed ones.
	unchecked bool
	// ownReads reads a team role's list of one stage from their own reads (work_viewers), in the
	// order of the stage and times each revealed read carries (work_viewers_stage_since,
	// work_viewers_stage_changed, migration 00017): a count or a page then reads the viewer's reads
	// in that stage and no other row, however few of the team's rows they have read; the rows'
	// own stage, times and revealedSQL's condition still decide (useOwnReads).
	ownReads bool
	// kindParam is the kind's placeholder in the branches ("": $1); CustomerWork unions two
	// kinds' pages in one statement, the second kind a placeholder of its own.
	kindParam string
}

// kind is the kind's placeholder.
func (b *listQuery) kind() string {
	if b.kindParam == "" {
		return "$1"
	}
	return b.kindParam
}

// useOwnReads sets ownReads when the list is a team role's whole team in one stage, filtered at
// most by dates, in the order of last change (the home page's follow-ups, aging and counts, a
// stage's list): the filters the copies on work_viewers answer.
func (b *listQuery) useOwnReads(q Query, v Viewer) {
	b.ownReads = v.Team && !b.unchecked && q.Scope != ScopeMine && q.Person == "" && len(q.Stages) == 1 && q.CustomerID == 0 &&
		q.CPQID == 0 && strings.TrimSpace(q.Find) == "" && q.Sort != SortValue && q.After == nil && !q.signed() && q.DeclineReason == ""
}

// onOwnReads is an order or a condition on work_rows r written on the viewer's reads o (for
// ownReads: a revealed read's copies equal the row's).
func onOwnReads(s string) string { return strings.ReplaceAll(s, "r.", "o.") }

func (b *listQuery) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// filters adds the query's filters (not visibility and scope) to the WHERE clause.
// maxMatchingCustomers is how many customers a search names one by one (an index range each);
// a term more of them match is broad, and the search filters rows as it reads them in order.
const maxMatchingCustomers = 500

// customersMatching are the customers whose folded name contains folded (work_customers, one row
// per customer); broad when there are more than maxMatchingCustomers.
func (ix *Index) customersMatching(ctx context.Context, folded string) ([]int32, bool, error) {
	rows, err := ix.db.SQL.QueryContext(ctx, `SELECT customer_id FROM work_customers WHERE folded LIKE $1 ESCAPE '\' LIMIT $2`,
		"%"+statedb.EscapeLike(folded)+"%", maxMatchingCustomers+1)
	if err != nil {
		return nil, false, fmt.Errorf("%w: customers by name: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	var ids []int32
	for rows.Next() {
		var id int32
		if err := rows.Scan(&id); err != nil {
			return nil, false, fmt.Errorf("%w: customers by name: %w", ErrUnavailable, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("%w: customers by name: %w", ErrUnavailable, err)
	}
	if len(ids) > maxMatchingCustomers {
		return nil, true, nil
	}
	return ids, false, nil
}

// filters adds the query's filters; matching are the customers the search names (broad: too many
// to name, the search filters by name as it reads).
func (b *listQuery) filters(q Query, matching []int32, broad bool) {
	if len(q.Stages) > 0 {
		stages := make([]string, len(q.Stages))
		for i, s := range q.Stages {
			stages[i] = string(s)
		}
		b.where = append(b.where, "r.stage IN ("+placeholders(&b.args, stages)+")")
	}
	if q.CustomerID != 0 {
		b.where = append(b.where, "r.customer_id = "+b.arg(q.CustomerID))
	}
	if q.CPQID != 0 {
		b.where = append(b.where, "r.cpq_id = "+b.arg(q.CPQID))
	}
	if !q.From.IsZero() {
		b.where = append(b.where, "r.changed_at >= "+b.arg(statedb.Micros(q.From)))
	}
	if !q.To.IsZero() {
		b.where = append(b.where, "r.changed_at < "+b.arg(statedb.Micros(q.To)))
	}
	if !q.EnteredFrom.IsZero() {
		b.where = append(b.where, "r.stage_since >= "+b.arg(statedb.Micros(q.EnteredFrom)))
	}
	if !q.EnteredTo.IsZero() {
		b.where = append(b.where, "r.stage_since < "+b.arg(statedb.Micros(q.EnteredTo)))
	}
	if q.Signed || !q.SignedFrom.IsZero() || !q.SignedTo.IsZero() {
		b.where = append(b.where, "r.signed_at > 0")
	}
	if !q.SignedFrom.IsZero() {
		b.where = append(b.where, "r.signed_at >= "+b.arg(statedb.Micros(q.SignedFrom)))
	}
	if !q.SignedTo.IsZero() {
		b.where = append(b.where, "r.signed_at < "+b.arg(statedb.Micros(q.SignedTo)))
	}
	if q.Person != "" {
		b.person = b.arg(q.Person)
	}
	if q.DeclineReason != "" {
		b.where = append(b.where, "r.decline_reason = "+b.arg(q.DeclineReason))
	}
	find := strings.TrimSpace(q.Find)
	if find == "" {
		return
	}
	alts := []string{}
	folded := textfold.Fold(find)
	switch {
	case broad:
		alts = append(alts, `r.customer_folded LIKE `+b.arg("%"+statedb.EscapeLike(folded)+"%")+` ESCAPE '\'`)
	case len(matching) > 0:
		// The customers whose name matches, each an index range of work_rows_customer.
		alts = append(alts, "r.customer_id IN ("+placeholders(&b.args, matching)+")")
	}
	// A number: a text of one word with a digit. It finds a quote by its number (the quote list)
	// and a contract by its number, whole or its beginning, each an index range; a name never
	// reads the numbers.
	number := strings.TrimPrefix(find, "#")
	if strings.ContainsAny(number, "0123456789") && !strings.ContainsAny(number, " \t") {
		if id, err := strconv.ParseInt(number, 10, 64); err == nil && q.Kind == KindQuote {
			alts = append(alts, "r.id = "+b.arg(id))
		}
		// Contract numbers are compared as the v2 API writes them (upper case: "C-2026-000123"),
		// from the text to the text followed by the highest character.
		upper := strings.ToUpper(number)
		alts = append(alts, "(r.contract_number >= "+b.arg(upper)+" AND r.contract_number < "+b.arg(upper+"\U0010FFFF")+")")
	}
	if len(alts) == 0 {
		alts = append(alts, "1 = 0") // no customer by that name, and no number in the text
	}
	b.where = append(b.where, "("+strings.Join(alts, " OR ")+")")
}

// notDenied leaves out the rows the v2 API refused the viewer (an anti-join on the small table
// work_denied).
const notDenied = "NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = $2 AND d.kind = r.kind AND d.id = r.id)"

// revealedSQL is the visibility rule (docs/work-index.md "Visibility rule", Row.Revealed) on
// work_rows r for the viewer $2: their own token read the row at or after its facts last changed
// (a probe of work_viewers' primary key). A refusal deletes their record, so it also leaves out
// every row the v2 API refused them; notDenied stays beside it for the rows they never read.
// Every list, count, sum, export and follow-up of the index is read through it: no filter, order
// or figure ever reads a fact of a row that is not revealed to the viewer.
//
// It compares the read's time (-1 without a read: never at or after facts_at, which is never
// negative) rather than asking EXISTS: PostgreSQL estimates that semi-join as matching almost
// none of a person's rows (it cannot know their reads follow their rows), so for My quotes at 1M
// rows a kind it read and sorted all 2,000 of the person's rows with a read probe each (50-68 ms,
// budget 10); the comparison is estimated at a third, and the page walks the (kind, created_by,
// changed_at, id) index backwards and stops at its 25 rows (3 ms). The rows are the same.
const revealedSQL = "COALESCE((SELECT w.seen_at FROM work_viewers w WHERE w.person = $2 AND w.kind = r.kind AND w.id = r.id), -1) >= r.facts_at"

// unrevealedSQL is revealedSQL's opposite (Unchecked's rows): never read by the viewer, or read
// before the facts last changed.
const unrevealedSQL = "NOT EXISTS (SELECT 1 FROM work_viewers w WHERE w.person = $2 AND w.kind = r.kind AND w.id = r.id AND w.seen_at >= r.facts_at)"

// viewerSeen is the viewer's own last read of a row (0: never), computed for the rows of the page
// only.
const viewerSeen = "COALESCE((SELECT w.seen_at FROM work_viewers w WHERE w.person = $2 AND w.kind = r.kind AND w.id = r.id), 0) AS viewer_seen_at"

// branch is one SELECT of a list: its FROM and its WHERE.
type branch struct{ from, where string }

// branches are the SELECTs whose union is the list: one for a team or "all", two for "mine".
// "All I worked on" starts from the viewer's own reads (work_viewers' primary key), so it reads
// their rows and no others.
func (b *listQuery) branches(q Query, v Viewer) []branch {
	base := append([]string{"r.kind = " + b.kind()}, b.where...)
	visible, own := revealedSQL, "o.seen_at >= r.facts_at"
	if b.unchecked {
		visible, own = unrevealedSQL, "o.seen_at < r.facts_at"
	}
	switch {
	case b.person != "" && v.Team:
		// One person's rows, as their My quotes would list them.
		return []branch{
			{"work_rows r", strings.Join(append(base, "r.created_by = "+b.person, notDenied, visible), " AND ")},
			{"work_rows r", strings.Join(append(base, "r.changed_by = "+b.person, "r.created_by <> "+b.person, notDenied, visible), " AND ")},
		}
	case q.Scope == ScopeMine:
		return []branch{
			{"work_rows r", strings.Join(append(base, "r.created_by = $2", notDenied, visible), " AND ")},
			{"work_rows r", strings.Join(append(base, "r.changed_by = $2", "r.created_by <> $2", notDenied, visible), " AND ")},
		}
	case v.Team && b.ownReads:
		// The viewer's reads in the stage (and dates) as their copies say, then the row's own.
		where := []string{"o.person = $2", "o.kind = " + b.kind()}
		for _, w := range b.where {
			where = append(where, onOwnReads(w))
		}
		return []branch{{"work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id",
			strings.Join(append(append(where, base...), own, notDenied), " AND ")}}
	case v.Team:
		return []branch{{"work_rows r", strings.Join(append(base, notDenied, visible), " AND ")}}
	default:
		return []branch{{"work_viewers o JOIN work_rows r ON r.kind = o.kind AND r.id = o.id",
			strings.Join(append([]string{"o.person = $2", "o.kind = " + b.kind(), "o.owner = 1", own}, append(base, notDenied)...), " AND ")}}
	}
}

// countSQL counts the matching rows, stopping at CountBound + 1. The branches do not overlap
// (My quotes' second leaves out what the first has), so their counts add up.
func (b *listQuery) countSQL(q Query, v Viewer) string {
	limit := strconv.Itoa(CountBound + 1)
	order := countOrder(q, v, b.person != "")
	if b.ownReads {
		order = onOwnReads(order)
	}
	if b.ownReads && v.Team {
		// The viewer's reads in the index's order, each row probed by its key (a scalar subquery:
		// one probe a read, up to the count's bound). As a join, PostgreSQL hashed the whole stage
		// of work_rows for a lead who had read much of it (126-247 ms at 100k rows per kind,
		// EXPLAIN ANALYZE): it expects few reads to pass seen_at >= facts_at.
		where := []string{"o.person = $2", "o.kind = $1"}
		for _, w := range b.where {
			where = append(where, onOwnReads(w))
		}
		row := strings.Join(append([]string{"r.kind = o.kind", "r.id = o.id"}, b.where...), " AND ")
		where = append(where, "o.seen_at >= (SELECT r.facts_at FROM work_rows r WHERE "+row+")",
			"NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = $2 AND d.kind = o.kind AND d.id = o.id)")
		return "SELECT (SELECT COUNT(*) FROM (SELECT 1 AS one FROM work_viewers o WHERE " + strings.Join(where, " AND ") + order +
			" LIMIT " + limit + ") AS b0)"
	}
	var parts []string
	for _, br := range b.branches(q, v) {
		parts = append(parts, "(SELECT COUNT(*) FROM (SELECT 1 AS one FROM "+br.from+" WHERE "+br.where+order+" LIMIT "+limit+") AS b"+strconv.Itoa(len(parts))+")")
	}
	return "SELECT " + strings.Join(parts, " + ")
}

// countOrder orders the count of one stage in an index's order, so the planner reads that
// index's range (work_rows_stage_since, or work_rows_stage by last change when the list is
// bounded by it): PostgreSQL otherwise scans the table for the first 1,001 matches, as long as
// the whole table when the matching rows lie together (the newest at its end; a rare stage).
// Only for one stage and no other filter than dates, for the team's or one person's rows; every
// other count is left to the planner as it was (docs/performance.md).
func countOrder(q Query, v Viewer, person bool) string {
	if len(q.Stages) != 1 || q.CustomerID != 0 || q.CPQID != 0 || strings.TrimSpace(q.Find) != "" || q.signed() ||
		!(v.Team || q.Scope == ScopeMine || person) {
		return ""
	}
	if !q.From.IsZero() || !q.To.IsZero() {
		return " ORDER BY r.changed_at"
	}
	return " ORDER BY r.stage_since"
}

// pageSQL selects one page in order. Each branch is ordered and limited on its own (an index's
// order), then the union is ordered again.
func (b *listQuery) pageSQL(q Query, v Viewer, order string, limit, offset int) string {
	n := strconv.Itoa(limit + offset)
	branches := b.branches(q, v)
	cols := rowColumns + ", " + viewerSeen
	if len(branches) == 1 {
		if b.ownReads {
			order = onOwnReads(order)
		}
		return "SELECT " + cols + " FROM " + branches[0].from + " WHERE " + branches[0].where + " ORDER BY " + order +
			" LIMIT " + strconv.Itoa(limit) + " OFFSET " + strconv.Itoa(offset)
	}
	outer := strings.NewReplacer("r.", "u.").Replace(order)
	var parts []string
	for _, br := range branches {
		parts = append(parts, "SELECT * FROM (SELECT "+cols+", r.id, r.value_cents FROM "+br.from+" WHERE "+br.where+" ORDER BY "+order+" LIMIT "+n+") AS b"+strconv.Itoa(len(parts)))
	}
	unqualified := strings.NewReplacer("r.", "u.").Replace(rowColumns)
	return "SELECT " + unqualified + ", u.viewer_seen_at FROM (" + strings.Join(parts, " UNION ALL ") + ") AS u ORDER BY " + outer +
		" LIMIT " + strconv.Itoa(limit) + " OFFSET " + strconv.Itoa(offset)
}

// after adds the keyset condition: the rows after c in q's order.
func (b *listQuery) after(q Query, c Cursor) {
	key := "r.changed_at"
	if q.Sort == SortValue {
		key = "r.value_cents"
	}
	cmp, cmpEq := "<", "<="
	if q.Asc {
		cmp, cmpEq = ">", ">="
	}
	// The first condition is the index range where the page starts; the second leaves out the
	// rows up to the cursor's own.
	k := b.arg(c.Key)
	b.where = append(b.where, key+" "+cmpEq+" "+k, "("+key+" "+cmp+" "+k+" OR r.id "+cmp+" "+b.arg(c.ID)+")")
}

// sortKey is r's key in q's order, as a Cursor holds it.
func sortKey(q Query, r *Row) int64 {
	if q.Sort == SortValue {
		return r.ValueCents()
	}
	return statedb.Micros(r.ChangedAt)
}

// orderBy is the ORDER BY of q on work_rows r: the sort key, then the id, both in one direction
// (so an index serves it read forwards or backwards).
func orderBy(q Query) string {
	dir := " DESC"
	if q.Asc {
		dir = " ASC"
	}
	key := "r.changed_at"
	if q.Sort == SortValue {
		key = "r.value_cents"
	}
	return key + dir + ", r.id" + dir
}

// Count is how many rows List would find for q (at most CountBound; capped says there are more),
// without reading a page: the home page's figures that link to a list (internal/pipeline).
func (ix *Index) Count(ctx context.Context, v Viewer, q Query) (n int, capped bool, err error) {
	key := v.Key()
	if key == "" {
		return 0, false, nil
	}
	if !v.Team {
		q.Person = ""
	}
	b := listQuery{args: []any{string(q.Kind), key}}
	var matching []int32
	broad := false
	if folded := textfold.Fold(strings.TrimSpace(q.Find)); folded != "" {
		if matching, broad, err = ix.customersMatching(ctx, folded); err != nil {
			return 0, false, err
		}
	}
	b.filters(q, matching, broad)
	b.useOwnReads(q, v)
	count, err := ix.count(ctx, v, q, &b)
	if err != nil {
		return 0, false, err
	}
	return min(count, CountBound), count > CountBound, nil
}

// count is how many rows the list b of q finds, up to CountBound + 1. A list of whole stages,
// or of every stage (no other filter: My quotes, All I worked on, a team's whole list), is
// counted from the viewer's totals (Sums: the same rows, revealed to them, in the same scope), a
// few small rows; any other is counted as it reads (countSQL: at 1M rows a kind, My quotes'
// count read 1,001 rows and as many reads of theirs, 17 ms on SQLite and 55 on PostgreSQL).
func (ix *Index) count(ctx context.Context, v Viewer, q Query, b *listQuery) (int, error) {
	if q.CustomerID == 0 && q.CPQID == 0 && strings.TrimSpace(q.Find) == "" && q.From.IsZero() && q.To.IsZero() &&
		q.EnteredFrom.IsZero() && q.EnteredTo.IsZero() && !q.signed() && q.DeclineReason == "" && (q.Person == "" || !v.Team) {
		sums, err := ix.Sums(ctx, v, q.Kind, q.Scope)
		if err != nil {
			return 0, fmt.Errorf("%w: count: %w", ErrUnavailable, err)
		}
		var n int64
		if len(q.Stages) == 0 {
			for _, t := range sums {
				n += t.N
			}
		}
		for st := range slices.Values(slices.Compact(slices.Sorted(slices.Values(q.Stages)))) {
			n += sums[st].N
		}
		return int(min(n, CountBound+1)), nil
	}
	var count int
	if err := ix.db.SQL.QueryRowContext(ctx, b.countSQL(q, v), b.args...).Scan(&count); err != nil {
		return 0, fmt.Errorf("%w: count: %w", ErrUnavailable, err)
	}
	return count, nil
}

// DB is the database the index is kept in (for read models over its tables, internal/pipeline).
func (ix *Index) DB() *statedb.DB { return ix.db }

// Unchecked is how the viewer's list of kind in scope stands beside what it shows: Count rows
// (at most CountBound; Capped: more) they may list whose facts their token has not read as they
// are (never read, or changed by someone's read since), and the newest n of them by id (an order
// that reads no fact; the newest first, as the lists show them) for the handlers to re-read with the viewer's token. Nothing of these rows
// may be shown: no filter applies to them and their rows carry only what a re-read needs.
type Unchecked struct {
	Count  int
	Capped bool
	Rows   []Row
}

// Unchecked answers the rows of kind in scope the viewer may list and that are not revealed to
// them (Row.Revealed), for a re-read (see the type).
func (ix *Index) Unchecked(ctx context.Context, v Viewer, kind Kind, scope Scope, n int) (Unchecked, error) {
	key := v.Key()
	if key == "" {
		return Unchecked{}, nil
	}
	q := Query{Kind: kind, Scope: scope}
	b := listQuery{args: []any{string(kind), key}, unchecked: true}
	count, err := ix.uncheckedCount(ctx, v, kind, scope)
	if err != nil {
		return Unchecked{}, err
	}
	if count < 0 {
		if err := ix.db.SQL.QueryRowContext(ctx, b.countSQL(q, v), b.args...).Scan(&count); err != nil {
			return Unchecked{}, fmt.Errorf("%w: unchecked: %w", ErrUnavailable, err)
		}
	}
	out := Unchecked{Count: min(count, CountBound), Capped: count > CountBound}
	if n <= 0 || count == 0 {
		return out, nil
	}
	// No more than there are: the search stops at the last of them.
	rows, err := ix.db.SQL.QueryContext(ctx, b.pageSQL(q, v, "r.id DESC", min(n, count), 0), b.args...)
	if err != nil {
		return Unchecked{}, fmt.Errorf("%w: unchecked: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRow(rows, true)
		if err != nil {
			return Unchecked{}, fmt.Errorf("%w: unchecked: %w", ErrUnavailable, err)
		}
		// What a re-read needs (where to read it), nothing it could show.
		out.Rows = append(out.Rows, Row{Kind: r.Kind, QuoteID: r.QuoteID, CPQID: r.CPQID, CustomerID: r.CustomerID, ContractID: r.ContractID})
	}
	if err := rows.Err(); err != nil {
		return Unchecked{}, fmt.Errorf("%w: unchecked: %w", ErrUnavailable, err)
	}
	return out, nil
}

// UncheckedIn is up to n of the rows Unchecked names (by id, carrying only where to read them),
// those the index last saw in one of stages alone: which rows a page re-reads first with the
// viewer's token (the back office's home re-reads the signed contracts it offers to archive).
// The stage only chooses what is read; nothing is shown of a row before the viewer's own read
// reveals it, so a re-read tells the viewer nothing their token did not answer.
func (ix *Index) UncheckedIn(ctx context.Context, v Viewer, kind Kind, scope Scope, stages []Stage, n int) ([]Row, error) {
	key := v.Key()
	if key == "" || n <= 0 || len(stages) == 0 {
		return nil, nil
	}
	b := listQuery{args: []any{string(kind), key}, unchecked: true}
	names := make([]string, len(stages))
	for i, st := range stages {
		names[i] = string(st)
	}
	b.where = append(b.where, "r.stage IN ("+placeholders(&b.args, names)+")")
	rows, err := ix.db.SQL.QueryContext(ctx, b.pageSQL(Query{Kind: kind, Scope: scope}, v, "r.id DESC", n, 0), b.args...)
	if err != nil {
		return nil, fmt.Errorf("%w: unchecked: %w", ErrUnavailable, err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		r, err := scanRow(rows, true)
		if err != nil {
			return nil, fmt.Errorf("%w: unchecked: %w", ErrUnavailable, err)
		}
		out = append(out, Row{Kind: r.Kind, QuoteID: r.QuoteID, CPQID: r.CPQID, CustomerID: r.CustomerID, ContractID: r.ContractID})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: unchecked: %w", ErrUnavailable, err)
	}
	return out, nil
}

// uncheckedCount is Unchecked's count without reading the rows, for a team role's whole team and
// for My quotes: the rows they may list (work_totals: every row of the kind, or every row they
// created or changed last; less those the v2 API refused them) less those revealed to them (their
// own totals, work_viewer_totals), a few small rows however many rows there are. -1 for All I
// worked on of a viewer without a team role: their own reads, counted as the lists count.
func (ix *Index) uncheckedCount(ctx context.Context, v Viewer, kind Kind, scope Scope) (int, error) {
	var listable, revealed string
	switch {
	case scope == ScopeMine:
		listable = `(SELECT COALESCE(SUM(n), 0) FROM work_totals WHERE kind = $1 AND person = $2)
			- (SELECT COUNT(*) FROM work_denied d JOIN work_rows r ON r.kind = d.kind AND r.id = d.id
			WHERE d.person = $2 AND d.kind = $1 AND (r.created_by = $2 OR r.changed_by = $2))`
		revealed = `(SELECT COALESCE(SUM(n), 0) FROM work_viewer_totals WHERE person = $2 AND kind = $1 AND mine = 1)`
	case v.Team:
		listable = `(SELECT COALESCE(SUM(n), 0) FROM work_totals WHERE kind = $1 AND person = '')
			- (SELECT COUNT(*) FROM work_denied d JOIN work_rows r ON r.kind = d.kind AND r.id = d.id WHERE d.person = $2 AND d.kind = $1)`
		revealed = `(SELECT COALESCE(SUM(n), 0) FROM work_viewer_totals WHERE person = $2 AND kind = $1)`
	default:
		return -1, nil
	}
	var n int64
	if err := ix.db.SQL.QueryRowContext(ctx, `SELECT CAST(`+listable+` - `+revealed+` AS BIGINT)`, string(kind), v.Key()).Scan(&n); err != nil {
		return 0, fmt.Errorf("%w: unchecked: %w", ErrUnavailable, err)
	}
	return int(max(n, 0)), nil
}
