package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// generateConfirmation is what the page asks before "Generate contract": the question, with the
// quote's customer, carts and totals as the v2 API answers them now, and the state it describes
// (changeTag of the quote's fingerprint), sent back with the POST so the contract is generated
// only from the quote the person confirmed.
type generateConfirmation struct {
	Question string `json:"question"`
	State    string `json:"state"`
}

// confirmGenerate answers GET /quotes/:cpqId/:customerId/:quoteId/contract/confirm (app.js asks
// it when the person clicks "Generate contract", [data-confirm-url]): the confirmation read fresh
// (call 10), never the one rendered with the page, which another tab's change may have outdated.
func (h *Handler) confirmGenerate(c *gin.Context) {
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
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, generateConfirmation{
		Question: h.generateSummary(c.Request.Context(), tr(c), ref, quote),
		State:    changeTag(digestOf(quote)),
	})
}
