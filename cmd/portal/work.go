package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/workindex"
)

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

// tellAnswer puts a signer's answer (or an expiry) the work index learnt, whoever's read it was
// (a page, a list's re-read, the signature watcher), into the inboxes of the people who created
// the contract and changed it last before the answer (inbox.Store.TellAnswer; workindex.Options.OnAnswer).
// A store that fails is logged; the read goes on.
func tellAnswer(ctx context.Context, box *inbox.Store, s workindex.ContractSighting, ch workindex.Change, logger *slog.Logger) {
	if err := box.TellAnswer(ctx, ch.CreatedBy, ch.ChangedBy, s, ch.To); err != nil {
		logger.WarnContext(ctx, "inbox: a signer's answer was not delivered", slog.String("contract", s.Number), slog.Any("err", err))
	}
}
