package signwatch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/internal/worksight"
)

// V2Reader reads contracts on the v2 API (GET /v2/contract/{contractId}, spec 4.4).
type V2Reader struct {
	API *apiclient.Client
}

// Read implements Reader.
func (r V2Reader) Read(ctx context.Context, token string, contractID int32) (workindex.ContractSighting, error) {
	c, err := r.API.Contracts.Get(apiclient.WithToken(ctx, token), contractID)
	switch {
	case errors.Is(err, apiclient.ErrUnauthorized):
		return workindex.ContractSighting{}, fmt.Errorf("%w: %w", ErrTokenRefused, err)
	case errors.Is(err, apiclient.ErrForbidden), errors.Is(err, apiclient.ErrNotFound):
		return workindex.ContractSighting{}, fmt.Errorf("%w: %w", ErrNotReadable, err)
	case err != nil:
		return workindex.ContractSighting{}, fmt.Errorf("signwatch: read contract %d: %w", contractID, err)
	}
	return worksight.Contract(c), nil
}

// attempt is one read: which contract, with whose token, and what came of it.
type attempt struct {
	id     int32
	reader string
	token  liveToken
	s      workindex.ContractSighting
	err    error
}

// tokenMargin: a token that ends sooner than this is not used (the read would race its end).
const tokenMargin = 10 * time.Second

// readTimeout bounds one read (well inside the default lease, renewed every third of it).
const readTimeout = 4 * time.Second

// readDue reads the contracts whose turn came (within the budget), then records what each answer
// says, one at a time.
func (w *Watcher) readDue(ctx context.Context, now time.Time, tokens map[string]liveToken) {
	var todo []attempt
	for _, id := range w.sched.due(now, w.tick()) {
		e := w.sched.entries[id]
		a := attempt{id: id}
		for _, key := range e.readers {
			if t, ok := tokens[key]; ok && t.expires.After(now.Add(tokenMargin)) {
				a.reader, a.token = key, t
				break
			}
		}
		if a.reader == "" {
			// Nobody who read it holds a live token now: it waits for the next scan.
			w.sched.read(id, now)
			continue
		}
		todo = append(todo, a)
	}
	if len(todo) == 0 {
		return
	}
	var wg sync.WaitGroup
	limit := make(chan struct{}, w.opts.Concurrency)
	for i := range todo {
		wg.Add(1)
		limit <- struct{}{}
		go func(a *attempt) {
			defer func() { <-limit; wg.Done() }()
			w.reads.Add(1)
			// Bounded well inside the lease, so a hanging v2 API never outlives this replica's watch.
			rctx, cancel := context.WithTimeout(ctx, min(readTimeout, w.opts.Lease/3))
			defer cancel()
			a.s, a.err = w.opts.Reader.Read(rctx, a.token.token, a.id)
		}(&todo[i])
	}
	wg.Wait()
	for _, a := range todo {
		w.settle(ctx, a, tokens)
	}
}

// settle records one read's answer and moves the contract's turn.
func (w *Watcher) settle(ctx context.Context, a attempt, tokens map[string]liveToken) {
	now := w.opts.Now()
	viewer := a.token.viewer
	switch {
	case errors.Is(a.err, ErrTokenRefused):
		delete(tokens, a.reader)
		if err := w.dropRefused(ctx, a.reader, a.token.token); err != nil {
			w.opts.Logger.Warn("signature watcher: a refused token was not deleted", slog.Any("err", err))
		}
		return // the contract's turn stays: the next reader tries at the next tick
	case errors.Is(a.err, ErrNotReadable):
		// As a page would: the row leaves this person's lists (the v2 API refused them).
		if err := w.opts.Work.Forget(ctx, viewer, workindex.KindContract, int64(a.id)); err != nil {
			w.opts.Logger.Warn("signature watcher: a refused row was not forgotten", slog.Any("err", err))
			w.sched.pause(now)
			return
		}
		w.sched.notReadable(a.id, a.reader)
		return
	case a.err != nil:
		if ctx.Err() == nil {
			w.opts.Logger.Warn("signature watcher: the v2 API did not answer; reads pause", slog.Int("contract_id", int(a.id)), slog.Any("err", a.err))
		}
		w.sched.pause(now)
		return
	}
	if err := w.opts.Work.ObserveContract(ctx, viewer, a.s, workindex.ActRefreshed); err != nil {
		// Not recorded: the contract stays watched and is read again after the pause.
		w.opts.Logger.Warn("signature watcher: an answer was not recorded; reads pause", slog.Int("contract_id", int(a.id)), slog.Any("err", err))
		w.sched.pause(now)
		return
	}
	stage := workindex.StageOfContract(a.s.Facts)
	if stage == workindex.StageSignature {
		w.sched.read(a.id, now)
		return
	}
	w.sched.answered(a.id)
	w.opts.Logger.Info("signature watcher: an answer arrived", slog.Int("contract_id", int(a.id)), slog.String("stage", string(stage)))
	if w.opts.OnAnswer != nil {
		w.opts.OnAnswer(ctx, viewer, a.s, stage)
	}
}

func randomHolder() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
