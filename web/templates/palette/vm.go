// Package palette is the command palette: a modal <dialog> in the page frame (Ctrl/Cmd+K, or
// the "Go to" button in the header) with a combobox input and a listbox of results, and the same
// results as a plain page (/palette?q=) for browsers without JavaScript.
//
// The dialog's behaviour (opening, arrow keys moving aria-activedescendant, Enter, Escape, focus
// back to the trigger) lives in web/static/app.js ("Command palette" section): the CSP forbids
// inline script. The results come from internal/handlers (palette.go), GET /palette?q=.
package palette

import (
	"strconv"

	"github.com/cpqportal/portal/internal/i18n"
)

// Kind says what a result is; it is shown on each result and used as a data attribute.
type Kind string

// The kinds of results, in the order they are listed.
const (
	KindCustomer Kind = "customer"
	KindContract Kind = "contract"
	KindQuote    Kind = "quote"
	KindPage     Kind = "page"
	// KindView is one of the person's saved views of a list (internal/savedviews).
	KindView Kind = "view"
)

// Label is the kind as shown to people, in tr's language.
func (k Kind) Label(tr *i18n.Translator) string {
	switch k {
	case KindCustomer:
		return tr.T("palette.kind.customer")
	case KindContract:
		return tr.T("palette.kind.contract")
	case KindQuote:
		return tr.T("palette.kind.quote")
	case KindView:
		return tr.T("palette.kind.view")
	}
	return tr.T("palette.kind.page")
}

// Item is one result: where it leads (a local path) and how it is shown.
type Item struct {
	Kind Kind
	// Label is the main text (a customer's name, "Contract C-2026-000042", "New customer").
	Label string
	// Detail is the secondary text (ids, tax id, status), may be empty.
	Detail string
	// Href is the local path the result opens.
	Href string
}

// ResultsVM is what the palette found for a query.
type ResultsVM struct {
	// Query is the text searched for, trimmed.
	Query string
	Items []Item
	// Notes explain what could not be searched (e.g. "the customer list is still loading"); they
	// are shown below the results.
	Notes []string
}

// OptionID is the DOM id of the i-th result's option (aria-activedescendant points to it).
func OptionID(i int) string { return "palette-option-" + strconv.Itoa(i) }

// Summary is the sentence announced and shown for the results: "3 results", "No results for “x”".
func (vm ResultsVM) Summary(tr *i18n.Translator) string {
	switch n := len(vm.Items); {
	case n == 0 && vm.Query == "":
		return tr.T("palette.summary.empty_query")
	case n == 0:
		return tr.T("palette.summary.none", vm.Query)
	default:
		return tr.Plural(n, "palette.summary.one", "palette.summary.many")
	}
}

// Count is the number of results as text (a data attribute app.js reads).
func (vm ResultsVM) Count() string { return strconv.Itoa(len(vm.Items)) }

// PageVM is the palette as a page of its own (no JavaScript, or a direct link to /palette).
type PageVM struct {
	Results ResultsVM
	// Error is a problem with the query itself (too long, invalid text); the results are empty.
	Error string
}

// The ids the dialog, app.js and the tests share.
const (
	DialogID    = "palette"
	InputID     = "palette-input"
	ResultsID   = "palette-results"
	ListboxID   = "palette-listbox"
	StatusID    = "palette-status"
	TriggerID   = "palette-trigger"
	MaxQueryLen = 200
)
