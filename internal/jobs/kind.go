package jobs

import (
	"context"
	"slices"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
)

// Job kinds (migration 00012_job_kinds.sql). Every job has one; the engine's guarantees are the
// same for every kind, and what a line does is the kind's (Kind).
//
// A new kind:
//   - names itself with a constant here (stored in jobs.kind; rows from before kinds are archives);
//   - implements Kind: Send makes the line's one call, Check reads back whether that call took
//     effect (the engine calls Check, never Send, for a line that may have been sent before);
//   - stores what a line needs in Item.Payload (the kind's own encoding, written with the line
//     and never changed) and what a line produced in Outcome.Result (Item.Result);
//   - is registered in Options.Kinds of every replica that should run it (a replica runs only the
//     kinds it knows: an older one leaves a newer kind's jobs to the replicas that know it);
//   - creates its drafts with CreateKind and reads them with GetKind and OverviewKind.
const (
	// KindArchive: batch archive of contracts (Item.Number is the contract number).
	KindArchive = "archive"
	// KindHandover: a customer's owner changed to another (internal/handover).
	KindHandover = "handover"
	// KindCustomerImport: a customer created from a line of an import (internal/customerimport).
	KindCustomerImport = "customer_import"
)

// Kind is what the jobs of one kind do with each line: a call that changes something on the v2
// API, and the read that tells whether that change happened already.
type Kind interface {
	// Send makes the line's call with the owner's token. An error wrapping ErrTokenRejected
	// pauses the job (the line stays pending); any other error fails the line with its message
	// (a *ProblemError names what a person reads).
	Send(ctx context.Context, token string, it Item) (Outcome, error)
	// Check reads back whether the line's call took effect: done with its outcome when it did,
	// not done when it did not (then Send follows), an error when that could not be told (the
	// line then stays unverified and is never sent without a check that answers).
	Check(ctx context.Context, token string, it Item) (out Outcome, done bool, err error)
}

// Outcome is what a line's call (or its check) found.
type Outcome struct {
	// Result is the kind's record of the line's effect (Item.Result: the kind's encoding).
	Result string
	// ArchiveID is the archive kind's result (Item.ArchiveID, the line's archive_id column, kept
	// from before kinds); other kinds leave it empty.
	ArchiveID string
	// Note explains a done line (Item.Note); a check that found the call's effect sets one
	// (NoteArchivedBeforeInterruption, or the kind's own).
	Note string
	// At is when the change took effect as the v2 API says it (the archive's archivedAt); zero
	// when its answer does not say (Effects then date it by the moment they are told).
	At time.Time
	// Customer is the customer the line created or changed as the v2 API answered it (the import,
	// the handover), for Effects; not stored.
	Customer *apiclient.Customer
}

// AllEffects tells each of its Effects, in order.
type AllEffects []Effects

// LineDone implements Effects.
func (all AllEffects) LineDone(ctx context.Context, done LineDone) {
	for _, e := range all {
		e.LineDone(ctx, done)
	}
}

// Effects is told what the lines of a job changed, the one way a job kind's effect reaches the
// rest of the portal (issue 42: the batch archive's effect on the work index lived in package
// main). It is set at construction (Options.Effects) and called by the engine on the runner's
// goroutine for each line whose call took effect (sent, or found done by a check after an
// interruption), right after the v2 API said so and before the line's state is stored: what it
// records follows the v2 API, which already changed. It must not fail the line and should not
// block for long (a slow database: bound it).
type Effects interface {
	LineDone(ctx context.Context, done LineDone)
}

// LineDone is one line whose call took effect.
type LineDone struct {
	// Kind is the job's kind (KindArchive, ...).
	Kind string
	// Owner and OwnerName are the person the job runs for (its owner's subject and name): who
	// made the change, with their token.
	Owner, OwnerName string
	Item             Item
	Outcome          Outcome
}

// archiveKind is the batch archive as a Kind.
type archiveKind struct{ a Archiver }

func (k archiveKind) Send(ctx context.Context, token string, it Item) (Outcome, error) {
	id, at, err := k.a.Archive(ctx, token, it.Number)
	return Outcome{ArchiveID: id, At: at}, err
}

func (k archiveKind) Check(ctx context.Context, token string, it Item) (Outcome, bool, error) {
	id, archived, err := k.a.ArchiveID(ctx, token, it.Number)
	if err != nil || !archived {
		return Outcome{}, false, err
	}
	return Outcome{ArchiveID: id, Note: NoteArchivedBeforeInterruption}, true, nil
}

// kinds is the kinds a Manager runs: Options.Kinds, with Options.Archiver as KindArchive.
func kindsOf(opts Options) map[string]Kind {
	out := map[string]Kind{}
	for name, k := range opts.Kinds {
		if k != nil {
			out[name] = k
		}
	}
	if opts.Archiver != nil {
		out[KindArchive] = archiveKind{opts.Archiver}
	}
	return out
}

// kindNames is the sorted names of the kinds this manager runs (its scans ask for these only).
func (m *Manager) kindNames() []string {
	names := make([]string, 0, len(m.kinds))
	for name := range m.kinds {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// kindOf is a job's kind: rows from before kinds (and imported records) are archives.
func kindOf(j *Job) string {
	if j.Kind == "" {
		return KindArchive
	}
	return j.Kind
}

type ownerKey struct{}

// OwnerOf is the subject of the user whose job a Kind's call runs for ("" outside a job): a kind
// that tells the portal what it changed names whose view changed.
func OwnerOf(ctx context.Context) string {
	owner, _ := ctx.Value(ownerKey{}).(string)
	return owner
}

// V2Error is the error a line shows for a failed v2 call (a refused token pauses the job), for
// kinds that call the v2 API through internal/apiclient.
func V2Error(err error) error { return v2Error(err) }
