// Package backoffice holds the back-office pages: the batch archive (a list of contract numbers
// archived with live progress) and the audit worklist (the validation audits of many quotes in
// one table). Handlers: internal/handlers/batch_archive_*.go and audit_worklist.go.
package backoffice

import (
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
)

// BatchNewVM is the batch archive form and the user's batches.
type BatchNewVM struct {
	Numbers components.Field // the pasted list (a textarea)
	// FileError is the problem with the uploaded file.
	FileError i18n.Message
	Errors    []components.FieldError
	Batches   []BatchSummary
	MaxItems  int
	// IncludeUnsent is the form's "include contracts never sent for signature" box: by default
	// the check leaves them out (docs/backoffice.md).
	IncludeUnsent bool
}

// BatchSummary is one of the user's batches in the list.
type BatchSummary struct {
	URL     string
	Created time.Time
	Status  string
	Counts  string
	// Lost is a batch the user's index names whose record the state store no longer has.
	Lost bool
}

// BatchItemRow is one line of a batch.
type BatchItemRow struct {
	Line      int
	Number    string
	Customer  string
	Status    string // in the reader's words: "will be archived", "already archived", "archived", "failed", ...
	Level     components.BadgeLevel
	ArchiveID string
	Message   string // the error or note
	// Verified: the line was checked on the v2 API after an interruption.
	Verified bool
	// Stage is the contract's stage as the check read it (drafts, and lines left out).
	Stage string
	// Href opens the line's contract (ended batches; "" when the check did not find it).
	Href string
}

// BatchVM is a batch's page: the preview of a draft, or the progress and result of a started one.
type BatchVM struct {
	// Job is the batch's state and counts (Draft: before the user confirmed, the page shows what
	// will happen; Active while it runs, the region polls).
	components.Job
	// IncludeUnsent are the contracts a draft left out because they were never sent for signature
	// (or their request was removed); the preview offers to include them explicitly.
	IncludeUnsent []string
	// IncludeAll are the numbers "Include them" checks again: every line of the draft, in order.
	IncludeAll []string
	// Pending is how many lines the start archives.
	Pending int
	// Summary says what the preview will do (counts in words); StartLabel is the start button.
	Summary, StartLabel string
	// Current are the contract numbers in flight.
	Current []string
	// RecordLost: the store lost the record mid-run; the runner wrote back its copy, stopped
	// (the user resumes it).
	RecordLost bool
	// Rows are the lines shown: every line of a draft; failed and rejected lines while it runs;
	// every line of an ended batch, a page at a time (AllLines, Pager, LinesShown).
	Rows       []BatchItemRow
	AllLines   bool
	Pager      components.Pager
	LinesShown string
	// Concurrency is the setting, told to the user.
	Concurrency int
}

// Itoa is strconv.Itoa for templates.
func Itoa(n int) string { return strconv.Itoa(n) }

// Count is tr.Plural for templates: the message about n things in the plural form of tr's language.
func Count(tr *i18n.Translator, n int, one, other string, args ...any) string {
	return tr.Plural(n, one, other, args...)
}

// WorklistVM is the audit worklist: the quotes asked for, the filters and the rows.
type WorklistVM struct {
	Quotes components.Field // ids typed or pasted (a textarea)
	// Recent are the user's recent quotes and contracts' quotes to pick from.
	Recent                           []WorklistPick
	From, To, User, Customer, Action string
	// UserError and CustomerError say why the user or customer filter was not applied ("" when it was).
	UserError, CustomerError string
	Actions                  []WorklistAction
	Errors                   []components.FieldError
	// Searched is true once quotes were asked for.
	Searched bool
	Rows     []WorklistRow
	// Total is the number of entries before the filters.
	Total    int
	Problems []i18n.Message
	// ExportCSV and ExportXLSX download the filtered rows.
	ExportCSV, ExportXLSX string
	// Tools are the person's saved views of the worklist and the form that saves this one
	// (rendered by the work templates; nil: none).
	Tools templ.Component
	// Changed asks for every quote changed between From and To (the work index); ChangedNote says
	// how many there were.
	Changed                  bool
	ChangedHint, ChangedNote string
}

// WorklistAction is one audit action of the filter: the v2 API's code and its label.
type WorklistAction struct {
	Value, Label string
}

// WorklistPick is a recent quote offered as a checkbox.
type WorklistPick struct {
	QuoteID string
	Label   string
	Checked bool
}

// WorklistRow is one audit entry.
type WorklistRow struct {
	QuoteID  string
	AuditURL string
	Customer string
	When     time.Time // shown to the second
	// Who is the person in words (their name where the portal knows it); WhoLogin is the actor as
	// the v2 API wrote it when Who says something else ("" otherwise).
	Who      string
	WhoLogin string
	Action   string
	// ActionLabel is Action in words of the reader's language.
	ActionLabel string
	Summary     string
	Changes     []WorklistChange
}

// WorklistChange is one field's change.
type WorklistChange struct {
	Field, Before, After string
}

// batchWords are what a batch's progress region calls things (components.JobWords).
var batchWords = components.JobWords{Name: "batch", DataStatus: true, Bar: "batch.progress.bar",
	Done: "batch.count.done", DoneID: "done", Rejected: "batch.count.rejected", RejectedID: "rejected", Cancel: "batch.cancel"}
