package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// confirmation is what the page asks before a change that cannot be undone, read when the person
// acts (app.js, [data-confirm-url]) so it states the facts as they are then: the question, the
// state it describes (for "Generate contract": changeTag of the quote's fingerprint, sent back
// with the POST so the contract is generated only from the quote the person confirmed), and
// Refused when there is nothing left to do (the question then says why; nothing is sent), or
// Unasked when there is nothing to ask because the request's own checks refuse what was typed
// (the request is sent and answers with the field's message).
type confirmation struct {
	Question string `json:"question,omitempty"`
	State    string `json:"state,omitempty"`
	Refused  bool   `json:"refused,omitempty"`
	Unasked  bool   `json:"unasked,omitempty"`
}

// answerConfirmation writes a confirmation; it is never cached, since it is the state of now.
func answerConfirmation(c *gin.Context, answer confirmation) {
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, answer)
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
	answerConfirmation(c, confirmation{
		Question: h.generateSummary(c.Request.Context(), tr(c), ref, quote),
		State:    changeTag(digestOf(quote)),
	})
}
