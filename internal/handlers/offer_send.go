package handlers

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/offer"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
)

// sendOffer answers POST /quotes/:cpqId/:customerId/:quoteId/offer (form field lang): the offer is
// made and stored on the quote through the v2 attachment call, type QUOTE_PDF
// (docs/v2-assumptions.md A6), so the v2 API keeps it with the quote's documents. htmx gets the
// documents region back (the offer listed, the notice of the latest offer), a plain form is
// redirected to the documents page.
func (h *Handler) sendOffer(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	// A URL-encoded form (the page's, with or without htmx); a body over the limit fails here (413).
	if err := c.Request.ParseForm(); err != nil {
		h.fail(c, fmt.Errorf("offer: read the form: %w", err))
		return
	}
	made, err := h.makeOffer(c, ref, c.Request.PostForm.Get(offerLangField))
	if err != nil {
		h.fail(c, err)
		return
	}
	attachment, err := h.api.Attachments.Upload(h.apiContext(c), ref.QuoteID, offer.AttachmentType, made.fileName,
		offer.ContentType, int64(len(made.pdf)), bytes.NewReader(made.pdf))
	if err != nil {
		h.fail(c, fmt.Errorf("offer: store on quote %d: %w", ref.QuoteID, err))
		return
	}
	h.log(c).Info("offer stored", slog.Int64("quote_id", ref.QuoteID), slog.Int("attachment_id", int(attachment.AttachmentID)),
		slog.String("lang", made.lang), slog.Int("bytes", len(made.pdf)))

	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, ref.URL()+"/documents")
		return
	}
	quote, err := h.loadQuote(h.apiContext(c), ref)
	if err != nil {
		h.fail(c, err)
		return
	}
	message := t(c, "offer.sent", made.fileName)
	h.toast(c, components.ToastSuccess, message)
	announce(c, message)
	h.render(c, http.StatusOK, contracts.DocumentsPartial(h.documentsVM(c.Request.Context(), tr(c), ref, quote)))
}
