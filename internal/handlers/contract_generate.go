package handlers

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
)

// generateContract answers POST /quotes/:cpqId/:customerId/:quoteId/contract: it generates the
// quote's contract (POST /v2/contract/{quoteId}/generate) and answers the documents region with the
// result: the contract's number, links to its page and PDF, and the PDF preview. The service may
// answer with the contract document or with the PDF itself (docs/v2-assumptions.md A7); both work.
func (h *Handler) generateContract(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	// The contract is generated only from the quote the person confirmed (issue 33): the quote is
	// read (call 10) before the generation, and when its state is not the one the confirmation
	// described (confirmGenerate; missing counts as not confirmed), nothing is generated and the
	// answer is the confirmation of the quote as it is now (409), to confirm anew. The same read
	// builds the documents region afterwards: generating changes no attachment, and the contract
	// comes from the answer. Only an answer that names no contract (a bare PDF, A7) makes the
	// quote be read again, after it. The v2 API has no conditional generation, so a change in the
	// milliseconds between this read and the call cannot be refused; it shows in the contract.
	quote, err := h.loadQuote(ctx, ref)
	if err != nil {
		h.fail(c, err)
		return
	}
	if confirmed := formValue(c, "confirmed"); confirmed == "" || confirmed != changeTag(digestOf(quote)) {
		h.log(c).Info("contract not generated: the quote is not the one confirmed", slog.Int64("quote_id", ref.QuoteID), slog.Bool("confirmed", confirmed != ""))
		vm := h.documentsVM(c.Request.Context(), tr(c), ref, quote)
		vm.Changed = h.generateSummary(c.Request.Context(), tr(c), ref, quote)
		announce(c, t(c, "documents.generate.changed"))
		h.render(c, http.StatusConflict, contracts.DocumentsPartial(vm))
		return
	}
	limit := h.newStartLimit(ctx)
	defer limit.release()
	result, err := h.api.Contracts.Generate(limit.ctx, ref.QuoteID)
	if err = limit.started(err); err != nil {
		h.fail(c, fmt.Errorf("documents: generate the contract of quote %d: %w", ref.QuoteID, err))
		return
	}
	generated := &contracts.GeneratedVM{Created: result.Created, AnsweredWithPDF: result.PDF != nil}
	if result.PDF != nil {
		// The PDF itself is not kept: the contract page downloads it again. It is checked, so a
		// broken answer is reported rather than linked.
		if _, err := checkPDF(result.PDF.Body, "the contract"); err != nil {
			h.log(c).Warn("contract generation answered a PDF that is not one", slog.Int64("quote_id", ref.QuoteID), slog.Any("err", err))
			generated.Warning = i18n.M("documents.generated.not_pdf")
		}
	}
	_ = result.Close()

	if result.ContractID < 1 && (quote.Contract == nil || quote.Contract.ContractID < 1) {
		quote, err = h.loadQuote(ctx, ref)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	h.indexGenerated(c, ref, quote, result)
	vm := h.documentsVM(c.Request.Context(), tr(c), ref, quote)
	vm.Generated = generated
	if vm.Contract == nil && result.ContractID >= 1 {
		vm.Contract = contractLink(result.ContractID, result.ContractNumber)
	}
	if vm.Contract == nil {
		h.fail(c, fmt.Errorf("documents: generate the contract of quote %d: %w: the answer names no contract", ref.QuoteID, apiclient.ErrMalformedResponse))
		return
	}
	message := t(c, "documents.generated.toast", vm.Contract.Number)
	if !result.Created {
		message = t(c, "documents.existing.toast", vm.Contract.Number)
	}
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, vm.Contract.URL)
		return
	}
	h.toast(c, components.ToastSuccess, message)
	announce(c, message)
	h.render(c, http.StatusOK, contracts.DocumentsPartial(vm))
}
