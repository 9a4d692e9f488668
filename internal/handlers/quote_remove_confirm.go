package handlers

import (
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
)

// Removing a cart or a line cannot be undone, so its question is read when the person clicks
// (app.js, [data-confirm-url]) from the quote as the v2 API answers it now (call 10): the cart's
// quantity and totals of now, not of when the page was rendered; a cart or line someone removed
// meanwhile is refused with why, and nothing is sent. The removal itself still carries the page's
// digest, so the stale check refuses it if the quote changed after the question (issue 33).

// confirmRemoveCart answers GET /quotes/:cpqId/:customerId/:quoteId/carts/:basketId/confirm.
func (h *Handler) confirmRemoveCart(c *gin.Context) {
	quote, basketID, ok := h.quoteForRemoval(c)
	if !ok {
		return
	}
	trl := tr(c)
	cart, found := quote.Cart(basketID)
	if !found {
		answerConfirmation(c, confirmation{Question: trl.T("quote.cart.remove_gone"), Refused: true})
		return
	}
	answerConfirmation(c, confirmation{Question: trl.T("quote.cart.remove_confirm", i18n.Isolate(cartTitle(trl, cart)), cart.Quantity,
		trl.Money(cents(cart.Totals.NetActivation), "EUR"), trl.Money(cents(cart.Totals.NetRecurring), "EUR"))})
}

// confirmRemoveItem answers GET .../carts/:basketId/items/:itemId/parent/:parentId/confirm.
func (h *Handler) confirmRemoveItem(c *gin.Context) {
	quote, basketID, ok := h.quoteForRemoval(c)
	if !ok {
		return
	}
	_, itemID, err := itemParams(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	parentID, err := parseInt64ID(c, "parentId")
	if err != nil {
		h.fail(c, err)
		return
	}
	trl := tr(c)
	cart, found := quote.Cart(basketID)
	var item *apiclient.Item
	if found {
		item, found = findItem(cart, itemID)
	}
	// The main product is removed with its cart, never alone; a line moved under another parent is
	// not the one the page showed.
	if !found || item == cart.Root || item.ParentID != parentID {
		answerConfirmation(c, confirmation{Question: trl.T("quote.line.remove_gone"), Refused: true})
		return
	}
	answerConfirmation(c, confirmation{Question: trl.T("quote.line.remove_confirm", i18n.Isolate(item.Name), i18n.Isolate(cartTitle(trl, cart)))})
}

// quoteForRemoval reads the path's ids (400 before any v2 call when malformed) and the quote.
func (h *Handler) quoteForRemoval(c *gin.Context) (*apiclient.Quote, int64, bool) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return nil, 0, false
	}
	basketID, err := parseInt64ID(c, "basketId")
	if err != nil {
		h.fail(c, err)
		return nil, 0, false
	}
	quote, err := h.loadQuote(h.apiContext(c), ref)
	if err != nil {
		h.fail(c, err)
		return nil, 0, false
	}
	return quote, basketID, true
}
