package customers

import (
	"time"

	"github.com/cpqportal/portal/web/templates/components"
)

// ImportRunVM is an import's run: its progress, actions and lines.
type ImportRunVM struct {
	ID, URL, FileName string
	Draft, Active     bool
	Cancelling        bool
	WaitingForSignIn  bool
	CanRetry          bool
	Status, Version   string
	StartLabel        string
	Total, Created    int
	Failed, Left      int
	Skipped, Percent  int
	Resumed           int
	Unverified        int
	Rows              []ImportRunRow
	MoreRows          int // lines not listed (the result file has them all)
	Started           time.Time
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
