// Package jobs runs a user's bulk jobs in the background, with bounded concurrency and progress
// that any replica can show: the batch archive (a list of contract numbers archived on the v2 API)
// and the other kinds (kind.go: a job's kind says what each line's call is, e.g. the handover of
// customers to another owner, internal/handover); everything below holds for every kind.
//
// A job is one row of the state database (internal/statedb, table jobs) and each line of its list
// one row of job_lines, written on its own when it changes: the bytes a batch writes grow with
// its lines, not with their square. Side effects are recorded before they happen: the runner
// commits the next lines as in flight (status running, maybe_sent) before sending their calls; a
// runner whose write fails or whose lease was taken sends nothing more; a runner sends no call
// past its fence (a fifth of the lease before another replica may take over); and a line that
// may have been sent is read back from the v2 API (is the contract archived now?) before it is
// archived again, after a crash, a database outage, a retry or a cancel. A line taken over from a
// runner that did not release its lease is read back only once that runner's last call can no
// longer be answered (its lease's end plus the v2 timeout). So nothing is archived twice without
// relying on the v2 archive being idempotent, and nothing is skipped (docs/backoffice.md).
//
// Replicas find work with a query (queued jobs, and running jobs whose lease ran out by the
// database's clock) and hold a lease on the jobs they run; each claim raises the job's lease
// version and every write of a runner names the version it claimed (fencing), so a runner that
// lost its lease writes nothing and sends nothing more.
//
// The job runs with its owner's access token, sealed at rest (Options.Sealer), handed over by each
// of the owner's requests to the job's pages, taken away when the owner's sessions end (PauseOwner)
// and deleted when the job ends. A token the v2 API refuses, or none, pauses the job until the
// owner comes back with a fresh one.
package jobs

import (
	"errors"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
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
	// StatusFinished: every item is done, failed or rejected (none pending).
	StatusFinished Status = "finished"
	// StatusStopped: the job's row vanished from the database while a runner ran it (the data
	// was lost or deleted); the runner wrote back its own copy with this status and StopReason,
	// and the owner resumes it by hand (nothing is started again behind their back).
	StatusStopped Status = "stopped"
)

// Reasons a job stopped (Job.StopReason).
const (
	// StopRecordLost: the job's row vanished from the database mid-run (docs/backoffice.md).
	StopRecordLost = "record_lost"
)

// Item is one line of the user's list.
type Item struct {
	// Line is the line (or row) of the user's input, from 1.
	Line int `json:"line"`
	// Number is the contract number as given.
	Number    string     `json:"number"`
	Status    ItemStatus `json:"status"`
	ArchiveID string     `json:"archiveId,omitempty"`
	// Error is the v2 API's error as the portal logged it (failed); items stored before Problem
	// existed also carry their validation problem (rejected) here, in English.
	Error string `json:"error,omitempty"`
	// Problem is why the item failed or was left out, as a catalogue key with string arguments
	// (so it reads back the same from its JSON in the database), translated where a person reads it.
	Problem i18n.Message `json:"problem,omitzero"`
	// Note explains a done item that needed no archive call (NoteAlreadyArchived,
	// NoteArchivedBeforeInterruption).
	Note string `json:"note,omitempty"`
	// Customer is the contract's customer, when the validation found it.
	Customer string `json:"customer,omitempty"`
	// Stage is the contract's stage as the validation found it (Found.Stage: the caller's word,
	// read from the contract document at check time), shown beside the line.
	Stage string `json:"stage,omitempty"`
	// Attempts counts archive calls made for this item.
	Attempts int `json:"attempts,omitempty"`
	// MaybeSent is committed with the claim of the item (status running) before its archive
	// call is sent, and cleared once its outcome is known: an item that carries it is checked
	// with the contract read before it is archived again (after a crash, a database outage, a
	// retry or a cancel).
	MaybeSent bool `json:"maybeSent,omitempty"`
	// Verified is set when that check was made: the line's outcome was read back from the v2
	// API after an interruption, not assumed (shown on the page and in the CSV).
	Verified bool `json:"verified,omitempty"`
	// Payload is what the job's kind needs to carry out the line (its own encoding, written with
	// the line and never changed; empty for archive lines, whose Number says it all).
	Payload string `json:"payload,omitempty"`
	// Result is what the line's call produced, in the kind's encoding (Outcome.Result).
	Result string `json:"result,omitempty"`
}

