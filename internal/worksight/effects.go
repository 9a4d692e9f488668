package worksight

import (
	"context"
	"log/slog"

	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/workindex"
)

// JobEffects is the jobs engine's Effects for the work index (jobs.Options.Effects): a batch
// archive's line that took effect archives the contract's row, credited to the person who ran the
// batch (the job's owner, whose token archived it) at the archive's time as the v2 API answered it
// (docs/work-index.md "Who changed it and when"). A write that fails is logged and never fails the
// line: the next sighting catches up.
type JobEffects struct {
	Work   *workindex.Index
	Logger *slog.Logger
}

// LineDone implements jobs.Effects.
func (e JobEffects) LineDone(ctx context.Context, done jobs.LineDone) {
	if e.Work == nil || done.Kind != jobs.KindArchive || done.Item.Number == "" {
		return
	}
	by := workindex.Viewer{Subject: done.Owner, Name: done.OwnerName}
	if err := e.Work.Archive(ctx, by, done.Item.Number, done.Outcome.At); err != nil && e.Logger != nil {
		e.Logger.WarnContext(ctx, "work index: batch result not recorded", slog.String("contract", done.Item.Number), slog.Any("err", err))
	}
}
