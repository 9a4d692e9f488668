package v2sim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Bounds of docs/v2-assumptions.md A5.
const (
	maxLabelLength = 100
	maxQuantity    = 9999
	maxRepriced    = 1_000_000 * 100 // cents
)

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// cpqPath holds the typed path parameters of a configuration call. The untyped cpqId and quoteId of calls 11 to
// 16 get the identifier types of docs/v2-assumptions.md (int32 and int64).
type cpqPath struct {
	cpqID      int32
	customerID int32
	tofID      int32
	quoteID    int64
	basketID   int64
	parentID   int64
	nodeID     int64
}

// parseCPQPath reads the named path parameters, in path order, so the first malformed one is reported.
func parseCPQPath(r *http.Request, names ...string) (cpqPath, error) {
	var p cpqPath
	var err error
	for _, name := range names {
		switch name {
		case "cpqId":
			p.cpqID, err = pathInt32(r, name)
		case "customerId":
			p.customerID, err = pathInt32(r, name)
		case "tofId":
			p.tofID, err = pathInt32(r, name)
		case "quoteId":
			p.quoteID, err = pathInt64(r, name)
		case "basketId":
			p.basketID, err = pathInt64(r, name)
		case "parentId":
			p.parentID, err = pathInt64(r, name)
		case "nodeId":
			p.nodeID, err = pathInt64(r, name)
		}
		if err != nil {
			return p, err
		}
	}
	return p, nil
}

// quoteOf answers the quote when it belongs to the configurator (A2: 404 otherwise) and the user may see its
// customer (A13: 403 otherwise). Caller holds s.mu.
func (s *Server) quoteOf(r *http.Request, cpqID int32, quoteID int64) (*quote, error) {
	q, ok := s.quotes[quoteID]
	if !ok || q.CPQID != cpqID {
		return nil, errNotFound("quote %d not found in configurator %d", quoteID, cpqID)
	}
	if err := s.checkQuote(r, q); err != nil {
		return nil, err
	}
	return q, nil
}

// cartOf answers the quote's cart (404 otherwise).
func cartOf(q *quote, basketID int64) (*cart, error) {
	c := q.cart(basketID)
	if c == nil {
		return nil, errNotFound("basket %d not found in quote %d", basketID, q.ID)
	}
	return c, nil
}

// tofOf answers the configurator's TOF (404 otherwise).
func (s *Server) tofOf(cpqID, tofID int32) (*tof, error) {
	t, ok := s.cat.tofs[tofID]
	if !ok || t.CPQID != cpqID {
		return nil, errNotFound("TOF %d not found in configurator %d", tofID, cpqID)
	}
	return t, nil
}

func (t *tof) product(productID int32) *product {
	for _, p := range t.Products {
		if p.ProductID == productID {
			return p
		}
	}
	return nil
}

