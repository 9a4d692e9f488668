package customers

import (
	"time"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
)

// ImportNewVM is the customer import's upload form and the person's imports.
type ImportNewVM struct {
	MaxLines int
	// MaxSize is the largest file, in the reader's words.
	MaxSize string
	// FileError is why the uploaded file was refused (zero when none).
	FileError i18n.Message
	Errors    []components.FieldError
	Imports   []ImportSummary
	// Runs are the person's imports that were run (jobs), newest first.
	Runs []ImportSummary
}

// ImportSummary is one of the person's imports in the list.
type ImportSummary struct {
	URL, FileName string
	Created       time.Time
	// Counts says how many lines there are and how many are included, in words.
	Counts string
}

// ImportVM is an import's dry run: the counts, the filter by verdict and one page of lines.
type ImportVM struct {
	URL, FileName string
	Created       time.Time
	Total         int
	// Counts are the verdicts with their lines, in the preview's order.
	Counts []ImportCount
	// Included is how many lines the run would send.
	Included int
	// Verdict is the filter shown ("" for every line); Filters link to each.
	Verdict string
	Filters []ImportFilter
	Lines   []ImportLineRow
	// First and Last are the rows of the page's lines in the file (for "rows 2 to 101").
	Shown string
	// Prev and Next are the URLs of the neighbour pages ("" when none).
	Prev, Next string
	// From is the position the page starts at (posted back with the choices).
	From string
	// Saved says the choices were saved (after a POST).
	Saved bool
	// ValueChoices are the unknown values of closed lists, to treat as known ones; Fixes the fix
	// forms of the page's invalid lines (both empty for an import from before the mapping step).
	ValueChoices []ImportValueChoice
	Fixes        []ImportFix
	// MappingURL reopens the mapping step with the choices made ("" for an import from before the
	// mapping step).
	MappingURL string
}

// ImportCount is how many lines have a verdict, and how many of them are included.
type ImportCount struct {
	Verdict, Label  string
	Total, Included int
	Includable      bool
	Level           components.BadgeLevel
}

// ImportFilter is a link that shows the lines of one verdict.
type ImportFilter struct {
	Label, Href string
	Current     bool
	Verdict     string
}

// ImportLineRow is a line of the dry run.
type ImportLineRow struct {
	Position                   string
	Row                        int
	Name, TaxID, City, Country string
	// PostalCode as read (leading zeros back), or the date a date cell showed.
	PostalCode            string
	Segment               string
	Verdict, VerdictLabel string
	Level                 components.BadgeLevel
	// Reasons say why the line has its verdict; MatchHref links the customer it duplicates.
	Reasons   []string
	MatchHref string
	MatchText string
	// Includable lines have a box; Included says whether it is ticked.
	Includable, Included bool
}

// ImportMappingVM is an uploaded file's mapping step: each column with the field it fills.
type ImportMappingVM struct {
	URL, FileName string
	Total         int
	Columns       []ImportMappingColumn
	// Fields are the choices of every column: "do not import", then the fields.
	Fields []components.Option
	// Unmatched names the columns that fill no field (never left out in silence).
	Unmatched []string
	// Problem is why the mapping posted was refused (zero when none).
	Problem i18n.Message
	Errors  []components.FieldError
	// DryRunURL goes back to the dry run unchanged ("" before the mapping was first confirmed).
	DryRunURL string
}

// ImportMappingColumn is a column of the file: its heading, letter, first values and field ("":
// not imported).
type ImportMappingColumn struct {
	ID, Header, Letter, Field string
	Samples                   []string
}

// ImportValueChoice is a value of a closed list the portal does not know, as the file has it,
// with the values it may be treated as.
type ImportValueChoice struct {
	ID, Field, FieldLabel, Value string
	Options                      []components.Option
}

// ImportFix is the fix form of an invalid line.
type ImportFix struct {
	Position string
	Row      int
	Inputs   []ImportFixInput
}

// ImportFixInput is a field of a fix form, with the problem the check found in it.
type ImportFixInput struct {
	Name, Label, ID, Value, Error string
}
