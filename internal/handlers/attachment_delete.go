package handlers

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
)

// deleteAttachment answers DELETE /quotes/:cpqId/:customerId/:quoteId/attachments/:attachmentId
// (the page asks for confirmation first: confirmDeleteAttachment) with the updated attachment list.
func (h *Handler) deleteAttachment(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	attachmentID, err := parseInt32ID(c, "attachmentId")
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	if err := h.api.Attachments.Delete(ctx, attachmentID, ref.QuoteID); err != nil {
		h.fail(c, fmt.Errorf("documents: delete attachment %d of quote %d: %w", attachmentID, ref.QuoteID, err))
		return
	}
	quote, err := h.loadQuote(ctx, ref)
	if err != nil {
		h.fail(c, err)
		return
	}
	message := t(c, "attachments.deleted", strconv.Itoa(int(attachmentID)))
	h.toast(c, components.ToastSuccess, message)
	announce(c, message)
	h.render(c, http.StatusOK, contracts.AttachmentList(h.documentsVM(c.Request.Context(), tr(c), ref, quote)))
}

// confirmDeleteAttachment answers GET .../attachments/:attachmentId/confirm, the question asked
// when the person clicks "Delete" (app.js, [data-confirm-url]): the attachment as the quote lists
// it now (call 10: its name, type and size), or, when it is no longer there (a colleague deleted
// it), that there is nothing to delete (refused: nothing is sent).
func (h *Handler) confirmDeleteAttachment(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	attachmentID, err := parseInt32ID(c, "attachmentId")
	if err != nil {
		h.fail(c, err)
		return
	}
	quote, err := h.loadQuote(h.apiContext(c), ref)
	if err != nil {
		h.fail(c, err)
		return
	}
	trl := tr(c)
	for _, a := range quote.Attachments {
		if a.AttachmentID != attachmentID {
			continue
		}
		name := safeFileName(a.FileName, trl.T("attachments.file_fallback", strconv.Itoa(int(a.AttachmentID))))
		answerConfirmation(c, confirmation{Question: trl.T("attachments.delete.confirm", name,
			contracts.AttachmentTypeLabel(trl, a.AttachmentType), formatBytes(a.Size).In(trl))})
		return
	}
	answerConfirmation(c, confirmation{Question: trl.T("attachments.delete.gone"), Refused: true})
}
