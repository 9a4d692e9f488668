package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/filetype"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// attachmentURL is the portal path of one attachment of quote q (GET downloads, DELETE deletes).
func attachmentURL(q quotes.Ref, attachmentID int32) string {
	return q.Sub("/attachments/%d", attachmentID)
}

// loadQuote reads the quote document (call 10, made without X-SessionId).
func (h *Handler) loadQuote(ctx context.Context, ref quotes.Ref) (*apiclient.Quote, error) {
	quote, err := h.api.CPQ.TOFList(ctx, ref.CPQID, ref.CustomerID, ref.QuoteID)
	if err != nil {
		return nil, fmt.Errorf("documents: read quote %d: %w", ref.QuoteID, err)
	}
	return quote, nil
}

// documentsVM builds the documents region from the quote document.
func (h *Handler) documentsVM(ctx context.Context, tr *i18n.Translator, ref quotes.Ref, quote *apiclient.Quote) contracts.DocumentsVM {
	vm := contracts.DocumentsVM{
		CPQID:           ref.CPQID,
		CustomerID:      ref.CustomerID,
		QuoteID:         ref.QuoteID,
		BaseURL:         ref.URL(),
		UploadLimit:     h.cfg.UploadLimit,
		UploadLimitText: formatBytes(h.cfg.UploadLimit).In(tr),
		AcceptedKinds:   acceptedKindsText,
		Accept:          strings.Join(filetype.Extensions(), ","),
		HasCarts:        len(quote.Carts) > 0,
		AuditURL:        auditURL(ref.QuoteID),
	}
	for _, t := range apiclient.AttachmentTypes() {
		vm.Types = append(vm.Types, components.Option{Value: t, Label: contracts.AttachmentTypeLabel(tr, t)})
	}
	for _, a := range quote.Attachments {
		if a.AttachmentID < 1 {
			continue // no usable id: it could not be downloaded or deleted
		}
		vm.Attachments = append(vm.Attachments, contracts.AttachmentRow{
			ID:          a.AttachmentID,
			Type:        a.AttachmentType,
			TypeLabel:   contracts.AttachmentTypeLabel(tr, a.AttachmentType),
			FileName:    safeFileName(a.FileName, tr.T("attachments.file_fallback", strconv.Itoa(int(a.AttachmentID)))),
			ContentType: a.ContentType,
			Size:        a.Size,
			SizeText:    formatBytes(a.Size).In(tr),
			CreatedAt:   a.CreatedAt,
			SHA256:      a.SHA256,
			DownloadURL: attachmentURL(ref, a.AttachmentID),
		})
	}
	if quote.Contract != nil && quote.Contract.ContractID >= 1 {
		vm.Contract = contractLink(quote.Contract.ContractID, quote.Contract.ContractNumber)
	}
	vm.Offer = h.offerVM(tr, ref, quote)
	return vm
}

// contractLink names a contract with the portal URLs of its page, PDF and preview.
func contractLink(id int32, number string) *contracts.ContractLink {
	url := contractPath(id)
	if number == "" {
		number = "#" + strconv.Itoa(int(id))
	}
	return &contracts.ContractLink{ID: id, Number: number, URL: url, PDFURL: url + "/pdf", PreviewURL: url + "/pdf?inline=1"}
}

// contractPath is the portal path of a contract's page.
func contractPath(id int32) string {
	return "/contracts/" + strconv.Itoa(int(id))
}

// auditURL is the portal path of a quote's validation audit.
func auditURL(quoteID int64) string {
	return "/audits/" + strconv.FormatInt(quoteID, 10)
}

// showQuoteDocuments answers GET /quotes/:cpqId/:customerId/:quoteId/documents: the documents region
// of a quote (attachments, upload form, contract). The quote page loads it with htmx; opened
// directly it is a page of its own.
func (h *Handler) showQuoteDocuments(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	quote, err := h.loadQuote(h.apiContext(c), ref)
	if err != nil {
		h.fail(c, err)
		return
	}
	vm := h.documentsVM(c.Request.Context(), tr(c), ref, quote)
	if isHTMX(c) {
		h.render(c, http.StatusOK, contracts.DocumentsPartial(vm))
		return
	}
	h.renderPage(c, http.StatusOK, t(c, "documents.page_title", strconv.FormatInt(ref.QuoteID, 10)), layout.SectionQuotes, contracts.DocumentsPage(vm))
}
