package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/quota"
)

// Reading an uploaded spreadsheet (the batch archive's list, the customer import; docs/backoffice.md
// "Limits of an uploaded file"): each read holds a core and up to a few tens of MiB while it runs,
// so a person has one in flight at a time, a replica parsesPerReplica, and each ends with its
// request, at parseTimeout, or when the portal starts to stop.

// parseTimeout bounds one read: the largest file the limits let through (10,000 customers) reads
// in well under a second; a file still being read after this is refused as too slow.
const parseTimeout = 10 * time.Second

// parsesPerReplica is how many uploaded files a replica reads at once (it has a couple of cores to
// share with every other request).
const parsesPerReplica = 2

// parseWait is how long an upload waits for one of the replica's reads before it is told to try
// again.
const parseWait = 5 * time.Second

// errReadInFlight: the person has a file being read on this replica (429, errors.go).
var errReadInFlight = errors.New("handlers: a file of this user is being read")

// errReadsBusy: the replica's reads stayed taken for parseWait (429, errors.go).
var errReadsBusy = errors.New("handlers: the replica is reading as many files as it may")

// errReadStopped: a read was cut because the portal is stopping (503, errors.go).
var errReadStopped = errors.New("handlers: reading an uploaded file was stopped: the portal is stopping")

// startParse takes the person's read slot and one of the replica's (errReadInFlight,
// errReadsBusy: 429, errors.go) and returns the read's context: the request's, ended at
// parseTimeout or when the portal starts to stop. done releases it all; call it once.
func (h *Handler) startParse(c *gin.Context) (ctx context.Context, done func(), err error) {
	if h.stopping.Err() != nil { // no read starts once the portal stops (errReadStopped)
		return nil, nil, errReadStopped
	}
	wait, cancelWait := context.WithTimeout(c.Request.Context(), parseWait)
	defer cancelWait()
	release, err := h.parses.Acquire(wait, auth.CurrentUser(c).Subject)
	switch {
	case errors.Is(err, quota.ErrUserBusy):
		return nil, nil, fmt.Errorf("%w: %w", errReadInFlight, err)
	case errors.Is(err, quota.ErrBusy):
		return nil, nil, fmt.Errorf("%w: %w", errReadsBusy, err)
	case err != nil:
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), parseTimeout)
	stop := context.AfterFunc(h.stopping, cancel)
	return ctx, func() {
		stop()
		cancel()
		release()
	}, nil
}

// readCancelled is the error of a read its context cancelled: the client went away (logged,
// nobody to answer) or the portal is stopping (the person is told to upload again).
func (h *Handler) readCancelled(c *gin.Context, err error) error {
	if c.Request.Context().Err() != nil {
		return fmt.Errorf("%w: %w", err, context.Canceled)
	}
	return fmt.Errorf("%w: %w", errReadStopped, err)
}
