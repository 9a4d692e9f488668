// Package home is the home page by role (docs/home.md): a rep's open pipeline, follow-ups and
// recent work; a team lead's the same for the team, by rep, signed this month against last, the
// conversion and the aging of what is out for signature; the back office's signed contracts
// waiting for the archive. Charts are SVG drawn here from the view model (no chart script), each
// with a table of the same figures for screen readers and copying; every number and bar links
// to the list that makes it. The handler (internal/handlers/home.go) builds the view model in the
// reader's language; the templates only lay it out.
package home

import "github.com/cpqportal/portal/web/templates/components"

// Role says which home page is shown.
type Role string

// The roles.
const (
	RoleRep        Role = "rep"
	RoleTeam       Role = "team"
	RoleBackoffice Role = "backoffice"
)

// VM is the home page.
type VM struct {
	Role  Role
	Title string
	// Intro says whose figures these are.
	Intro string
	// Unavailable: the figures could not be read (the lists say the same); the page still links
	// to them.
	Unavailable bool
	Pipeline    *Chart
	// PipelineTotal is the open value in words.
	PipelineTotal string
	Reps          *Chart
	// Team is the team lead's figures by rep with the rep picker (issue 41); SignedByMonth the
	// signed contracts' value by month over the last 12 months (the chosen rep's, or the team's).
	Team          *Team
	SignedByMonth *Chart
	// Views are the person's saved views, each a link to its list.
	Views      []components.Link
	Signed     *Chart
	Conversion *Conversion
	Aging      *Chart
	FollowUps  []FollowUp
	Waiting    *Waiting
	Recent     *Recent
	// Links are the lists to go on from here.
	Links []components.Link
	// Unchecked is "N not checked yet": the rows of the viewer's figures they may see but their
	// token has not read as they stand (checked a few at each load), counted with no stage or
	// value, in no figure ("": none); UncheckedHint says how they are checked.
	Unchecked, UncheckedHint string
}

// Chart is a horizontal bar chart and its table.
type Chart struct {
	// ID names the chart (ids, test ids, its heading's id).
	ID    string
	Title string
	// Caption is the table's caption (what the figures are).
	Caption string
	// LabelHead, CountHead and ValueHead are the table's column heads (ValueHead "": no value column).
	LabelHead, CountHead, ValueHead string
	Bars                            []Bar
}

// Bar is one bar: its label, figures in the reader's format and the list that makes it.
type Bar struct {
	Label, Count, Value, Href string
	// Fraction is the bar's length against the longest (0 to 1).
	Fraction float64
}

// Conversion is generated-to-signed: two linked counts and their ratio.
type Conversion struct {
	Title                              string
	GeneratedLabel, Generated, GenHref string
	SignedLabel, Signed, SignedHref    string
	RateLabel, Rate                    string
}

// FollowUp is one kind of follow-up: its name, count (linked to its list) and oldest rows.
type FollowUp struct {
	Kind, Title, Count, Href string
	Items                    []Item
}

// Item is a quote or contract in a short list.
type Item struct {
	Label, Href string
	// Customer is shown only when the viewer's own token read the row as it is (docs/home.md).
	Customer string
	// Unchecked: the viewer's token has not read the row as it is: its link only.
	Unchecked  bool
	StageLabel string
	StageLevel components.BadgeLevel
	// Changed is the last change in words.
	Changed string
}

// Waiting is the back office's signed contracts waiting for the archive.
type Waiting struct {
	Count, Href string
	Items       []Item
	// Numbers go to the batch archive's check with the button (rows the viewer's token read).
	Numbers []string
	// Unchecked: some waiting contracts were not read with the viewer's token, so the button
	// leaves them out; the page points to the list, which re-reads them with it.
	Unchecked bool
	Button    string
}

// Recent is the viewer's own recent work.
type Recent struct {
	Items   []Item
	AllHref string
}
