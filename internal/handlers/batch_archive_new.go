package handlers

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/web/templates/backoffice"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
)

// Batch archive (docs/backoffice.md): GET /contracts/batch-archive shows the form and the user's
// batches; POST checks the list (pasted or uploaded) and stores it as a draft batch, whose page
// shows what will happen before anything is archived.

// errJobsOff: the portal was built without a job manager (handler tests without a store).
var errJobsOff = errors.New("batch jobs are off")

// maxBatchFileBytes bounds an uploaded list (a few thousand contract numbers fit in far less).
const maxBatchFileBytes = 512 << 10

func batchNewVM(numbers string) backoffice.BatchNewVM {
	return backoffice.BatchNewVM{
		MaxItems: jobs.MaxItems,
		Numbers: components.Field{ID: "batch-numbers", Name: "numbers", Label: "Contract numbers", Value: strings.ToValidUTF8(numbers, "\uFFFD"),
			Hint:  fmt.Sprintf("One a line, or separated by commas or spaces; at most %d.", jobs.MaxItems),
			Attrs: map[string]any{"rows": 10, "spellcheck": "false", "autocomplete": "off", "data-testid": "batch-numbers"}},
	}
}

// showBatchNew answers GET /contracts/batch-archive.
func (h *Handler) showBatchNew(c *gin.Context) {
	if h.jobs == nil {
		h.fail(c, errJobsOff)
		return
	}
	h.renderBatchNew(c, http.StatusOK, batchNewVM(""))
}

func (h *Handler) renderBatchNew(c *gin.Context, status int, vm backoffice.BatchNewVM) {
	list, err := h.jobs.List(c.Request.Context(), auth.CurrentUser(c).Subject)
	if err != nil {
		h.log(c).Warn("batch archive: listing the user's batches failed", "err", err)
	}
	for _, j := range list {
		if j.Status == jobs.StatusDraft {
			continue
		}
		counts := j.Counts()
		vm.Batches = append(vm.Batches, backoffice.BatchSummary{URL: batchPath(j.ID), Created: j.CreatedAt.Format("2 Jan 2006 15:04 UTC"),
			Status: batchStatusText(j), Counts: fmt.Sprintf("%d done, %d failed, %d left of %d", counts.Done, counts.Failed, counts.Left, counts.Total)})
	}
	h.renderPage(c, status, "Batch archive", layout.SectionContracts, backoffice.BatchNewPage(vm))
}

func batchPath(id string) string { return "/contracts/batch-archive/" + id }

// checkBatch answers POST /contracts/batch-archive: reads the numbers (textarea or file), checks
// each on the v2 API with the user's token (bounded concurrency) and stores a draft batch.
func (h *Handler) checkBatch(c *gin.Context) {
	if h.jobs == nil {
		h.fail(c, errJobsOff)
		return
	}
	// Read the form first, so a body over the limit answers 413 (not "no numbers").
	var formErr error
	if strings.HasPrefix(c.ContentType(), "multipart/") {
		formErr = c.Request.ParseMultipartForm(maxBatchFileBytes)
	} else {
		formErr = c.Request.ParseForm()
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(formErr, &tooLarge):
		h.fail(c, formErr)
		return
	case formErr != nil:
		h.fail(c, badRequest("error.form_unreadable"))
		return
	}
	text := c.PostForm("numbers")
	vm := batchNewVM(text)
	entries := jobs.ParseText(text)
	if header, err := c.FormFile("file"); err == nil && header.Size > 0 {
		entries, vm.FileError = nil, ""
		if header.Size > maxBatchFileBytes {
			vm.FileError = fmt.Sprintf("The file is too large (at most %s).", formatBytes(maxBatchFileBytes))
		} else if f, err := header.Open(); err != nil {
			vm.FileError = "The file could not be read."
		} else {
			data, readErr := io.ReadAll(io.LimitReader(f, maxBatchFileBytes+1))
			_ = f.Close()
			if readErr != nil {
				vm.FileError = "The file could not be read."
			} else if entries, err = jobs.ParseFile(header.Filename, data); err != nil {
				vm.FileError = "The file cannot be used: " + err.Error() + "."
			}
		}
		if vm.FileError == "" && len(entries) == 0 {
			vm.FileError = "The file has no contract numbers."
		}
	} else if len(entries) == 0 {
		vm.Numbers.Error = "Enter at least one contract number, or upload a file."
	}
	if vm.FileError == "" && vm.Numbers.Error == "" && len(entries) > jobs.MaxItems {
		vm.Numbers.Error = fmt.Sprintf("At most %d contract numbers at a time (%d given): split the list.", jobs.MaxItems, len(entries))
	}
	if vm.FileError != "" || vm.Numbers.Error != "" {
		vm.Errors = components.SummaryFrom(vm.Numbers)
		if vm.FileError != "" {
			vm.Errors = append(vm.Errors, components.FieldError{FieldID: "batch-file", Message: vm.FileError})
		}
		h.renderBatchNew(c, http.StatusUnprocessableEntity, vm)
		return
	}
	items, err := jobs.Validate(c.Request.Context(), entries, h.cfg.BatchConcurrency, jobs.V2{API: h.api}.Lookup(auth.AccessToken(c)))
	if err != nil {
		h.fail(c, fmt.Errorf("batch archive: check the list: %w", err))
		return
	}
	user := auth.CurrentUser(c)
	job, err := h.jobs.Create(c.Request.Context(), user.Subject, user.Name, items)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, batchPath(job.ID))
}
