// Package work is the pages of the work index (internal/workindex, docs/work-index.md): the quotes
// list (My quotes, the team's quotes), the contracts list by stage, the customer page's quotes and
// contracts, and the quote page's contract banner. Handlers build the view models in the reader's
// language; the templates only lay them out.
package work

import (
	"time"

	"github.com/cpqportal/portal/web/templates/components"
)

// ResultsID is the id of the results region (the htmx target of the filters, sort and pager).
const ResultsID = "work-results"

// FormID is the id of the filter form.
const FormID = "work-filters"

// Choice is a value of a select, radio or checkbox with its label.
type Choice struct {
	Value, Label string
	Selected     bool
}

// Param is a filter carried as a hidden field: its name, value and what it means in words.
type Param struct {
	Name, Value, Label string
}

// ListVM is the quotes or contracts list page.
type ListVM struct {
	// Title is the page heading; Action the list's path (/work/quotes or /work/contracts).
	Title, Action string
	// Contracts: the contracts list (selection and "Archive selected").
	Contracts bool
	// Scopes are "My ..." and "All I may see" (team-wide for the team roles); empty hides the choice.
	Scopes []Choice
	// Stages are the stage checkboxes.
	Stages []Choice
	// Configurators are the product catalogues the filter offers, by name.
	Configurators []Choice
	// ConfiguratorsNote says the catalogues could not be named now (the v2 API's list failed);
	// "" when they could.
	ConfiguratorsNote string
	// Customer, From, To, Find, Sort and Dir are the filters as entered.
	Customer, From, To, Find, Sort, Dir string
	// Errors are the filters that could not be read (the page answers 400 with them).
	Errors []components.FieldError
	// FieldErrors by input id.
	FieldErrors map[string]string
	// Tools are the saved views and the exports (views.templ).
	Tools ToolsVM
	// Narrowing are filters the form has no field for (from the home page's links): kept as
	// hidden fields and named above the results.
	Narrowing []Param
	Results   ResultsVM
}

// ResultsVM is the results region.
type ResultsVM struct {
	// Unavailable: the store cannot be read ("lists unavailable right now").
	Unavailable bool
	// Invalid: the filters could not be read; nothing is listed.
	Invalid bool
	Count   string
	Rows    []RowVM
	Pager   components.Pager
	// SortChanged and SortValue are the sort links; SortedBy is "changed" or "value".
	SortChanged, SortValue, SortedBy string
	// RefreshURL re-reads the rows of this page from the v2 API.
	RefreshURL string
	// MoreURL continues the list past the pages its count covers (keyset paging); "" when none.
	MoreURL string
	// Contracts: rows can be selected for the batch archive.
	Contracts bool
	// Archivable: the person's roles open the batch archive, so the contracts can be selected
	// for it ("Archive selected", "Archive all N matching"); without it the list only lists.
	Archivable bool
	// PageSelectable is how many rows of the page can be selected ("Select all on this page").
	PageSelectable int
	// MatchingQuery is the list's filters (a query string, "" for none) that "Archive all N
	// matching" posts; MatchingLabel its button's words ("" when nothing matches: no button).
	MatchingQuery, MatchingLabel string
	// EmptyHint says how rows get here.
	EmptyHint string
	// Unchecked is "N not checked yet": the rows of the list's scope the viewer may list but
	// their token has not read as they stand, counted with no filter, stage or value ("": none);
	// UncheckedHint says how they are checked, CheckURL loads the page again (which checks the
	// next ones with the viewer's token).
	Unchecked, UncheckedHint, CheckURL string
}

// RowVM is one quote or contract.
type RowVM struct {
	ID, Label, Href string
	// Number is the contract number (the value of the selection checkbox).
	Number                 string
	Customer, CustomerHref string
	Configurator           string
	Stage                  string // the stage's value (draft, generated, signature, archived)
	StageLabel             string
	StageLevel             components.BadgeLevel
	// DeclineReason is a declined contract's signer's reason ("" when none).
	DeclineReason   string
	OneOff, Monthly string
	ChangedBy       string
	Changed         time.Time // zero when unknown
	// AsOf is when the row was last read from the v2 API.
	AsOf time.Time
	// ContractLabel and ContractHref: a quote's contract.
	ContractLabel, ContractHref string
	// Unchecked: the viewer's token has not read it (a team role lists it) and it could not be
	// re-read for this page; only its link is shown (docs/work-index.md "Visibility").
	Unchecked bool
}

// CustomerWorkVM is the customer page's quotes and contracts.
type CustomerWorkVM struct {
	Unavailable bool
	Quotes      []RowVM
	Contracts   []RowVM
	// QuotesURL and ContractsURL are the full lists filtered by this customer.
	QuotesURL, ContractsURL string
}

// BannerVM is the quote page's contract banner: the quote has a contract, and changing the quote
// no longer matches it.
type BannerVM struct {
	Number, Href string
	StageLabel   string
	StageLevel   components.BadgeLevel
	// AsOf is when the stage was read (zero: not known).
	AsOf time.Time
	// Warning says what a change does to the contract at this stage; Confirm is the question asked
	// before every change.
	Warning, Confirm string
	// Archived: the contract is archived (changes still possible on the quote, never on the contract).
	Archived bool
}
