package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
)

// The pages of a job of the job engine (internal/jobs): the batch archive, the handover and the
// import's run. Each kind has a page at <path>/:jobId (the preview of a draft, else the live
// progress), its progress region (…/progress, long-polled), and three actions (…/start, …/cancel,
// …/retry: POSTs, cross-origin protected like every state change on the pages group, answered 303
// to the page, with or without JavaScript). What differs between the kinds is a jobPage; the
// handlers below serve every kind with it. What the kinds do not share (the batch's check, the
// handover's owner choice, the import's dry run, the result files) stays in their own files.

// jobPage describes the pages of one kind of job.
type jobPage struct {
	// kind is the jobs' kind (jobs.KindArchive, …): a job of another kind is not found.
	kind string
	// path is the page of the job with an id.
	path func(id string) string
	// badID is the message key of a malformed :jobId (a 400; the store is not asked).
	badID   string
	section layout.Section
	// noStore: the page itself is sent with Cache-Control: no-store (the progress region always is).
	noStore bool
	// page builds the page of job: its title and content (an error goes to the error edge).
	page func(h *Handler, c *gin.Context, job *jobs.Job) (title string, content templ.Component, err error)
	// progress builds the progress region of job.
	progress func(h *Handler, c *gin.Context, job *jobs.Job) templ.Component
	// fail answers a page or region whose job could not be read; nil: the error edge (h.fail).
	fail func(h *Handler, c *gin.Context, err error)
}

// loadJob reads the :jobId job of p's kind of the signed-in user: a 400 for a malformed id (the
// store is not asked), jobs.ErrNotFound (404) for one that is not in the store, is another
// user's or of another kind.
func (h *Handler) loadJob(c *gin.Context, p *jobPage) (*jobs.Job, error) {
	if h.jobs == nil {
		return nil, errJobsOff
	}
	id := c.Param("jobId")
	if !statedb.ValidID(id) {
		return nil, badRequest(p.badID)
	}
	return h.jobs.GetKind(c.Request.Context(), p.kind, id, auth.CurrentUser(c).Subject)
}

// failJob answers a page or progress region of p's kind that could not be read.
func (h *Handler) failJob(c *gin.Context, p *jobPage, err error) {
	if p.fail != nil {
		p.fail(h, c, err)
		return
	}
	h.fail(c, err)
}

// handOverToken gives the user's current access token to their running job, so it keeps
// working (and resumes when it waited for a sign-in). RequireLogin has just refreshed it.
func (h *Handler) handOverToken(c *gin.Context, job *jobs.Job) {
	if !job.Active() {
		return
	}
	s := auth.CurrentSession(c)
	if s == nil {
		return
	}
	if err := h.jobs.HandOverToken(c.Request.Context(), job.ID, s.Subject, s.AccessToken, s.TokenExpiry); err != nil {
		h.log(c).Warn("job page: handing the token over failed", "kind", job.Kind, "err", err)
	}
}

// showJob answers GET <path>/:jobId: the preview of a draft, or the progress.
func (h *Handler) showJob(p *jobPage) gin.HandlerFunc {
	return func(c *gin.Context) {
		job, err := h.loadJob(c, p)
		if err != nil {
			h.failJob(c, p, err)
			return
		}
		h.handOverToken(c, job)
		title, content, err := p.page(h, c, job)
		if err != nil {
			h.fail(c, err)
			return
		}
		if p.noStore {
			c.Header("Cache-Control", "no-store")
		}
		h.renderPage(c, http.StatusOK, title, p.section, content)
	}
}

// Progress of a running job (issue 27): the region asks again as soon as it is shown, with
// ?after=<what it shows> (jobVersion), and the portal holds the request until the job's state
// differs: woken by the jobs manager on this replica (jobs.Options.OnChange), and looking at the
// database every batchProgressRecheck for a job run by another replica, for at most
// batchProgressHold. So the end shows within a quarter of a second, and a waiting page costs a
// request per change (or per hold) instead of one a second. None of this calls the v2 API.
const (
	batchProgressHold    = 10 * time.Second
	batchProgressRecheck = 200 * time.Millisecond
)

// showJobProgress answers GET <path>/:jobId/progress[?after=<version>]: the progress region, once
// it differs from after, the job ended, or batchProgressHold passed.
func (h *Handler) showJobProgress(p *jobPage) gin.HandlerFunc {
	return func(c *gin.Context) {
		job, err := h.loadJob(c, p)
		if err != nil {
			h.failJob(c, p, err)
			return
		}
		h.handOverToken(c, job)
		if after := c.Query("after"); after != "" {
			// An error is the job gone while the region waited, or the browser gone (h.fail
			// only notes that).
			if job, err = h.waitForJobChange(c, p, job, after); err != nil {
				h.failJob(c, p, err)
				return
			}
		}
		c.Header("Cache-Control", "no-store")
		h.render(c, http.StatusOK, p.progress(h, c, job))
	}
}

