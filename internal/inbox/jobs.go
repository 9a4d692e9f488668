package inbox

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/cpqportal/portal/internal/jobs"
)

// jobPages are each job kind's page and its items' kinds (finished, failed).
var jobPages = map[string]struct {
	path             string
	finished, failed Kind
}{
	jobs.KindArchive:        {"/contracts/batch-archive/", KindArchiveFinished, KindArchiveFailed},
	jobs.KindHandover:       {"/customers/handover/", KindHandoverFinished, KindHandoverFailed},
	jobs.KindCustomerImport: {"/customers/import-runs/", KindImportFinished, KindImportFailed},
}

// JobItem is the item that tells a job's owner it ended: finished (no line failed), or failed
// (lines failed, or the job stopped). A job its owner cancelled tells nothing (they know), nor a
// job still active. One item per end (a job retried and ended again tells again).
func JobItem(j *jobs.Job) (Item, bool) {
	kind := j.Kind
	if kind == "" {
		kind = jobs.KindArchive
	}
	page, ok := jobPages[kind]
	if !ok || j.Active() || j.Status == jobs.StatusCancelled || j.Status == jobs.StatusDraft || j.Owner == "" {
		return Item{}, false
	}
	c := j.Counts()
	k := page.finished
	if c.Failed > 0 || j.Status == jobs.StatusStopped {
		k = page.failed
	}
	return Item{
		Subject: j.Owner,
		Dedupe:  "job:" + j.ID + ":" + strconv.FormatInt(j.EndedAt.UnixMicro(), 10),
		Kind:    k,
		Params:  map[string]string{ParamDone: strconv.Itoa(c.Done), ParamFailed: strconv.Itoa(c.Failed)},
		Link:    page.path + j.ID,
	}, true
}

// JobEnded delivers JobItem (jobs.Options.OnEnd), and to the new owner of a handover's customers
// their HandoverItem; a failure is logged (the job's page still says how it ended).
func (s *Store) JobEnded(ctx context.Context, j *jobs.Job) {
	if it, ok := JobItem(j); ok {
		if err := s.Deliver(ctx, it); err != nil {
			s.opts.Logger.Warn("inbox: the end of a job was not delivered", slog.String("job", j.ID), slog.Any("err", err))
		}
	}
	if s.opts.NewOwner == nil || j.Active() || j.Status == jobs.StatusDraft {
		return
	}
	email, customers := s.opts.NewOwner(j)
	if email == "" || customers == 0 {
		return
	}
	person, err := s.personByEmail(ctx, email)
	if err != nil {
		s.opts.Logger.Warn("inbox: the new owner of a handover was not looked up", slog.String("job", j.ID), slog.Any("err", err))
		return
	}
	if person == "" || person == PersonKey(j.Owner) {
		return // nobody signs in with that address (or it is the person who ran it: they know)
	}
	if err := s.Deliver(ctx, HandoverItem(person, j, customers)); err != nil {
		s.opts.Logger.Warn("inbox: a handover was not told to its new owner", slog.String("job", j.ID), slog.Any("err", err))
	}
}

// HandoverItem tells person (an inbox key) that handover j, run by its owner, made them the owner
// of customers customers; it links to their customer list (the job's page is its owner's alone).
// One item per end of the job.
func HandoverItem(person string, j *jobs.Job, customers int) Item {
	by := j.OwnerName
	if by == "" {
		by = "—"
	}
	return Item{
		Person: person,
		Dedupe: "handover_received:" + j.ID + ":" + strconv.FormatInt(j.EndedAt.UnixMicro(), 10),
		Kind:   KindHandoverReceived,
		Params: map[string]string{ParamBy: by, ParamDone: strconv.Itoa(customers)},
		Link:   "/customers",
	}
}

// SignatureAnswered is the item that tells recipientSubject (the OpenID subject of the contract's
// person; or set Item.Person to their work-index key instead and clear Subject) that the signer of
// contract contractID answered: stage is "signed" (KindSigned) or "declined" (KindDeclined, with
// the signer's reason, "" when they gave none); at is when they answered (it makes the event one
// item however often the watcher sees it).
func SignatureAnswered(recipientSubject string, contractID int32, number, customer, stage, reason string, at time.Time) Item {
	kind := KindSigned
	params := map[string]string{ParamNumber: number, ParamCustomer: customer, ParamAt: at.UTC().Format(time.RFC3339)}
	if stage == "declined" {
		kind = KindDeclined
		params[ParamReason] = reason
	}
	id := strconv.FormatInt(int64(contractID), 10)
	return Item{
		Subject: recipientSubject,
		Dedupe:  "signature:" + id + ":" + string(kind) + ":" + strconv.FormatInt(at.UnixMicro(), 10),
		Kind:    kind,
		Params:  params,
		Link:    "/contracts/" + id,
	}
}
