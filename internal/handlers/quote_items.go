package handlers

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Item actions of a cart: add a product or add-on under an item (calls 9 and 5), remove an item
// (call 6) and reprice one (call 13).

// itemParams reads :basketId and :itemId.
func itemParams(c *gin.Context) (basketID, itemID int64, err error) {
	if basketID, err = parseInt64ID(c, "basketId"); err != nil {
		return
	}
	itemID, err = parseInt64ID(c, "itemId")
	return
}

// findItem returns the item with nodeID in the cart's tree.
func findItem(cart *apiclient.Cart, nodeID int64) (*apiclient.Item, bool) {
	var found *apiclient.Item
	walkItems(cart.Root, 0, "", func(it *apiclient.Item, _ int, _ string) {
		if it.NodeID == nodeID && found == nil {
			found = it
		}
	})
	return found, found != nil
}

// showAddons is GET .../carts/:basketId/items/:itemId/addons: the add-ons that may sit under the
// item, i.e. the TOF's ADDON products (call 9) whose parentProductIds hold the item's product
// (docs/v2-assumptions.md A5 #5). The item and its cart come from the quote (call 10).
func (h *Handler) showAddons(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	basketID, itemID, err := itemParams(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	// The button names the cart's TOF (?tofId=): its products (call 9) are read beside the quote
	// (call 10) instead of after it (issue 27); the quote still decides, and a TOF that is not the
	// cart's is read again with the right one.
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	askedTOF, _ := formID32(strings.TrimSpace(c.Query("tofId")))
	productsOf := later(func() ([]apiclient.Product, error) {
		if askedTOF == 0 {
			return nil, nil
		}
		return h.api.CPQ.ValidProducts(ctx, sessionID, a.ref.CPQID, askedTOF)
	})
	defer productsOf() //nolint:errcheck // waited for on every path; the result is read below
	q, err := h.api.CPQ.TOFList(ctx, a.ref.CPQID, a.ref.CustomerID, a.ref.QuoteID)
	if err != nil {
		h.fail(c, fmt.Errorf("get quote %d: %w", a.ref.QuoteID, err))
		return
	}
	cart, ok := q.Cart(basketID)
	if !ok {
		h.fail(c, badRequest("quote.error.cart_gone", basketID))
		return
	}
	parent, ok := findItem(cart, itemID)
	if !ok {
		h.fail(c, badRequest("quote.error.item_gone", itemID))
		return
	}
	products, err := productsOf()
	if askedTOF != cart.TOFID {
		products, err = h.api.CPQ.ValidProducts(ctx, sessionID, a.ref.CPQID, cart.TOFID)
	}
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), "", nil, fmt.Errorf("valid products of TOF %d: %w", cart.TOFID, err))
		return
	}
	vm := quotes.AddonsVM{Ref: a.ref, BasketID: basketID, TOFID: cart.TOFID, ParentID: itemID, ParentName: parent.Name}
	for _, p := range products {
		if p.Kind == "ADDON" && slices.Contains(p.ParentProductIDs, parent.ProductID) {
			vm.Addons = append(vm.Addons, productVM(p))
		}
	}
	h.render(c, http.StatusOK, quotes.AddonsPanel(vm))
}

// addItem is POST .../carts/:basketId/items/:itemId/addons (tofId, productId): call 5 adds the
// add-on under the item, with a new itemUniqueId. Its tofProductId comes from call 9.
func (h *Handler) addItem(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	basketID, parentID, err := itemParams(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	form := fmt.Sprintf("line-%d-addon-form", parentID)
	productID, okProduct := formID32(formValue(c, "productId"))
	tofID, okTOF := formID32(formValue(c, "tofId"))
	switch {
	case !okTOF:
		h.fail(c, badRequest("quote.error.offer_type_missing"))
		return
	case !okProduct:
		h.badForm(c, form, formErrors{{FieldID: form + "-choices", Message: t(c, "quote.form.addon")}})
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	// The add-on's TOF product id (call 9) is read beside the stale check (call 10): both only
	// read, and call 5 goes only once the check has passed (issue 27).
	ctx := h.apiContext(c)
	productsOf := later(func() ([]apiclient.Product, error) {
		return h.api.CPQ.ValidProducts(ctx, sessionID, a.ref.CPQID, tofID)
	})
	defer productsOf() //nolint:errcheck // waited for on every path; the result is read below
	if !h.ensureCurrent(c, a, staleCheck{pending: t(c, "quote.pending.add_item", idText(productID), idText(parentID)), exists: hasItem(basketID, parentID)}) {
		return
	}
	products, err := productsOf()
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), form, nil, fmt.Errorf("valid products of TOF %d: %w", tofID, err))
		return
	}
	product, ok := findProduct(products, productID, "ADDON")
	if !ok {
		h.badForm(c, form, formErrors{{FieldID: form + "-choices", Message: t(c, "quote.form.addon_listed")}})
		return
	}
	q, err := h.api.CPQ.AddItem(ctx, sessionID, a.ref.CPQID, a.ref.QuoteID, basketID, parentID, apiclient.AddItemRequest{
		OfferTypeID: tofID, ProductID: product.ProductID, OfferTypeProductID: product.TOFProductID,
		// A new id per request: "unique within the quote" (A5 #5).
		ItemUniqueID: uuid.NewString(),
	})
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), form, map[string]string{"productId": form + "-choices"},
			fmt.Errorf("add %d under item %d of cart %d: %w", productID, parentID, basketID, err))
		return
	}
	// The add-on form is gone: keyboard focus goes to the cart's heading.
	h.cartUpdate(c, a, q, basketID, true, t(c, "quote.toast.added", i18n.Isolate(product.Name)))
}