// waitForJobChange returns the job (read again for the person when it moved) once what its
// progress region shows is no longer after, it ended, or batchProgressHold passed.
func (h *Handler) waitForJobChange(c *gin.Context, p *jobPage, job *jobs.Job, after string) (*jobs.Job, error) {
	ctx := c.Request.Context()
	hold := time.NewTimer(batchProgressHold)
	defer hold.Stop()
	recheck := time.NewTicker(batchProgressRecheck)
	defer recheck.Stop()
	for job.Active() && jobVersion(job) == after {
		changed := h.jobChanges.Changed(job.ID)
		select {
		case <-changed:
		case <-recheck.C:
		case <-hold.C:
			return job, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		// One value first: the lines (up to jobs.MaxItems rows) are read only when the job moved.
		if updated, err := h.jobs.UpdatedAt(ctx, job.ID, auth.CurrentUser(c).Subject); err == nil && updated.Equal(job.UpdatedAt) {
			continue
		}
		next, err := h.loadJob(c, p)
		if err != nil {
			return nil, err
		}
		job = next
	}
	return job, nil
}

// jobVersion names what a job's progress region shows (counts, state, items in flight).
func jobVersion(j *jobs.Job) string {
	counts := j.Counts()
	sum := sha256.Sum256(fmt.Appendf(nil, "%v|%s|%t|%t|%d|%v", counts, j.Status, j.CancelRequested, j.WaitingForSignIn, j.Resumes, j.Current()))
	return hex.EncodeToString(sum[:8])
}

// jobVM is what every page of job shows of it (components.Job), its page at path.
func jobVM(tr *i18n.Translator, j *jobs.Job, path string) components.Job {
	counts := j.Counts()
	vm := components.Job{ID: j.ID, URL: path, Version: jobVersion(j), Draft: j.Status == jobs.StatusDraft, Active: j.Active(),
		Cancelling: j.Active() && j.CancelRequested, WaitingForSignIn: j.Active() && j.WaitingForSignIn, Status: batchStatusText(tr, j),
		Total: counts.Total, Done: counts.Done, Failed: counts.Failed, Left: counts.Left, Rejected: counts.Rejected,
		Resumed: j.Resumes, Verified: j.Verified(), Unverified: j.Unverified()}
	vm.CanRetry = !vm.Active && !vm.Draft && counts.Failed > 0
	if counts.Total > 0 {
		vm.Percent = (counts.Done + counts.Failed + counts.Rejected) * 100 / counts.Total
	}
	return vm
}

// jobAction runs act on the user's job of p's kind and goes back to its page.
func (h *Handler) jobAction(p *jobPage, act func(ctx context.Context, job *jobs.Job, s *session.Session) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		job, err := h.loadJob(c, p)
		if err != nil {
			h.fail(c, err)
			return
		}
		if err := act(c.Request.Context(), job, auth.CurrentSession(c)); err != nil {
			h.fail(c, err)
			return
		}
		c.Redirect(http.StatusSeeOther, p.path(job.ID))
	}
}

// startJob answers POST <path>/:jobId/start: the draft runs with the user's token.
func (h *Handler) startJob(p *jobPage) gin.HandlerFunc {
	return h.jobAction(p, func(ctx context.Context, job *jobs.Job, s *session.Session) error {
		_, err := h.jobs.Start(ctx, job.ID, s.Subject, s.AccessToken, s.TokenExpiry)
		return err
	})
}

// cancelJob answers POST <path>/:jobId/cancel: the job stops after the items in flight.
func (h *Handler) cancelJob(p *jobPage) gin.HandlerFunc {
	return h.jobAction(p, func(ctx context.Context, job *jobs.Job, s *session.Session) error {
		_, err := h.jobs.Cancel(ctx, job.ID, s.Subject)
		return err
	})
}

// retryJob answers POST <path>/:jobId/retry: only the failed lines run again (each one that may
// have been sent is checked first, by the kind's runner).
func (h *Handler) retryJob(p *jobPage) gin.HandlerFunc {
	return h.jobAction(p, func(ctx context.Context, job *jobs.Job, s *session.Session) error {
		_, err := h.jobs.RetryFailed(ctx, job.ID, s.Subject, s.AccessToken, s.TokenExpiry)
		return err
	})
}
