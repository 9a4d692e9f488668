package customers

import (
	"time"

	"github.com/cpqportal/portal/web/templates/components"
)

// ImportRunVM is an import's run: its progress, actions and lines.
type ImportRunVM struct {
	// Job is the run's state and counts (Done: the customers created; Rejected: the lines
	// skipped).
	components.Job
	FileName   string
	StartLabel string
	Rows       []ImportRunRow
	MoreRows   int // lines not listed (the result file has them all)
	Started    time.Time
}

// ImportRunRow is one line of a run.
type ImportRunRow struct {
	Line, Row                 int
	Name, TaxID               string
	Status                    string
	Level                     components.BadgeLevel
	CustomerID                string // the new customer's id (created lines)
	CustomerURL, CustomerText string
	Message                   string
}

// importRunWords are what a run's progress region calls things (components.JobWords).
var importRunWords = components.JobWords{Name: "import-run", Bar: "import.run.bar",
	Done: "import.run.count.created", DoneID: "created", Rejected: "import.run.count.skipped", RejectedID: "skipped", Cancel: "import.run.cancel"}
