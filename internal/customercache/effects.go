package customercache

import (
	"context"

	"github.com/cpqportal/portal/internal/jobs"
)

// SubjectKey is a signed-in person's key in the cache: the subject of their token. Each person's
// list is their own (each token may see other customers).
func SubjectKey(subject string) string { return "sub:" + subject }

// JobEffects are the job engine's Effects on the cached lists: a customer a job's line created or
// changed (jobs.Outcome.Customer: an import's, a handover's) is in the list of the job's owner at
// once, on this replica; the other replicas' copies follow within their TTL.
type JobEffects struct {
	Cache *Cache
}

// LineDone implements jobs.Effects.
func (e JobEffects) LineDone(_ context.Context, done jobs.LineDone) {
	if e.Cache == nil || done.Outcome.Customer == nil || done.Owner == "" {
		return
	}
	e.Cache.Upsert(SubjectKey(done.Owner), done.Outcome.Customer)
}
