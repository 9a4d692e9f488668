package workindex

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scope says whose rows a list shows.
type Scope string

// The scopes.
const (
	// ScopeMine: rows the viewer created or changed last ("My quotes").
	ScopeMine Scope = "mine"
	// ScopeAll: every row the viewer may see (Row.Visible: the team's rows for a team role,
	// otherwise the rows they created, changed or opened).
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
	// Find is a quote or contract number or part of the customer's name.
	Find string
	Sort Sort
	// Asc reverses the order.
	Asc bool
	// Page is 1-based; PerPage at most MaxPerPage (default 25).
	Page, PerPage int
}

// Page is one page of a list.
type Page struct {
	Rows []Row
	// Total is how many rows match; Pages how many pages they fill.
	Total, Pages int
	// Page is the page shown (clamped to Pages).
	Page int
	// Configurators are the configurators of the rows the viewer may see (for the filter).
	Configurators []Option
}

// Option is a value of a filter with its label.
type Option struct {
	ID   int32
	Name string
}

// List answers one page of rows for the viewer. ErrUnavailable when the store cannot be read.
func (ix *Index) List(ctx context.Context, v Viewer, q Query) (Page, error) {
	if err := ix.refresh(ctx, false); err != nil {
		return Page{}, err
	}
	if q.PerPage <= 0 {
		q.PerPage = 25
	}
	q.PerPage = min(q.PerPage, MaxPerPage)
	find := strings.ToLower(strings.TrimSpace(q.Find))
	findNumber := strings.TrimPrefix(find, "#")
	findID, err := strconv.ParseInt(findNumber, 10, 64)
	if err != nil {
		findID = -1
	}
	var matches []entry
	configurators := map[int32]string{}
	key := v.Key()
	ix.mu.RLock()
	for n := range ix.shards {
		for _, r := range ix.shards[n] {
			if r.Kind != q.Kind || !r.visibleTo(key, v.Team) {
				continue
			}
			if q.Scope == ScopeMine && !r.mineOf(key) {
				continue
			}
			if r.CPQID != 0 && configurators[r.CPQID] == "" {
				configurators[r.CPQID] = firstNonEmpty(r.Configurator, strconv.Itoa(int(r.CPQID)))
			}
			if !q.matches(r, find, findNumber, findID) {
				continue
			}
			matches = append(matches, q.entryOf(r))
		}
	}
	ix.mu.RUnlock()
	page := Page{Total: len(matches), Pages: max(1, (len(matches)+q.PerPage-1)/q.PerPage)}
	page.Page = min(max(q.Page, 1), page.Pages)
	start := (page.Page - 1) * q.PerPage
	end := min(start+q.PerPage, len(matches))
	matches = topK(matches, end)
	page.Rows = make([]Row, 0, end-start)
	for _, e := range matches[start:end] {
		page.Rows = append(page.Rows, *e.row)
	}
	for id, name := range configurators {
		page.Configurators = append(page.Configurators, Option{ID: id, Name: name})
	}
	slices.SortFunc(page.Configurators, func(a, b Option) int { return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID)) })
	return page, nil
}

// matches applies the filters (not kind, visibility and scope).
func (q *Query) matches(r *Row, find, findNumber string, findID int64) bool {
	if len(q.Stages) > 0 && !slices.Contains(q.Stages, r.Stage) {
		return false
	}
	if q.CustomerID != 0 && r.CustomerID != q.CustomerID {
		return false
	}
	if q.CPQID != 0 && r.CPQID != q.CPQID {
		return false
	}
	if !q.From.IsZero() && r.ChangedAt.Before(q.From) {
		return false
	}
	if !q.To.IsZero() && !r.ChangedAt.Before(q.To) {
		return false
	}
	if find == "" {
		return true
	}
	if strings.Contains(r.lowerCustomer, find) {
		return true
	}
	if findNumber != "" {
		if r.QuoteID == findID {
			return true
		}
		if r.ContractNumber != "" && strings.Contains(strings.ToLower(r.ContractNumber), findNumber) {
			return true
		}
	}
	return false
}

// entry is a matching row with its sort key, so sorting compares integers.
type entry struct {
	key, id int64
	row     *Row
}

// entryOf makes the entry of r: the key is ordered so that smaller comes first.
func (q *Query) entryOf(r *Row) entry {
	var key int64
	switch q.Sort {
	case SortValue:
		key = -r.ValueCents()
	default:
		key = -r.ChangedAt.UnixNano()
	}
	id := -r.ID()
	if q.Asc {
		key, id = -key, -id
	}
	return entry{key: key, id: id, row: r}
}

func compareEntries(a, b entry) int {
	return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id))
}

// topK orders the first k entries (the pages up to the one shown) and leaves the rest: a list
// of 10,000 rows showing page 1 sorts 25, not 10,000.
func topK(entries []entry, k int) []entry {
	if k >= len(entries)/4 {
		slices.SortFunc(entries, compareEntries)
		return entries
	}
	// A max-heap of the k smallest seen so far.
	h := entries[:0:0]
	h = append(h, entries[:k]...)
	slices.SortFunc(h, func(a, b entry) int { return compareEntries(b, a) }) // largest first
	for _, e := range entries[k:] {
		if compareEntries(e, h[0]) >= 0 {
			continue
		}
		// Replace the largest and restore the order (k is small: at most a few pages).
		i, _ := slices.BinarySearchFunc(h[1:], e, func(x, t entry) int { return compareEntries(t, x) })
		copy(h[0:i], h[1:i+1])
		h[i] = e
	}
	slices.Reverse(h)
	return h
}
