package handlers

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/jobs"
)

// The actions on a batch: start (confirm the preview), cancel (after the items in flight) and
// retry the failed lines. Each is a POST (cross-origin protected like every state change) that
// answers 303 to the batch's page, with or without JavaScript.

// batchAction runs act on the user's batch and goes back to its page.
func (h *Handler) batchAction(c *gin.Context, act func(job *jobs.Job, subject, token string, s *authSession) error) {
	job, err := h.loadBatch(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	s := auth.CurrentSession(c)
	if err := act(job, s.Subject, s.AccessToken, &authSession{expiry: s.TokenExpiry}); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, batchPath(job.ID))
}

// authSession carries what a batch action needs of the session besides the token.
type authSession struct{ expiry time.Time }

// startBatch answers POST /contracts/batch-archive/:jobId/start.
func (h *Handler) startBatch(c *gin.Context) {
	h.batchAction(c, func(job *jobs.Job, subject, token string, s *authSession) error {
		_, err := h.jobs.Start(c.Request.Context(), job.ID, subject, token, s.expiry)
		return err
	})
}

// cancelBatch answers POST /contracts/batch-archive/:jobId/cancel.
func (h *Handler) cancelBatch(c *gin.Context) {
	h.batchAction(c, func(job *jobs.Job, subject, _ string, _ *authSession) error {
		_, err := h.jobs.Cancel(c.Request.Context(), job.ID, subject)
		return err
	})
}

// retryBatch answers POST /contracts/batch-archive/:jobId/retry: only the failed lines run again.
func (h *Handler) retryBatch(c *gin.Context) {
	h.batchAction(c, func(job *jobs.Job, subject, token string, s *authSession) error {
		_, err := h.jobs.RetryFailed(c.Request.Context(), job.ID, subject, token, s.expiry)
		return err
	})
}