// removeItem is DELETE .../carts/:basketId/items/:itemId/parent/:parentId: call 6 (the item and
// its add-ons), then the quote again (call 10: call 6 answers no document).
func (h *Handler) removeItem(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	basketID, itemID, err := itemParams(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	parentID, err := parseInt64ID(c, "parentId")
	if err != nil {
		h.fail(c, err)
		return
	}
	if !h.ensureCurrent(c, a, staleCheck{pending: t(c, "quote.pending.remove_item", idText(itemID)), exists: hasItem(basketID, itemID)}) {
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	ctx := h.apiContext(c)
	if err := h.api.CPQ.RemoveItem(ctx, sessionID, a.ref.CPQID, a.ref.QuoteID, basketID, itemID, parentID); err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), "", nil, fmt.Errorf("remove item %d of cart %d: %w", itemID, basketID, err))
		return
	}
	q, err := h.api.CPQ.TOFList(ctx, a.ref.CPQID, a.ref.CustomerID, a.ref.QuoteID)
	if err != nil {
		h.fail(c, fmt.Errorf("item %d removed; reading the quote again: %w", itemID, err))
		return
	}
	h.cartUpdate(c, a, q, basketID, true, t(c, "quote.toast.item_removed"))
}

// repriceItem is POST .../carts/:basketId/items/:itemId/reprice (activationPrice,
// recurringPrice): call 13 overrides the item's unit prices.
func (h *Handler) repriceItem(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	basketID, itemID, err := itemParams(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	line := "line-" + strconv.FormatInt(itemID, 10)
	form := line + "-reprice"
	var errs formErrors
	activation, msg := parsePrice(tr(c), formValue(c, "activationPrice"), false)
	if !msg.IsZero() {
		errs.addMessage(tr(c), line+"-activation", msg)
	}
	recurring, msg := parsePrice(tr(c), formValue(c, "recurringPrice"), true)
	if !msg.IsZero() {
		errs.addMessage(tr(c), line+"-recurring", msg)
	}
	if len(errs) > 0 {
		h.badForm(c, form, errs)
		return
	}
	if !h.ensureCurrent(c, a, staleCheck{pending: t(c, "quote.pending.reprice", idText(itemID),
		quotes.Money(tr(c), cents(activation)), quotes.Money(tr(c), cents(recurring))), exists: hasItem(basketID, itemID)}) {
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	q, err := h.api.CPQ.Reprice(h.apiContext(c), sessionID, a.ref.CPQID, a.ref.QuoteID, apiclient.RepriceRequest{
		ActivationPrice: activation, RecurringPrice: recurring, BasketID: basketID, CartItemID: itemID,
	})
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), form,
			map[string]string{"activationPrice": line + "-activation", "recurringPrice": line + "-recurring"},
			fmt.Errorf("reprice item %d of cart %d: %w", itemID, basketID, err))
		return
	}
	name := t(c, "quote.item")
	if cart, ok := q.Cart(basketID); ok {
		if it, ok := findItem(cart, itemID); ok {
			name = it.Name
		}
	}
	h.cartUpdate(c, a, q, basketID, true, t(c, "quote.toast.repriced", name))
}

// hasItem reports whether the quote still has the item in the cart (for the stale check).
func hasItem(basketID, itemID int64) func(q *apiclient.Quote) bool {
	return func(q *apiclient.Quote) bool {
		cart, ok := q.Cart(basketID)
		if !ok {
			return false
		}
		_, ok = findItem(cart, itemID)
		return ok
	}
}
