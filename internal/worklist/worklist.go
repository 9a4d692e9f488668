// Package worklist gathers the validation audits of many quotes into one table (the audit
// worklist of the back office): one row per audit entry, with the quote's customer, and filters
// by date range, user, action and customer. The rows come from the v2 API per request (the
// portal keeps no audit data); Gather fetches the audits with bounded concurrency.
package worklist

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/sync/singleflight"

	"github.com/cpqportal/portal/internal/auditwords"
	"github.com/cpqportal/portal/internal/i18n"
)

// MaxQuotes bounds one worklist (each quote is one v2 call).
const MaxQuotes = 200

// Change is one field's value before and after.
type Change struct {
	Field, Before, After string
}

// Row is one audit entry of one quote.
type Row struct {
	QuoteID    int64
	CustomerID int32
	Customer   string // the customer's name, when it could be read
	At         time.Time
	Actor      string
	Action     string
	Summary    string
	Changes    []Change
	// Names are what the quote's audit names by id (shared by the rows of one quote; nil: none).
	Names *auditwords.Names
	// seq is the entry's place in its quote's audit (the v2 API lists them oldest first).
	seq int
}

// Who is the person of the row in tr's words: their name where the portal knows it (the
// customer's owners, the viewer, the people who signed in), "system" as a word, else the actor.
func (r Row) Who(tr *i18n.Translator) auditwords.Actor { return r.Names.Actor(tr, r.Actor) }

// Words are the row's changes in tr's words (auditwords).
func (r Row) Words(tr *i18n.Translator) []auditwords.Change {
	out := make([]auditwords.Change, 0, len(r.Changes))
	for _, c := range r.Changes {
		out = append(out, auditwords.Describe(tr, r.Names, c.Field, c.Before, c.After))
	}
	return out
}

// ChangesText is the changes in tr's words, one a line: "field: before -> after".
func (r Row) ChangesText(tr *i18n.Translator) string {
	var b strings.Builder
	for i, c := range r.Words(tr) {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s -> %s", c.Field, orEmpty(tr, c.Before), orEmpty(tr, c.After))
	}
	return b.String()
}

func orEmpty(tr *i18n.Translator, s string) string {
	if s == "" {
		return tr.T("audit.change.empty")
	}
	return s
}

// Audit is what Gather needs of one quote's audit.
type Audit struct {
	CustomerID int32
	// CustomerName, when the source read it already, spares Gather a CustomerName call.
	CustomerName string
	// Names are what the audit names by id (may be nil).
	Names   *auditwords.Names
	Entries []Row // QuoteID, CustomerID, Customer and Names are filled in by Gather
}

// Source reads audits and customer names (the v2 API with the user's token).
type Source interface {
	Audit(ctx context.Context, quoteID int64) (Audit, error)
	CustomerName(ctx context.Context, customerID int32) (string, error)
}

// ErrNotFound is what Source.Audit returns for a quote the v2 API does not know.
var ErrNotFound = errors.New("worklist: no such quote")

// The other failures a Source reports for one quote, so its row says what happened in the
// reader's words (never the error's text): the v2 API refused the reader (ErrForbidden), did not
// answer in time (ErrTimeout), or failed (ErrUnavailable). Anything else reads "could not be read".
var (
	ErrForbidden   = errors.New("worklist: the audit is not the reader's to read")
	ErrTimeout     = errors.New("worklist: the v2 API did not answer in time")
	ErrUnavailable = errors.New("worklist: the v2 API failed")
)

// problemOf is the row's words for a quote whose audit could not be read.
func problemOf(err error) i18n.Message {
	switch {
	case errors.Is(err, ErrNotFound):
		return i18n.M(ProblemNotFound)
	case errors.Is(err, ErrForbidden):
		return i18n.M(ProblemForbidden)
	case errors.Is(err, ErrTimeout):
		return i18n.M("worklist.problem.timeout")
	case errors.Is(err, ErrUnavailable):
		return i18n.M("worklist.problem.unavailable")
	}
	return i18n.M("worklist.problem.unreadable")
}

// The problems' message keys of a quote the v2 API does not know, and of one it refused the
// viewer: the handlers forget such a quote for the viewer (docs/work-index.md "Visibility rule").
const (
	ProblemNotFound  = "worklist.problem.no_such_quote"
	ProblemForbidden = "worklist.problem.forbidden"
)

// Problem is a quote whose audit could not be read, and why (translated where it is shown).
type Problem struct {
	QuoteID int64
	Message i18n.Message
}

// InputError is a problem with the quote ids a person typed; Message tells them, in their
// language once translated.
type InputError struct{ Message i18n.Message }

func (e *InputError) Error() string {
	return fmt.Sprintf("worklist: %s %v", e.Message.Key, e.Message.Args)
}