// 1. GET /v2/cpq/list
func (s *Server) listConfigurators(w http.ResponseWriter, r *http.Request) error {
	if err := requireNoBody(r); err != nil {
		return err
	}
	type cpqDoc struct {
		ID          int32  `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	out := make([]cpqDoc, 0, len(s.cat.configurators))
	for _, c := range s.cat.configurators {
		out = append(out, cpqDoc{ID: c.ID, Name: c.Name, Description: c.Description})
	}
	body, _ := marshalJSON(out)
	return writeJSON(w, http.StatusOK, body)
}

// 2. POST /v2/cpq/{cpqId}/customer/{customerId}/init, empty body (A3).
func (s *Server) initSession(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "customerId")
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		cfg := s.cat.cpqByID[p.cpqID]
		if cfg == nil {
			return nil, errNotFound("configurator %d not found", p.cpqID)
		}
		cu := s.customerByID(int64(p.customerID))
		if cu == nil {
			return nil, errNotFound("customer %d not found", p.customerID)
		}
		if err := s.checkCustomer(r, cu); err != nil {
			return nil, err
		}
		cs := s.newSession(p.cpqID, p.customerID)
		return struct {
			SessionID  string    `json:"sessionId"`
			CPQID      int32     `json:"cpqId"`
			CustomerID int32     `json:"customerId"`
			TOFList    []tofDoc  `json:"tofList"`
			ExpiresAt  time.Time `json:"expiresAt"`
		}{cs.ID, p.cpqID, p.customerID, tofDocs(cfg), cs.expiresAt(s.sessionTTL).UTC().Truncate(time.Second)}, nil
	})
}

// 3. POST /v2/cpq/{cpqId}/tof/{tofId}/addcart creates a quote with its first cart (A5 #3);
// 4. the same path with ?quoteId= adds a cart with the TOF's default product to that quote (A5 #4).
func (s *Server) addCart(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "tofId")
	if err != nil {
		return err
	}
	if r.URL.Query().Has("quoteId") {
		return s.addCartToQuote(w, r, p)
	}
	var in struct {
		ProductID       *int32  `json:"productId"`
		TOFProductID    *int32  `json:"tofProductId"`
		CustomerID      *int32  `json:"customerId"`
		CustomerQuoteID *int64  `json:"customerQuoteId"`
		Label           *string `json:"label"`
	}
	bodyErr := decodeJSON(r, &in)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		cs, err := s.useSession(r, p.cpqID)
		if err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		t, err := s.tofOf(p.cpqID, p.tofID)
		if err != nil {
			return nil, err
		}
		var v validator
		var prod *product
		if in.ProductID == nil {
			v.add("productId", "is required")
		} else if prod = t.product(*in.ProductID); prod == nil || prod.Kind != kindMain {
			v.add("productId", "product %d is not a MAIN product of TOF %d", *in.ProductID, t.ID)
			prod = nil
		}
		if in.TOFProductID == nil {
			v.add("tofProductId", "is required")
		} else if prod != nil && *in.TOFProductID != prod.TOFProductID {
			v.add("tofProductId", "must be %d, the tofProductId of product %d", prod.TOFProductID, prod.ProductID)
		}
		if in.CustomerID == nil {
			v.add("customerId", "is required")
		} else if *in.CustomerID != cs.CustomerID {
			v.add("customerId", "must be %d, the customer of the configuration session", cs.CustomerID)
		}
		var customerQuoteID int64
		if in.CustomerQuoteID != nil {
			customerQuoteID = *in.CustomerQuoteID
			v.check(customerQuoteID >= 0, "customerQuoteId", "must be >= 0")
		}
		var label string
		if in.Label != nil {
			label = *in.Label
			v.check(utf8.RuneCountInString(label) <= maxLabelLength, "label", "must be at most %d characters", maxLabelLength)
		}
		if err := v.err(); err != nil {
			return nil, err
		}
		q := s.createQuote(r, p.cpqID, cs.CustomerID, customerQuoteID)
		s.addCartTo(r, q, t, prod, label)
		return s.quoteDoc(q), nil
	})
}

// createQuote makes an empty quote. Caller holds s.mu.
func (s *Server) createQuote(r *http.Request, cpqID, customerID int32, customerQuoteID int64) *quote {
	now := s.stamp()
	q := &quote{ID: s.nextQuoteID, CPQID: cpqID, CustomerID: customerID, CustomerQuoteID: customerQuoteID,
		Status: "DRAFT", CreatedAt: now, UpdatedAt: now, itemUIDs: map[string]bool{}}
	s.nextQuoteID++
	s.quotes[q.ID] = q
	s.quotesByCustomer[customerID] = append(s.quotesByCustomer[customerID], q.ID)
	c := s.customerByID(int64(customerID))
	s.audit(r, q, auditQuoteCreated, fmt.Sprintf("Quote %d created for %s on %s", q.ID, c.Name, s.cat.cpqByID[cpqID].Name))
	return q
}

// addCartTo adds a cart with quantity 1 on the standard price list (A5 #3). Caller holds s.mu.
func (s *Server) addCartTo(r *http.Request, q *quote, t *tof, prod *product, label string) *cart {
	c := &cart{BasketID: s.nextBasketID, TOFID: t.ID, Label: label, Quantity: 1, PricelistID: pricelistStandard}
	s.nextBasketID++
	c.Root = s.newNode(prod, 0, "")
	q.itemUIDs[c.Root.ItemUniqueID] = true
	q.Carts = append(q.Carts, c)
	s.audit(r, q, auditCartAdded, fmt.Sprintf("Cart %d added with %s (%s)", c.BasketID, prod.Name, t.Name),
		change{Field: "carts", Before: "", After: strconv.FormatInt(c.BasketID, 10)})
	return c
}

// 4. POST /v2/cpq/{cpqId}/tof/{tofId}/addcart?quoteId=, body {} (A5 #4).
func (s *Server) addCartToQuote(w http.ResponseWriter, r *http.Request, p cpqPath) error {
	quoteID, err := queryID(r, "quoteId", 64)
	if err != nil {
		return err
	}
	var in struct{}
	bodyErr := decodeJSON(r, &in)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		cs, err := s.useSession(r, p.cpqID)
		if err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		t, err := s.tofOf(p.cpqID, p.tofID)
		if err != nil {
			return nil, err
		}
		q, err := s.quoteOf(r, p.cpqID, quoteID)
		if err != nil {
			return nil, err
		}
		if q.CustomerID != cs.CustomerID {
			return nil, errNotFound("quote %d not found for customer %d of the configuration session", quoteID, cs.CustomerID)
		}
		s.addCartTo(r, q, t, t.mainDefault(), "")
		return s.quoteDoc(q), nil
	})
}

// 5. POST .../quote/{quoteId}/basket/{basketId}/parent/{parentId}/additemtocart (A5 #5).
func (s *Server) addItem(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "quoteId", "basketId", "parentId")
	if err != nil {
		return err
	}
	var in struct {
		OfferTypeID        *int32  `json:"offerTypeId"`
		ProductID          *int32  `json:"productId"`
		OfferTypeProductID *int32  `json:"offerTypeProductId"`
		ItemUniqueID       *string `json:"itemUniqueId"`
	}
	bodyErr := decodeJSON(r, &in)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if _, err := s.useSession(r, p.cpqID); err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		q, err := s.quoteOf(r, p.cpqID, p.quoteID)
		if err != nil {
			return nil, err
		}
		c, err := cartOf(q, p.basketID)
		if err != nil {
			return nil, err
		}
		parent := c.Root.find(p.parentID)
		if parent == nil {
			return nil, errNotFound("item %d not found in basket %d", p.parentID, c.BasketID)
		}
		t := s.cat.tofs[c.TOFID]
		var v validator
		if in.OfferTypeID == nil {
			v.add("offerTypeId", "is required")
		} else {
			v.check(*in.OfferTypeID == c.TOFID, "offerTypeId", "must be %d, the TOF of basket %d", c.TOFID, c.BasketID)
		}
		var prod *product
		if in.ProductID == nil {
			v.add("productId", "is required")
		} else if prod = t.product(*in.ProductID); prod == nil || prod.Kind != kindAddon {
			v.add("productId", "product %d is not an ADDON of TOF %d", *in.ProductID, t.ID)
			prod = nil
		} else if !prod.acceptsParent(parent.Product.ProductID) {
			v.add("productId", "add-on %d cannot be added under %s (product %d)", prod.ProductID, parent.Product.Name, parent.Product.ProductID)
		}
		if in.OfferTypeProductID == nil {
			v.add("offerTypeProductId", "is required")
		} else if prod != nil && *in.OfferTypeProductID != prod.TOFProductID {
			v.add("offerTypeProductId", "must be %d, the tofProductId of product %d", prod.TOFProductID, prod.ProductID)
		}
		if in.ItemUniqueID == nil {
			v.add("itemUniqueId", "is required")
		} else {
			v.check(uuidPattern.MatchString(*in.ItemUniqueID), "itemUniqueId", "must be a UUID (8-4-4-4-12 hexadecimal digits)")
		}
		if err := v.err(); err != nil {
			return nil, err
		}
		if q.itemUIDs[*in.ItemUniqueID] {
			return nil, errConflict("itemUniqueId %s is already used in quote %d", *in.ItemUniqueID, q.ID)
		}
		n := s.newNode(prod, parent.NodeID, *in.ItemUniqueID)
		parent.Children = append(parent.Children, n)
		q.itemUIDs[n.ItemUniqueID] = true
		s.audit(r, q, auditItemAdded, fmt.Sprintf("%s added under %s in cart %d", prod.Name, parent.Product.Name, c.BasketID),
			change{Field: "items", Before: "", After: strconv.FormatInt(n.NodeID, 10)})
		return s.quoteDoc(q), nil
	})
}

// 6. DELETE .../quote/{quoteId}/basket/{basketId}/node/{nodeId}/parent/{parentId}: removes the item and its
// sub-items; the node must be a direct child of the parent, and the root is removed with its cart (A5 #6).
func (s *Server) removeItem(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "quoteId", "basketId", "nodeId", "parentId")
	if err != nil {
		return err
	}
	bodyErr := requireNoBody(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.useSession(r, p.cpqID); err != nil {
		return err
	}
	if bodyErr != nil {
		return bodyErr
	}
	q, err := s.quoteOf(r, p.cpqID, p.quoteID)
	if err != nil {
		return err
	}
	c, err := cartOf(q, p.basketID)
	if err != nil {
		return err
	}
	parent := c.Root.find(p.parentID)
	if parent == nil {
		return errNotFound("item %d not found in basket %d", p.parentID, c.BasketID)
	}
	if p.nodeID == c.Root.NodeID {
		return errConflict("item %d is the main product of basket %d: remove the cart instead", p.nodeID, c.BasketID)
	}
	i := slices.IndexFunc(parent.Children, func(n *node) bool { return n.NodeID == p.nodeID })
	if i < 0 {
		return errNotFound("item %d is not a child of item %d in basket %d", p.nodeID, p.parentID, c.BasketID)
	}
	removed := parent.Children[i]
	removed.walk(func(n *node) { delete(q.itemUIDs, n.ItemUniqueID) })
	parent.Children = slices.Delete(parent.Children, i, i+1)
	s.audit(r, q, auditItemRemoved, fmt.Sprintf("%s removed from cart %d", removed.Product.Name, c.BasketID),
		change{Field: "items", Before: strconv.FormatInt(removed.NodeID, 10), After: ""})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// 7. DELETE .../quote/{quoteId}/basket/{basketId}: 204 (A5 #7).
func (s *Server) removeCart(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "quoteId", "basketId")
	if err != nil {
		return err
	}
	bodyErr := requireNoBody(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.useSession(r, p.cpqID); err != nil {
		return err
	}
	if bodyErr != nil {
		return bodyErr
	}
	q, err := s.quoteOf(r, p.cpqID, p.quoteID)
	if err != nil {
		return err
	}
	c, err := cartOf(q, p.basketID)
	if err != nil {
		return err
	}
	c.Root.walk(func(n *node) { delete(q.itemUIDs, n.ItemUniqueID) })
	q.Carts = slices.DeleteFunc(q.Carts, func(x *cart) bool { return x == c })
	s.audit(r, q, auditCartRemoved, fmt.Sprintf("Cart %d (%s) removed", c.BasketID, c.Root.Product.Name),
		change{Field: "carts", Before: strconv.FormatInt(c.BasketID, 10), After: ""})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// 8. PUT .../quote/{quoteId}/basket/{basketId}/quantity body {"quantity"}: 1 to 9999 (A5 #8).
func (s *Server) changeQuantity(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "quoteId", "basketId")
	if err != nil {
		return err
	}
	var in struct {
		Quantity *int64 `json:"quantity"`
	}
	bodyErr := decodeJSON(r, &in)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if _, err := s.useSession(r, p.cpqID); err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		q, err := s.quoteOf(r, p.cpqID, p.quoteID)
		if err != nil {
			return nil, err
		}
		c, err := cartOf(q, p.basketID)
		if err != nil {
			return nil, err
		}
		if in.Quantity == nil {
			return nil, errValidation("quantity", "is required")
		}
		if *in.Quantity < 1 || *in.Quantity > maxQuantity {
			return nil, errValidation("quantity", fmt.Sprintf("must be between 1 and %d", maxQuantity))
		}
		before := c.Quantity
		c.Quantity = *in.Quantity
		s.audit(r, q, auditQuantityChanged, fmt.Sprintf("Quantity of cart %d changed from %d to %d", c.BasketID, before, c.Quantity),
			change{Field: fmt.Sprintf("carts[%d].quantity", c.BasketID), Before: strconv.FormatInt(before, 10), After: strconv.FormatInt(c.Quantity, 10)})
		return s.quoteDoc(q), nil
	})
}

// validProductDoc is one entry of call 9 (A5 #9).
type validProductDoc struct {
	ProductID        int32   `json:"productId"`
	TOFProductID     int32   `json:"tofProductId"`
	Name             string  `json:"name"`
	Description      string  `json:"description"`
	Kind             string  `json:"kind"`
	Default          bool    `json:"default"`
	ActivationPrice  Money   `json:"activationPrice"`
	RecurringPrice   Money   `json:"recurringPrice"`
	ParentProductIDs []int32 `json:"parentProductIds"`
}

// 9. GET /v2/cpq/{cpqId}/tof/{tofId}/validproducts: the TOF's products with standard prices (A5 #9).
func (s *Server) validProducts(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "tofId")
	if err != nil {
		return err
	}
	bodyErr := requireNoBody(r)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if _, err := s.useSession(r, p.cpqID); err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		t, err := s.tofOf(p.cpqID, p.tofID)
		if err != nil {
			return nil, err
		}
		out := make([]validProductDoc, 0, len(t.Products))
		for _, prod := range t.Products {
			activation, recurring := prod.price(pricelistStandard)
			parents := slices.Clone(prod.ParentIDs)
			if parents == nil {
				parents = []int32{}
			}
			out = append(out, validProductDoc{ProductID: prod.ProductID, TOFProductID: prod.TOFProductID, Name: prod.Name,
				Description: prod.Description, Kind: prod.Kind, Default: prod.Default, ActivationPrice: activation,
				RecurringPrice: recurring, ParentProductIDs: parents})
		}
		return out, nil
	})
}

// 10. GET /v2/cpq/{cpqId}/customer/{customerId}/quote/{quoteId}/toflist: the quote document, without a
// session (A4, A5 #10).
func (s *Server) tofList(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "customerId", "quoteId")
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if s.cat.cpqByID[p.cpqID] == nil {
			return nil, errNotFound("configurator %d not found", p.cpqID)
		}
		if s.customerByID(int64(p.customerID)) == nil {
			return nil, errNotFound("customer %d not found", p.customerID)
		}
		q, ok := s.quotes[p.quoteID]
		if !ok || q.CPQID != p.cpqID || q.CustomerID != p.customerID {
			return nil, errNotFound("quote %d not found for customer %d in configurator %d", p.quoteID, p.customerID, p.cpqID)
		}
		if err := s.checkQuote(r, q); err != nil {
			return nil, err
		}
		return s.quoteDoc(q), nil
	})
}

// applicableDiscountDoc is one entry of call 11 (A5 #11).
type applicableDiscountDoc struct {
	DiscountID int32    `json:"discountId"`
	Name       string   `json:"name"`
	Percent    *float64 `json:"percent,omitempty"`
	AppliesTo  string   `json:"appliesTo"`
	Extra      bool     `json:"extra"`
	MaxValue   *float64 `json:"maxValue,omitempty"`
}

// 11. GET /v2/cpq/{cpqId}/quote/{quoteId}/applicableDiscounts (A5 #11).
func (s *Server) applicableDiscounts(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "quoteId")
	if err != nil {
		return err
	}
	bodyErr := requireNoBody(r)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if _, err := s.useSession(r, p.cpqID); err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		if _, err := s.quoteOf(r, p.cpqID, p.quoteID); err != nil {
			return nil, err
		}
		out := []applicableDiscountDoc{}
		for _, d := range s.cat.cpqByID[p.cpqID].Discounts {
			doc := applicableDiscountDoc{DiscountID: d.ID, Name: d.Name, AppliesTo: d.AppliesTo, Extra: d.Extra}
			if d.Extra {
				doc.MaxValue = &d.MaxValue
			} else {
				doc.Percent = &d.Percent
			}
			out = append(out, doc)
		}
		return out, nil
	})
}

// 12. PUT /v2/cpq/{cpqId}/quote/{quoteId}/applyDiscounts replaces the quote's discounts (A5 #12).
func (s *Server) applyDiscounts(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "quoteId")
	if err != nil {
		return err
	}
	var in struct {
		AppliedDiscounts  []int32 `json:"appliedDiscounts"`
		ExtraDiscountList []struct {
			DiscountID    *int32   `json:"discountId"`
			DiscountValue *float64 `json:"discountValue"`
		} `json:"extraDiscountList"`
	}
	bodyErr := decodeJSON(r, &in)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if _, err := s.useSession(r, p.cpqID); err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		q, err := s.quoteOf(r, p.cpqID, p.quoteID)
		if err != nil {
			return nil, err
		}
		var v validator
		seen := map[int32]bool{}
		applied := []int32{}
		for i, id := range in.AppliedDiscounts {
			field := fmt.Sprintf("appliedDiscounts[%d]", i)
			d := s.cat.discounts[id]
			switch {
			case d == nil || d.CPQID != q.CPQID:
				v.add(field, "discount %d is not applicable to quote %d", id, q.ID)
			case d.Extra:
				v.add(field, "discount %d is an extra discount: send it in extraDiscountList with a value", id)
			case seen[id]:
				v.add(field, "discount %d is listed twice", id)
			default:
				applied = append(applied, id)
			}
			seen[id] = true
		}
		extras := []extraChoice{}
		for i, e := range in.ExtraDiscountList {
			field := fmt.Sprintf("extraDiscountList[%d]", i)
			if e.DiscountID == nil {
				v.add(field+".discountId", "is required")
				continue
			}
			d := s.cat.discounts[*e.DiscountID]
			switch {
			case d == nil || d.CPQID != q.CPQID:
				v.add(field+".discountId", "discount %d is not applicable to quote %d", *e.DiscountID, q.ID)
				continue
			case !d.Extra:
				v.add(field+".discountId", "discount %d is not an extra discount: send it in appliedDiscounts", *e.DiscountID)
				continue
			case seen[*e.DiscountID]:
				v.add(field+".discountId", "discount %d is listed twice", *e.DiscountID)
				continue
			}
			seen[*e.DiscountID] = true
			if e.DiscountValue == nil {
				v.add(field+".discountValue", "is required")
				continue
			}
			if *e.DiscountValue <= 0 || *e.DiscountValue > d.MaxValue {
				v.add(field+".discountValue", "must be greater than 0 and at most %s", strconv.FormatFloat(d.MaxValue, 'f', -1, 64))
				continue
			}
			extras = append(extras, extraChoice{ID: d.ID, Value: *e.DiscountValue})
		}
		if err := v.err(); err != nil {
			return nil, err
		}
		beforeApplied, _ := marshalJSON(q.Applied)
		beforeExtras, _ := marshalJSON(extraSummary(q.Extras))
		q.Applied, q.Extras = applied, extras
		afterApplied, _ := marshalJSON(q.Applied)
		afterExtras, _ := marshalJSON(extraSummary(q.Extras))
		s.audit(r, q, auditDiscountsApplied, fmt.Sprintf("Discounts applied: %d regular, %d extra", len(applied), len(extras)),
			change{Field: "appliedDiscounts", Before: string(beforeApplied), After: string(afterApplied)},
			change{Field: "extraDiscounts", Before: string(beforeExtras), After: string(afterExtras)})
		return s.quoteDoc(q), nil
	})
}

func extraSummary(extras []extraChoice) []map[string]any {
	out := []map[string]any{}
	for _, e := range extras {
		out = append(out, map[string]any{"discountId": e.ID, "discountValue": e.Value})
	}
	return out
}

// 13. PUT /v2/cpq/{cpqId}/quote/{quoteId}/reprice overrides an item's unit prices (A5 #13).
func (s *Server) reprice(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "quoteId")
	if err != nil {
		return err
	}
	var in struct {
		ActivationPrice *float64 `json:"activationPrice"`
		RecurringPrice  *float64 `json:"recurringPrice"`
		BasketID        *int64   `json:"basketId"`
		CartItemID      *int64   `json:"cartItemId"`
	}
	bodyErr := decodeJSON(r, &in)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if _, err := s.useSession(r, p.cpqID); err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		q, err := s.quoteOf(r, p.cpqID, p.quoteID)
		if err != nil {
			return nil, err
		}
		var v validator
		v.check(in.BasketID != nil, "basketId", "is required")
		v.check(in.CartItemID != nil, "cartItemId", "is required")
		if err := v.err(); err != nil {
			return nil, err
		}
		// Ids in a body that name the resource acted on answer 404 when unknown (docs/v2-assumptions.md A2).
		c, err := cartOf(q, *in.BasketID)
		if err != nil {
			return nil, err
		}
		n := c.Root.find(*in.CartItemID)
		if n == nil {
			return nil, errNotFound("cart item %d not found in basket %d", *in.CartItemID, c.BasketID)
		}
		price := func(field string, value *float64) Money {
			if value == nil {
				v.add(field, "is required")
				return 0
			}
			m, ok := moneyFromFloat(*value)
			switch {
			case !ok:
				v.add(field, "must have at most two decimals")
			case m < 0 || m > maxRepriced:
				v.add(field, "must be between 0 and 1000000")
			}
			return m
		}
		activation := price("activationPrice", in.ActivationPrice)
		recurring := price("recurringPrice", in.RecurringPrice)
		if err := v.err(); err != nil {
			return nil, err
		}
		beforeA, beforeR := n.Product.price(c.PricelistID)
		if n.Override != nil {
			beforeA, beforeR = n.Override[0], n.Override[1]
		}
		n.Override = &[2]Money{activation, recurring}
		s.audit(r, q, auditRepriced, fmt.Sprintf("%s in cart %d repriced to %s activation, %s recurring", n.Product.Name, c.BasketID, activation, recurring),
			change{Field: fmt.Sprintf("items[%d].activationPrice", n.NodeID), Before: beforeA.String(), After: activation.String()},
			change{Field: fmt.Sprintf("items[%d].recurringPrice", n.NodeID), Before: beforeR.String(), After: recurring.String()})
		return s.quoteDoc(q), nil
	})
}

// packageOfferDoc is one package of call 14 (A5 #14).
type packageOfferDoc struct {
	PackageID      int32  `json:"packageId"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	RecurringPrice Money  `json:"recurringPrice"`
}

// 14. GET /v2/cpq/{cpqId}/tof/{tofId}/package/{quoteId} (A5 #14).
func (s *Server) getPackages(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "tofId", "quoteId")
	if err != nil {
		return err
	}
	bodyErr := requireNoBody(r)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if _, err := s.useSession(r, p.cpqID); err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		t, err := s.tofOf(p.cpqID, p.tofID)
		if err != nil {
			return nil, err
		}
		q, err := s.quoteOf(r, p.cpqID, p.quoteID)
		if err != nil {
			return nil, err
		}
		doc := struct {
			QuoteID  int64             `json:"quoteId"`
			TOFID    int32             `json:"tofId"`
			Packages []packageOfferDoc `json:"packages"`
			Assigned []int32           `json:"assigned"`
		}{QuoteID: q.ID, TOFID: t.ID, Packages: []packageOfferDoc{}, Assigned: []int32{}}
		for _, pk := range t.Packages {
			doc.Packages = append(doc.Packages, packageOfferDoc{PackageID: pk.ID, Name: pk.Name, Description: pk.Description, RecurringPrice: pk.Recurring})
		}
		for _, ap := range q.Packages {
			if ap.TOFID == t.ID {
				doc.Assigned = append(doc.Assigned, ap.PackageID)
			}
		}
		return doc, nil
	})
}

