package handlers

import (
	"fmt"
	"strconv"

	"github.com/gin-gonic/gin"
)

// downloadAttachment answers GET /quotes/:cpqId/:customerId/:quoteId/attachments/:attachmentId:
// the stored file, streamed from the v2 API to the browser (io.Copy, nothing buffered) with its
// Content-Type (active types such as HTML sent as application/octet-stream), Content-Length and a
// sanitised file name as an attachment.
func (h *Handler) downloadAttachment(c *gin.Context) {
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
	limit := h.newStartLimit(h.apiContext(c))
	defer limit.release()
	download, err := h.api.Attachments.Download(limit.ctx, attachmentID, ref.QuoteID)
	if err = limit.started(err); err != nil {
		h.fail(c, fmt.Errorf("documents: download attachment %d of quote %d: %w", attachmentID, ref.QuoteID, err))
		return
	}
	defer download.Close()
	if download.FileName == "" {
		// A stored file is answered as an attachment with its name (docs/v2-assumptions.md A6); an
		// answer without one is an error page or a proxy's answer, not the file.
		h.failDocument(c, errBrokenFile(fmt.Errorf("attachment %d: answer without Content-Disposition filename (%s)", attachmentID, download.ContentType)))
		return
	}
	err = h.streamFile(c, fileResponse{
		contentType: downloadContentType(download.ContentType),
		length:      download.ContentLength,
		disposition: "attachment",
		fileName:    safeFileName(download.FileName, t(c, "attachments.file_fallback", strconv.Itoa(int(attachmentID)))),
	}, download.Body)
	if err != nil {
		h.failDocument(c, errBrokenFile(err))
	}
}
