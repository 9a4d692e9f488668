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

// JobEnded delivers JobItem (jobs.Options.OnEnd); a failure is logged (the job's page still says
// how it ended).
func (s *Store) JobEnded(ctx context.Context, j *jobs.Job) {
	it, ok := JobItem(j)
	if !ok {
		return
	}
	if err := s.Deliver(ctx, it); err != nil {
		s.opts.Logger.Warn("inbox: the end of a job was not delivered", slog.String("job", j.ID), slog.Any("err", err))
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