// 15. POST /v2/cpq/{cpqId}/package assigns a package to a quote (A5 #15).
func (s *Server) addPackage(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId")
	if err != nil {
		return err
	}
	var in struct {
		CustomerID      *int32 `json:"customerId"`
		CustomerQuoteID *int64 `json:"customerQuoteId"`
		PackageID       *int32 `json:"packageId"`
		TOFID           *int32 `json:"tofId"`
		QuoteID         *int64 `json:"quoteId"`
		AssigneeUserID  *int64 `json:"assigneeUserId"`
	}
	bodyErr := decodeJSON(r, &in)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if _, err := s.useSession(r, p.cpqID); err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		if in.QuoteID == nil {
			return nil, errValidation("quoteId", "is required")
		}
		q, err := s.quoteOf(r, p.cpqID, *in.QuoteID)
		if err != nil {
			return nil, err
		}
		var v validator
		if in.CustomerID == nil {
			v.add("customerId", "is required")
		} else {
			v.check(*in.CustomerID == q.CustomerID, "customerId", "must be %d, the customer of quote %d", q.CustomerID, q.ID)
		}
		if in.CustomerQuoteID != nil {
			v.check(*in.CustomerQuoteID >= 0, "customerQuoteId", "must be >= 0")
		}
		var t *tof
		if in.TOFID == nil {
			v.add("tofId", "is required")
		} else if t, err = s.tofOf(p.cpqID, *in.TOFID); err != nil {
			v.add("tofId", "TOF %d is not a TOF of quote %d", *in.TOFID, q.ID)
			t = nil
		}
		var pk *salesPackage
		if in.PackageID == nil {
			v.add("packageId", "is required")
		} else if pk = s.cat.packages[*in.PackageID]; pk == nil || (t != nil && pk.TOFID != t.ID) {
			v.add("packageId", "package %d is not offered for TOF %d", *in.PackageID, derefInt32(in.TOFID))
			pk = nil
		}
		if in.AssigneeUserID == nil {
			v.add("assigneeUserId", "is required")
		} else {
			v.check(s.knownOwner(*in.AssigneeUserID), "assigneeUserId", "user %d is not a known sales user", *in.AssigneeUserID)
		}
		if err := v.err(); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(q.Packages, func(ap assignedPackage) bool { return ap.PackageID == pk.ID }) {
			return nil, errConflict("package %d is already assigned to quote %d", pk.ID, q.ID)
		}
		q.Packages = append(q.Packages, assignedPackage{PackageID: pk.ID, TOFID: t.ID, AssigneeID: *in.AssigneeUserID, AssignedAt: s.stamp()})
		s.audit(r, q, auditPackageAdded, fmt.Sprintf("Package %s added for %s, assigned to user %d", pk.Name, t.Name, *in.AssigneeUserID),
			change{Field: "packages", Before: "", After: strconv.Itoa(int(pk.ID))})
		return s.quoteDoc(q), nil
	})
}

func derefInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// 16. PUT /v2/cpq/{cpqId}/quote/{quoteId}/changePricelist body {"pricelistId", "cartId"} (A5 #16).
func (s *Server) changePricelist(w http.ResponseWriter, r *http.Request) error {
	p, err := parseCPQPath(r, "cpqId", "quoteId")
	if err != nil {
		return err
	}
	var in struct {
		PricelistID *int32 `json:"pricelistId"`
		CartID      *int64 `json:"cartId"`
	}
	bodyErr := decodeJSON(r, &in)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		if _, err := s.useSession(r, p.cpqID); err != nil {
			return nil, err
		}
		if bodyErr != nil {
			return nil, bodyErr
		}
		q, err := s.quoteOf(r, p.cpqID, p.quoteID)
		if err != nil {
			return nil, err
		}
		if in.CartID == nil {
			return nil, errValidation("cartId", "is required")
		}
		c, err := cartOf(q, *in.CartID)
		if err != nil {
			return nil, err
		}
		if in.PricelistID == nil {
			return nil, errValidation("pricelistId", "is required")
		}
		pl, ok := s.cat.pricelistByID(*in.PricelistID)
		if !ok {
			return nil, errValidation("pricelistId", fmt.Sprintf("price list %d is not one of availablePricelists", *in.PricelistID))
		}
		before, _ := s.cat.pricelistByID(c.PricelistID)
		c.PricelistID = pl.ID
		s.audit(r, q, auditPricelistChanged, fmt.Sprintf("Price list of cart %d changed from %s to %s", c.BasketID, before.Name, pl.Name),
			change{Field: fmt.Sprintf("carts[%d].pricelistId", c.BasketID), Before: strconv.Itoa(int(before.ID)), After: strconv.Itoa(int(pl.ID))})
		return s.quoteDoc(q), nil
	})
}
