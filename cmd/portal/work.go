package main

import (
	"context"
	"log/slog"

	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/workindex"
)

// indexedArchiver is the batch archive's Archiver that also tells the work index when a contract
// was archived, so the contract lists follow batch results (docs/work-index.md). A failed index
// write is logged and never fails the archive.
type indexedArchiver struct {
	jobs.V2
	work   *workindex.Index
	logger *slog.Logger
}

// Archive implements jobs.Archiver.
func (a indexedArchiver) Archive(ctx context.Context, token, number string) (string, error) {
	archiveID, err := a.V2.Archive(ctx, token, number)
	if err == nil {
		if ierr := a.work.MarkArchived(ctx, number); ierr != nil {
			a.logger.WarnContext(ctx, "work index: batch result not recorded", slog.String("contract", number), slog.Any("err", ierr))
		}
	}
	return archiveID, err
}
