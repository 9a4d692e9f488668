package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/inbox"
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
		if ierr := a.work.Archive(ctx, workindex.Viewer{}, number, time.Time{}); ierr != nil {
			a.logger.WarnContext(ctx, "work index: batch result not recorded", slog.String("contract", number), slog.Any("err", ierr))
		}
	}
	return archiveID, err
}

// purgeWorkIndex applies PORTAL_WORK_RETENTION once an hour (and at start) until ctx ends.
func purgeWorkIndex(ctx context.Context, work *workindex.Index, logger *slog.Logger) {
	ticker := time.NewTicker(time.Hour)
	defer ticker.Stop()
	for {
		n, err := work.Purge(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("work index: retention not applied", slog.Any("err", err))
		case n > 0:
			logger.Info("work index: rows past their retention removed", slog.Int64("rows", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// purgeCustomerImports deletes, every hour, the customer imports not run within their retention
// (customerimport.DefaultRetention), on every replica (a delete of rows already gone is cheap).
func purgeCustomerImports(ctx context.Context, imports *customerimport.Store, logger *slog.Logger) {
	ticker := time.NewTicker(time.Hour)
	defer ticker.Stop()
	for {
		n, err := imports.Purge(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("customer imports: retention not applied", slog.Any("err", err))
		case n > 0:
			logger.Info("customer imports: imports past their retention removed", slog.Int64("imports", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// tellAnswer puts a signer's answer (or an expiry) the signature watcher learnt into the inboxes
// of the people who created the contract and changed it last (inbox.Store.TellAnswer). A store
// that fails is logged; the watch goes on.
func tellAnswer(ctx context.Context, box *inbox.Store, work *workindex.Index, s workindex.ContractSighting, stage workindex.Stage, logger *slog.Logger) {
	row, ok := work.Peek(ctx, workindex.KindContract, int64(s.ContractID))
	if !ok {
		return
	}
	if err := box.TellAnswer(ctx, row.CreatedBy, row.ChangedBy, s, stage); err != nil {
		logger.WarnContext(ctx, "inbox: a signer's answer was not delivered", slog.String("contract", s.Number), slog.Any("err", err))
	}
}
