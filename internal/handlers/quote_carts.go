package handlers

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Cart actions on a quote: add a cart (call 4), remove one (call 7), change its quantity (call 8)
// and its price list (call 16). Each answers only the regions it changed.

// quoteAction is what every action on a quote starts with: its address, the user's configuration
// session key and what the page showed before (the fingerprint, quote_digest.go).
type quoteAction struct {
	ref  quotes.Ref
	key  session.CPQKey
	prev quoteDigest
}

// beginQuoteAction reads the quote's address and the form; on error it has answered.
func (h *Handler) beginQuoteAction(c *gin.Context) (*quoteAction, bool) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return nil, false
	}
	if err := parseForm(c); err != nil {
		h.fail(c, err)
		return nil, false
	}
	return &quoteAction{ref: ref, key: cpqKeyOf(ref), prev: prevDigest(c)}, true
}

// session returns the configuration session of the quote, starting one when needed; on error it
// has answered.
func (h *Handler) actionSession(c *gin.Context, a *quoteAction) (string, bool) {
	sessionID, err := h.cpqSession(c, a.key)
	if err != nil {
		h.fail(c, err)
		return "", false
	}
	return sessionID, true
}

// respondUpdate answers a successful change: a toast saying what happened, the new total for
// screen readers, and the changed regions.
func (h *Handler) respondUpdate(c *gin.Context, q *apiclient.Quote, vm quotes.UpdateVM, message string) {
	h.changes.ObserveBy(quoteWatchKey(vm.Ref), customerCacheKey(c), vm.DigestTag) // other viewers learn of it at their next poll
	h.indexQuote(c, vm.Ref.CPQID, vm.Ref.CustomerID, q, "", "", workindex.ActChanged)
	// The toast states the new total too: the person may be far from the summary (issue 26).
	message += " " + totalText(tr(c), q)
	h.toast(c, components.ToastSuccess, message)
	announce(c, message)
	h.render(c, http.StatusOK, quotes.UpdatePartial(vm))
}

// cartUpdate answers a change of one cart: that cart, the summary, the fingerprint.
func (h *Handler) cartUpdate(c *gin.Context, a *quoteAction, q *apiclient.Quote, basketID int64, focus bool, message string) {
	v := newQuoteView(tr(c), a.ref, q, a.prev)
	vm := v.update()
	cart, ok := q.Cart(basketID)
	if !ok || isReplay(c) {
		// The cart is gone (removed meanwhile, e.g. from another tab): show every cart instead.
		c.Header("HX-Retarget", "#quote-carts")
		c.Header("HX-Reswap", "outerHTML")
		carts := v.carts(true)
		vm.Carts = &carts
	} else {
		cvm := v.cart(cart)
		cvm.Focus = focus
		vm.Cart = &cvm
	}
	h.respondUpdate(c, q, vm, message)
}

// cartsUpdate answers a change of the quote's carts or of every cart's prices: all carts, the
// summary, the fingerprint, and optionally an emptied panel. focus moves keyboard focus to the
// carts heading (the focused control is gone), focusBasket to that cart's heading.
func (h *Handler) cartsUpdate(c *gin.Context, a *quoteAction, q *apiclient.Quote, focus bool, focusBasket int64, clearPanel, message string) {
	v := newQuoteView(tr(c), a.ref, q, a.prev)
	vm := v.update()
	carts := v.carts(focus)
	for i := range carts.Carts {
		carts.Carts[i].Focus = carts.Carts[i].BasketID == focusBasket
	}
	vm.Carts = &carts
	vm.ClearPanel = clearPanel
	if clearPanel != "" && !focus && focusBasket == 0 {
		// The panel and its button are gone: the focus goes to the summary, which shows the new total.
		vm.Summary.Focus = true
	}
	if isReplay(c) {
		c.Header("HX-Retarget", "#quote-carts")
		c.Header("HX-Reswap", "outerHTML")
	}
	h.respondUpdate(c, q, vm, message)
}

// showAddCart is GET .../carts/new?tofId=: the TOF's products (call 9) and the cart that call 4
// will add (the TOF's default main product: docs/v2-assumptions.md A5 #4).
func (h *Handler) showAddCart(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	tofID, err := queryID32(c, "tofId")
	if err != nil {
		h.fail(c, err)
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	products, err := h.api.CPQ.ValidProducts(h.apiContext(c), sessionID, a.ref.CPQID, tofID)
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), "", nil, fmt.Errorf("valid products of TOF %d: %w", tofID, err))
		return
	}
	vm := quotes.AddCartVM{Ref: a.ref, TOF: quotes.TOF{ID: tofID, Name: t(c, "quote.tof.numbered_lower", idText(tofID))}}
	if name := tofNameOf(c); name != "" {
		vm.TOF.Name = name
	}
	for _, p := range products {
		pvm := productVM(p)
		vm.Products = append(vm.Products, pvm)
		if p.Kind == "MAIN" && p.Default && vm.Default == nil {
			vm.Default = &pvm
		}
	}
	h.render(c, http.StatusOK, quotes.AddCartPanel(vm))
}