// ParseQuoteIDs reads quote ids separated by commas, semicolons or white space; duplicates are
// dropped. It returns the first malformed id as an error naming it.
func ParseQuoteIDs(texts ...string) ([]int64, error) {
	var ids []int64
	seen := map[int64]bool{}
	for _, text := range texts {
		for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) }) {
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil || id < 1 || f[0] == '0' || f[0] == '+' {
				if len(f) > 30 {
					f = f[:30] + "…"
				}
				return nil, &InputError{i18n.M("worklist.error.bad_id", strconv.Quote(f))}
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	if len(ids) > MaxQuotes {
		return nil, &InputError{i18n.M("worklist.error.too_many_given", MaxQuotes, len(ids))}
	}
	return ids, nil
}

// Gather reads the audits of quoteIDs, concurrency at a time, and returns their entries as rows
// (newest first; entries of one quote within the same second in reverse of the v2's order, so the latest is on top) and the quotes that could not be read. An error other than ErrNotFound for a
// quote is a problem of that quote too, unless ctx ended (then it is returned).
func Gather(ctx context.Context, src Source, quoteIDs []int64, concurrency int) ([]Row, []Problem, error) {
	var (
		mu       sync.Mutex
		rows     []Row
		problems []Problem
		names    = map[int32]string{}
		wg       sync.WaitGroup
		work     = make(chan int64)
		fatal    error
	)
	// Quotes of one customer are common: their name is read once, and workers asking for it while
	// that read runs wait for it instead of reading it again (issue 27).
	var lookups singleflight.Group
	nameOf := func(id int32) string {
		mu.Lock()
		name, ok := names[id]
		mu.Unlock()
		if ok {
			return name
		}
		v, _, _ := lookups.Do(strconv.FormatInt(int64(id), 10), func() (any, error) {
			name, err := src.CustomerName(ctx, id)
			if err != nil {
				name = ""
			}
			mu.Lock()
			names[id] = name
			mu.Unlock()
			return name, nil
		})
		return v.(string)
	}
	for range max(concurrency, 1) {
		wg.Go(func() {
			for id := range work {
				audit, err := src.Audit(ctx, id)
				if err != nil {
					mu.Lock()
					switch {
					case ctx.Err() != nil:
						fatal = ctx.Err()
					default:
						problems = append(problems, Problem{id, problemOf(err)})
					}
					mu.Unlock()
					continue
				}
				name := audit.CustomerName
				if name == "" {
					name = nameOf(audit.CustomerID)
				}
				mu.Lock()
				for i, e := range audit.Entries {
					e.seq = i
					e.QuoteID, e.CustomerID, e.Customer, e.Names = id, audit.CustomerID, name, audit.Names
					rows = append(rows, e)
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range quoteIDs {
		work <- id
	}
	close(work)
	wg.Wait()
	if fatal != nil {
		return nil, nil, fatal
	}
	sort.SliceStable(rows, func(a, b int) bool {
		if !rows[a].At.Equal(rows[b].At) {
			return rows[a].At.After(rows[b].At)
		}
		if rows[a].QuoteID != rows[b].QuoteID {
			return rows[a].QuoteID < rows[b].QuoteID
		}
		// Entries of the same second: the later one (in the v2's order) first.
		return rows[a].seq > rows[b].seq
	})
	sort.Slice(problems, func(a, b int) bool { return problems[a].QuoteID < problems[b].QuoteID })
	return rows, problems, nil
}

// Filter keeps the rows the user asked for. Empty fields do not filter.
type Filter struct {
	// From and To are days (dates at midnight UTC, as parsed), both included; zero: open. An
	// entry's day is its date in Zone (the reader's time zone; nil: UTC).
	From, To time.Time
	Zone     *time.Location
	// User matches the actor or the person's name (case-insensitive, part of it), the name in
	// Tr's words when Tr is set.
	User string
	Tr   *i18n.Translator
	// Action is one action (exact).
	Action string
	// Customer matches the customer's name (case-insensitive, part of it) or id (whole).
	Customer string
}

// Apply returns the rows that pass f.
func (f Filter) Apply(rows []Row) []Row {
	user, customer := strings.ToLower(strings.TrimSpace(f.User)), strings.ToLower(strings.TrimSpace(f.Customer))
	zone := f.Zone
	if zone == nil {
		zone = time.UTC
	}
	var out []Row
	for _, r := range rows {
		at := r.At.In(zone)
		day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
		switch {
		case !f.From.IsZero() && day.Before(f.From):
		case !f.To.IsZero() && day.After(f.To):
		case user != "" && !strings.Contains(strings.ToLower(r.Actor), user) && !strings.Contains(strings.ToLower(f.who(r)), user):
		case f.Action != "" && r.Action != f.Action:
		case customer != "" && !strings.Contains(strings.ToLower(r.Customer), customer) && strconv.Itoa(int(r.CustomerID)) != customer:
		default:
			out = append(out, r)
		}
	}
	return out
}

// who is the row's person as the filter matches it.
func (f Filter) who(r Row) string {
	if f.Tr != nil {
		return r.Who(f.Tr).Name
	}
	return r.Names.Person(r.Actor)
}

// Actions lists the audit actions (docs/v2-assumptions.md A7), for the action filter.
func Actions() []string {
	return []string{"QUOTE_CREATED", "CART_ADDED", "CART_REMOVED", "ITEM_ADDED", "ITEM_REMOVED", "QUANTITY_CHANGED", "DISCOUNTS_APPLIED",
		"REPRICED", "PACKAGE_ADDED", "PRICELIST_CHANGED", "ATTACHMENT_ADDED", "ATTACHMENT_DELETED", "CONTRACT_GENERATED",
		"SIGNATURE_REQUESTED", "SIGNATURE_REMOVED", "SIGNATURE_SIGNED", "SIGNATURE_DECLINED", "SIGNATURE_EXPIRED", "CONTRACT_ARCHIVED",
		"CUSTOMER_UPDATED"}
}

// Value shows an audit value: strings as their text, anything else as compact JSON, null or
// absent as "" (A7: before/after are strings).
func Value(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return ""
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}