// Job is a background job of one kind (a batch archive, a handover).
type Job struct {
	ID string `json:"id"`
	// Kind is what the job does (KindArchive, KindHandover; "" reads as KindArchive).
	Kind      string    `json:"kind,omitempty"`
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
	// StopReason says why a job is StatusStopped (StopRecordLost).
	StopReason string `json:"stopReason,omitempty"`

	// Token is the owner's latest access token, sealed (Options.Sealer: encrypted with keys derived
	// from the session keys, bound to the job's id), never shown, never logged; "" once the batch
	// ended or the owner signed out. TokenID is a fingerprint of it (a handed-over token that is the
	// same changes nothing).
	Token       string    `json:"token,omitempty"`
	TokenID     string    `json:"tokenId,omitempty"`
	TokenExpiry time.Time `json:"tokenExpiry,omitzero"`
	// Lease names the replica running the job and until when (by the database's clock).
	Lease      string    `json:"lease,omitempty"`
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`

	// leaseVersion is raised by every claim; a runner's writes name the one it claimed.
	leaseVersion int64
	// checkAfter (unix µs, database clock): lines that may have been sent are read back only from
	// then (a holder whose lease was taken over may have a call in flight until then).
	checkAfter int64
	// summary holds the counts of a job listed without its lines (Overview).
	summary *Counts
}

// Counts are the figures of the progress display.
type Counts struct {
	Total, Done, Failed, Rejected, Running, Left int
}

// Counts sums the items by status; Left is pending plus running.
func (j *Job) Counts() Counts {
	if j.Items == nil && j.summary != nil {
		return *j.summary
	}
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

// Unverified counts the lines that may have been sent and whose outcome is not known (their
// check failed or has not run yet): never archived again without that check.
func (j *Job) Unverified() int {
	n := 0
	for _, it := range j.Items {
		if it.MaybeSent && (it.Status == ItemPending || it.Status == ItemRunning || it.Status == ItemFailed) {
			n++
		}
	}
	return n
}

// Verified counts the lines whose outcome was read back from the v2 API after an interruption.
func (j *Job) Verified() int {
	n := 0
	for _, it := range j.Items {
		if it.Verified {
			n++
		}
	}
	return n
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
	// ErrNothingToArchive: every line of the list was left out; no draft is stored.
	ErrNothingToArchive = errors.New("jobs: no line of the list can be archived")
)

// The notes of done items.
const (
	NoteAlreadyArchived            = "already archived"
	NoteArchivedBeforeInterruption = "archived before the job was interrupted"
)

// ProblemMessage is what the item's line tells a person about its failure or rejection: its
// Problem, or the Error of an item stored before problems were messages; zero when none.
func (it Item) ProblemMessage() i18n.Message {
	if !it.Problem.IsZero() {
		return it.Problem
	}
	return i18n.Verbatim(it.Error)
}

// NoteMessage is the item's note for a person (zero when it has none).
func (it Item) NoteMessage() i18n.Message {
	switch it.Note {
	case "":
		return i18n.Message{}
	case NoteAlreadyArchived:
		return i18n.M("batch.note.already_archived")
	case NoteArchivedBeforeInterruption:
		return i18n.M("batch.note.archived_before_interruption")
	}
	return i18n.Verbatim(it.Note)
}

// ProblemError is an error of an item with the message a person reads about it.
type ProblemError struct {
	Message i18n.Message
	Err     error
}

func (e *ProblemError) Error() string { return e.Err.Error() }
func (e *ProblemError) Unwrap() error { return e.Err }

// problemOf is the message of an item's error: a ProblemError's, or the error's own text.
func problemOf(err error) i18n.Message {
	var pe *ProblemError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return i18n.Verbatim(err.Error())
}
