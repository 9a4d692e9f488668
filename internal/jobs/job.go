// Package jobs runs batch archive jobs: a user's list of contract numbers archived on the v2 API
// with bounded concurrency, in the background, with progress that any replica can show.
//
// A job's whole state is one record in the portal's store (internal/store), written by the
// replica running it every flushInterval and read by whichever replica serves the user's page.
// The replica running a job holds a lease on it (renewed at each flush); a job whose lease ran
// out (its replica stopped or died) is picked up by the next scan of any replica and resumed. An
// item that was in flight when its runner stopped is checked on the v2 API first (is the contract
// archived now?) before it is archived, so nothing is archived twice and nothing is skipped.
//
// The job runs with its owner's access token, handed over by each of the owner's requests to
// the job's pages (the page polls while it is open). A token the v2 API refuses pauses the job
// until the owner comes back with a fresh one (docs/backoffice.md).
package jobs

import (
	"errors"
	"time"
)

// ItemStatus is where one contract number of a job stands.
type ItemStatus string

// The states of an item. Rejected items never reach the v2 API (the validation found a problem).
const (
	ItemPending  ItemStatus = "pending"
	ItemRunning  ItemStatus = "running"
	ItemDone     ItemStatus = "done"
	ItemFailed   ItemStatus = "failed"
	ItemRejected ItemStatus = "rejected"
)

// Status is where a job stands.
type Status string

// The states of a job.
const (
	// StatusDraft: validated, shown to the user, not started.
	StatusDraft Status = "draft"
	// StatusQueued: started (or retried, or resumed), waiting for a runner.
	StatusQueued Status = "queued"
	// StatusRunning: a runner is working on it.
	StatusRunning Status = "running"
	// StatusCancelled: the user cancelled; items not started stay pending.
	StatusCancelled Status = "cancelled"
	// StatusFinished: every item is done, failed or rejected.
	StatusFinished Status = "finished"
)

// Item is one line of the user's list.
type Item struct {
	// Line is the line (or row) of the user's input, from 1.
	Line int `json:"line"`
	// Number is the contract number as given.
	Number    string     `json:"number"`
	Status    ItemStatus `json:"status"`
	ArchiveID string     `json:"archiveId,omitempty"`
	// Error is the v2 API's error (failed) or the validation problem (rejected).
	Error string `json:"error,omitempty"`
	// Note explains a done item that needed no archive call ("already archived").
	Note string `json:"note,omitempty"`
	// Customer is the contract's customer, when the validation found it.
	Customer string `json:"customer,omitempty"`
	// Attempts counts archive calls made for this item.
	Attempts int `json:"attempts,omitempty"`
}

// Job is a batch archive job.
type Job struct {
	ID        string    `json:"id"`
	Owner     string    `json:"owner"` // the subject of the user who started it
	OwnerName string    `json:"ownerName,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	StartedAt time.Time `json:"startedAt,omitzero"`
	EndedAt   time.Time `json:"endedAt,omitzero"`
	Status    Status    `json:"status"`
	Items     []Item    `json:"items"`

	// CancelRequested is set by the owner; the runner stops after the items in flight.
	CancelRequested bool `json:"cancelRequested,omitempty"`
	// WaitingForSignIn is set when the v2 API refused the owner's token: the job waits for a
	// fresh one (the owner opening the job's page).
	WaitingForSignIn bool `json:"waitingForSignIn,omitempty"`
	// Interrupted is set when a runner stopped (the portal shut down) before the job ended.
	Interrupted bool `json:"interrupted,omitempty"`
	// Resumes counts how often a runner picked the job up after another stopped.
	Resumes int `json:"resumes,omitempty"`

	// Token is the owner's latest access token (never shown, never logged).
	Token       string    `json:"token,omitempty"`
	TokenExpiry time.Time `json:"tokenExpiry,omitzero"`
	// Lease names the replica running the job and until when.
	Lease      string    `json:"lease,omitempty"`
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`
}

// Counts are the figures of the progress display.
type Counts struct {
	Total, Done, Failed, Rejected, Running, Left int
}

// Counts sums the items by status; Left is pending plus running.
func (j *Job) Counts() Counts {
	c := Counts{Total: len(j.Items)}
	for _, it := range j.Items {
		switch it.Status {
		case ItemDone:
			c.Done++
		case ItemFailed:
			c.Failed++
		case ItemRejected:
			c.Rejected++
		case ItemRunning:
			c.Running++
			c.Left++
		default:
			c.Left++
		}
	}
	return c
}

// Current lists the contract numbers in flight.
func (j *Job) Current() []string {
	var out []string
	for _, it := range j.Items {
		if it.Status == ItemRunning {
			out = append(out, it.Number)
		}
	}
	return out
}

// Active reports whether the job still has work to do (queued or running).
func (j *Job) Active() bool { return j.Status == StatusQueued || j.Status == StatusRunning }

// Errors of the Manager's methods.
var (
	// ErrNotFound: no such job for this user (another user's job is not found either).
	ErrNotFound = errors.New("jobs: no such job")
	// ErrState: the job is not in a state that allows the action (e.g. retrying a running job).
	ErrState = errors.New("jobs: not possible in the job's state")
	// ErrTokenRejected is what an Archiver returns when the v2 API refused the token (401).
	ErrTokenRejected = errors.New("jobs: access token refused")
)