// addCart is POST .../carts (tofId): call 4 adds a cart with the TOF's default main product.
func (h *Handler) addCart(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	tofID, ok := formID32(formValue(c, "tofId"))
	if !ok {
		h.fail(c, badRequest("quote.error.offer_type"))
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	q, err := h.api.CPQ.AddCartToQuote(h.apiContext(c), sessionID, a.ref.CPQID, tofID, a.ref.QuoteID)
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), "", nil, fmt.Errorf("add cart of TOF %d to quote %d: %w", tofID, a.ref.QuoteID, err))
		return
	}
	message := t(c, "quote.toast.cart_added")
	var added int64
	if n := len(q.Carts); n > 0 && q.Carts[n-1].Root != nil {
		message = t(c, "quote.toast.cart_added_with", i18n.Isolate(q.Carts[n-1].Root.Name))
		added = q.Carts[n-1].BasketID
	}
	h.cartsUpdate(c, a, q, false, added, "quote-add-cart-panel", message)
}

// removeCart is DELETE .../carts/:basketId: call 7, then the quote again (call 10: call 7
// answers no document).
func (h *Handler) removeCart(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	basketID, err := parseInt64ID(c, "basketId")
	if err != nil {
		h.fail(c, err)
		return
	}
	if !h.ensureCurrent(c, a, staleCheck{pending: t(c, "quote.pending.remove_cart", idText(basketID)), exists: hasCart(basketID)}) {
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	ctx := h.apiContext(c)
	if err := h.api.CPQ.RemoveCart(ctx, sessionID, a.ref.CPQID, a.ref.QuoteID, basketID); err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), "", nil, fmt.Errorf("remove cart %d: %w", basketID, err))
		return
	}
	q, err := h.api.CPQ.TOFList(ctx, a.ref.CPQID, a.ref.CustomerID, a.ref.QuoteID)
	if err != nil {
		h.fail(c, fmt.Errorf("cart %d removed; reading the quote again: %w", basketID, err))
		return
	}
	h.cartsUpdate(c, a, q, true, 0, "", t(c, "quote.toast.cart_removed"))
}

// setCartQuantity is POST .../carts/:basketId/quantity (quantity): call 8.
func (h *Handler) setCartQuantity(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	basketID, err := parseInt64ID(c, "basketId")
	if err != nil {
		h.fail(c, err)
		return
	}
	form := "cart-" + strconv.FormatInt(basketID, 10) + "-quantity"
	quantity, msg := parseQuantity(formValue(c, "quantity"))
	if !msg.IsZero() {
		h.badForm(c, form, formErrors{{FieldID: form + "-input", Message: msg.In(tr(c))}})
		return
	}
	if !h.ensureCurrent(c, a, staleCheck{pending: t(c, "quote.pending.quantity", idText(basketID), tr(c).Integer(int64(quantity))), exists: hasCart(basketID)}) {
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	q, err := h.api.CPQ.SetQuantity(h.apiContext(c), sessionID, a.ref.CPQID, a.ref.QuoteID, basketID, quantity)
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), form, map[string]string{"quantity": form + "-input"},
			fmt.Errorf("set quantity of cart %d: %w", basketID, err))
		return
	}
	h.cartUpdate(c, a, q, basketID, false, t(c, "quote.toast.quantity", tr(c).Integer(int64(quantity))))
}

// changeCartPricelist is POST .../carts/:basketId/pricelist (pricelistId): call 16.
func (h *Handler) changeCartPricelist(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	basketID, err := parseInt64ID(c, "basketId")
	if err != nil {
		h.fail(c, err)
		return
	}
	form := "cart-" + strconv.FormatInt(basketID, 10) + "-pricelist"
	pricelistID, ok := formID32(formValue(c, "pricelistId"))
	if !ok {
		h.badForm(c, form, formErrors{{FieldID: form + "-input", Message: t(c, "quote.form.pricelist")}})
		return
	}
	if !h.ensureCurrent(c, a, staleCheck{pending: t(c, "quote.pending.pricelist", idText(basketID)), exists: hasCart(basketID)}) {
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	q, err := h.api.CPQ.ChangePricelist(h.apiContext(c), sessionID, a.ref.CPQID, a.ref.QuoteID,
		apiclient.ChangePricelistRequest{PricelistID: pricelistID, CartID: basketID})
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), form, map[string]string{"pricelistId": form + "-input"},
			fmt.Errorf("change price list of cart %d: %w", basketID, err))
		return
	}
	name := t(c, "quote.pricelist.numbered_lower", idText(pricelistID))
	for _, pl := range q.AvailablePricelists {
		if pl.PricelistID == pricelistID && pl.Name != "" {
			name = pl.Name
		}
	}
	h.cartUpdate(c, a, q, basketID, false, t(c, "quote.toast.pricelist", name))
}

// hasCart reports whether the quote still has the cart (for the stale check).
func hasCart(basketID int64) func(q *apiclient.Quote) bool {
	return func(q *apiclient.Quote) bool {
		_, ok := q.Cart(basketID)
		return ok
	}
}
