package handlers

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
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

func batchNewVM(tr *i18n.Translator, numbers string) backoffice.BatchNewVM {
	return backoffice.BatchNewVM{
		MaxItems: jobs.MaxItems,
		Numbers: components.Field{ID: "batch-numbers", Name: "numbers", Label: tr.T("batch.field.numbers"), Value: strings.ToValidUTF8(numbers, "\uFFFD"),
			Hint:  tr.T("batch.field.numbers_hint", jobs.MaxItems),
			Attrs: map[string]any{"rows": 10, "spellcheck": "false", "autocomplete": "off", "data-testid": "batch-numbers"}},
	}
}

// showBatchNew answers GET /contracts/batch-archive.
func (h *Handler) showBatchNew(c *gin.Context) {
	if h.jobs == nil {
		h.fail(c, errJobsOff)
		return
	}
	h.renderBatchNew(c, http.StatusOK, batchNewVM(tr(c), ""))
}

func (h *Handler) renderBatchNew(c *gin.Context, status int, vm backoffice.BatchNewVM) {
	list, lost, err := h.jobs.Overview(c.Request.Context(), auth.CurrentUser(c).Subject)
	if err != nil {
		h.log(c).Warn("batch archive: listing the user's batches failed", "err", err)
	}
	for _, j := range list {
		if j.Status == jobs.StatusDraft {
			continue
		}
		counts := j.Counts()
		vm.Batches = append(vm.Batches, backoffice.BatchSummary{URL: batchPath(j.ID), Created: j.CreatedAt,
			Status: batchStatusText(tr(c), j), Counts: t(c, "batch.list.counts", counts.Done, counts.Failed, counts.Left, counts.Total)})
	}
	// Batches the user's own index still names but the store lost: listed as such, never dropped
	// silently (their page says what that means and what to do).
	for _, id := range lost {
		vm.Batches = append(vm.Batches, backoffice.BatchSummary{URL: batchPath(id), Lost: true})
	}
	h.renderPage(c, status, t(c, "batch.title"), layout.SectionContracts, backoffice.BatchNewPage(vm))
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
	// One textarea, or one value per contract selected on the contracts list ("Archive selected"),
	// every contract of the list's page ("Select all on this page") or of the list ("Archive all N
	// matching": its filters, resolved here).
	numbers := c.PostFormArray("numbers")
	if c.PostForm("all_on_page") == "1" {
		numbers = c.PostFormArray("page_numbers")
	}
	matchingLeft := 0
	if c.PostForm("matching") == "1" {
		var err error
		if numbers, matchingLeft, err = h.matchingContractNumbers(c, c.PostForm("filters")); err != nil {
			h.fail(c, err)
			return
		}
	}
	text := strings.Join(numbers, "\n")
	vm := batchNewVM(tr(c), text)
	vm.IncludeUnsent = c.PostForm("include_unsent") == "1"
	entries := jobs.ParseText(text)
	usedFile := false
	if header, err := c.FormFile("file"); err == nil && header.Size > 0 {
		usedFile = true
		entries, vm.FileError = nil, i18n.Message{}
		if header.Size > maxBatchFileBytes {
			vm.FileError = i18n.M("batch.file.too_large", formatBytes(maxBatchFileBytes))
		} else if f, err := header.Open(); err != nil {
			vm.FileError = i18n.M("batch.file.unreadable")
		} else {
			data, readErr := io.ReadAll(io.LimitReader(f, maxBatchFileBytes+1))
			_ = f.Close()
			if readErr != nil {
				vm.FileError = i18n.M("batch.file.unreadable")
			} else {
				var stop error
				if entries, vm.FileError, stop = h.parseBatchFile(c, header.Filename, data); stop != nil {
					h.fail(c, stop)
					return
				}
			}
		}
		if vm.FileError.IsZero() && len(entries) == 0 {
			vm.FileError = i18n.M("batch.file.empty")
		}
	} else if len(entries) == 0 && c.PostForm("matching") == "1" && matchingLeft > 0 {
		vm.Numbers.Error = t(c, "work.contracts.matching_none", matchingLeft)
	} else if len(entries) == 0 && c.PostForm("matching") == "1" {
		vm.Numbers.Error = t(c, "work.contracts.matching_empty")
	} else if len(entries) == 0 {
		vm.Numbers.Error = t(c, "batch.error.no_numbers")
	}
	if vm.FileError.IsZero() && vm.Numbers.Error == "" && len(entries) > jobs.MaxItems {
		vm.Numbers.Error = t(c, "batch.error.too_many", jobs.MaxItems, len(entries))
	}
	if !vm.FileError.IsZero() || vm.Numbers.Error != "" {
		vm.Errors = components.SummaryFrom(vm.Numbers)
		if !vm.FileError.IsZero() {
			vm.Errors = append(vm.Errors, components.FieldError{FieldID: "batch-file", Message: vm.FileError.In(tr(c))})
		}
		h.renderBatchNew(c, http.StatusUnprocessableEntity, vm)
		return
	}
	items, err := jobs.Validate(c.Request.Context(), entries, h.cfg.BatchConcurrency, h.batchLookup(c, auth.AccessToken(c)))
	if err != nil {
		h.fail(c, fmt.Errorf("batch archive: check the list: %w", err))
		return
	}
	leftOut := 0
	if !vm.IncludeUnsent {
		leftOut = leaveOutUnsigned(items) // work_batch.go, docs/backoffice.md
	}
	user := auth.CurrentUser(c)
	job, err := h.jobs.Create(c.Request.Context(), user.Subject, user.Name, items)
	var quota *jobs.QuotaError
	switch {
	case errors.Is(err, jobs.ErrNothingToArchive):
		// No draft is stored for a list with nothing to archive: the form says why, line by line.
		vm.Numbers.Error = nothingToArchive(tr(c), items)
		if leftOut > 0 {
			// Contracts left out for their stage: the form offers to include them. The numbers of an
			// uploaded file are put in the box, so ticking it and checking again needs no new upload.
			vm.Numbers.Error += " " + t(c, "work.batch.nothing_include_hint")
			if strings.TrimSpace(vm.Numbers.Value) == "" || usedFile {
				vm.Numbers.Value = strings.ToValidUTF8(entryNumbers(entries), "\uFFFD")
			}
		}
		vm.Errors = components.SummaryFrom(vm.Numbers)
		h.renderBatchNew(c, http.StatusUnprocessableEntity, vm)
		return
	case errors.As(err, &quota):
		vm.Numbers.Error = quota.Message.In(tr(c))
		vm.Errors = components.SummaryFrom(vm.Numbers)
		h.renderBatchNew(c, http.StatusTooManyRequests, vm)
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, batchPath(job.ID))
}

