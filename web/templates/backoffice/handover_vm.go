package backoffice

import (
	"time"

	"github.com/cpqportal/portal/web/templates/components"
)

// HandoverNewVM is the handover's first page: choose the owner, see their customers, choose the
// new owner.
type HandoverNewVM struct {
	From components.Field // the owner whose customers are handed over (a select)
	To   components.Field // the new owner (a select)
	// FromOptions and ToOptions are the owners the v2 API reports in the user's customer list.
	FromOptions, ToOptions []components.Option
	Errors                 []components.FieldError
	// Chosen: an owner was chosen; Customers are theirs (at most MaxShown), Total how many.
	Chosen    bool
	FromName  string
	Customers []HandoverCustomer
	Total     int
	Handovers []BatchSummary
}

// HandoverCustomer is a customer listed on the handover's pages.
type HandoverCustomer struct {
	ID     string
	URL    string
	Name   string
	City   string
	Owners string
	// AlsoNew: the new owner owns this customer already (with the current one); the owner change
	// cannot add them twice, so the handover removes the current owner instead and says so.
	AlsoNew bool
}

// HandoverVM is a handover's page: the preview of a draft, or its progress and results.
type HandoverVM struct {
	// Job is the handover's state and counts.
	components.Job
	Summary            string // "from X to Y"
	StartLabel         string
	Current            []string
	Rows               []HandoverRow
	MoreRows           int // lines not listed (the CSV has them all)
	Created            time.Time
	ConcurrencyMessage string
}

// HandoverRow is one line of a handover.
type HandoverRow struct {
	Line     int
	Customer HandoverCustomer
	Status   string
	Level    components.BadgeLevel
	Owners   string // the customer's owners after the change (done lines)
	Message  string
	Verified bool
}

// handoverWords are what a handover's progress region calls things (components.JobWords).
var handoverWords = components.JobWords{Name: "handover", Bar: "handover.progress.bar",
	Done: "batch.count.done", DoneID: "done", Rejected: "handover.count.left_out", RejectedID: "rejected", Cancel: "handover.cancel"}