// parseBatchFile reads an uploaded list within the limits of a read (upload_parse.go): the
// entries, or the message for the form, or an error that ends the request (the person has a read
// in flight, the replica is busy, the read was cancelled).
func (h *Handler) parseBatchFile(c *gin.Context, name string, data []byte) ([]jobs.Entry, i18n.Message, error) {
	ctx, done, err := h.startParse(c)
	if err != nil {
		return nil, i18n.Message{}, err
	}
	defer done()
	entries, err := jobs.ParseFile(ctx, name, data)
	var unusable *jobs.InputError
	switch {
	case errors.As(err, &unusable):
		return nil, i18n.M("batch.file.unusable", unusable.Message.In(tr(c))), nil
	case errors.Is(err, jobs.ErrReadCancelled):
		return nil, i18n.Message{}, h.readCancelled(c, err)
	case err != nil:
		return nil, i18n.M("batch.file.unreadable"), nil
	}
	return entries, i18n.Message{}, nil
}

// nothingToArchive says why no line of the list can be archived: how many are archived already,
// how many were left out, and the first few problems with their lines.
func nothingToArchive(tr *i18n.Translator, items []jobs.Item) string {
	done, problems := 0, []string{}
	for _, it := range items {
		switch {
		case it.Status == jobs.ItemDone:
			done++
		case it.Status == jobs.ItemRejected && len(problems) < 3:
			problems = append(problems, tr.T("batch.error.line_problem", it.Line, it.ProblemMessage().In(tr)))
		}
	}
	msg := tr.T("batch.error.nothing_to_archive", len(items), done, len(items)-done)
	if len(problems) > 0 {
		msg += " " + strings.Join(problems, "; ")
	}
	return msg
}

// entryNumbers is the list's numbers, one a line.
func entryNumbers(entries []jobs.Entry) string {
	numbers := make([]string, len(entries))
	for i, e := range entries {
		numbers[i] = e.Number
	}
	return strings.Join(numbers, "\n")
}
