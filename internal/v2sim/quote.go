package v2sim

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// quote is the simulator's state of one quote (docs/v2-assumptions.md A4).
type quote struct {
	ID              int64
	CPQID           int32
	CustomerID      int32
	CustomerQuoteID int64
	Status          string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	Carts           []*cart
	Applied         []int32 // regular discount ids in the order applied
	Extras          []extraChoice
	Packages        []assignedPackage
	Attachments     []*attachment
	ContractID      int32 // 0 until a contract is generated
	Audit           []auditEntry
	itemUIDs        map[string]bool // itemUniqueIds used in the quote (A5 #5: unique within the quote)
}

type extraChoice struct {
	ID    int32
	Value float64
}

type assignedPackage struct {
	PackageID  int32
	TOFID      int32
	AssigneeID int64
	AssignedAt time.Time
}

// cart (basket) is one main product with its add-ons.
type cart struct {
	BasketID    int64
	TOFID       int32
	Label       string
	Quantity    int64
	PricelistID int32
	Root        *node
}

// node is one item of a cart tree.
type node struct {
	NodeID       int64
	ParentID     int64
	Product      *product
	ItemUniqueID string
	// Reprice overrides of the unit prices (A4 pricing step 1); nil when not repriced.
	Override *[2]Money
	Children []*node
}

func (q *quote) cart(basketID int64) *cart {
	for _, c := range q.Carts {
		if c.BasketID == basketID {
			return c
		}
	}
	return nil
}

// find answers the node with the id in the tree below n, or nil.
func (n *node) find(nodeID int64) *node {
	if n.NodeID == nodeID {
		return n
	}
	for _, c := range n.Children {
		if found := c.find(nodeID); found != nil {
			return found
		}
	}
	return nil
}

// walk calls fn for n and every node below it, parents first.
func (n *node) walk(fn func(*node)) {
	fn(n)
	for _, c := range n.Children {
		c.walk(fn)
	}
}

// newNode makes an item. Root items get an itemUniqueId derived from their node id (the spec lets the client
// name add-ons only), so seeded quotes are identical from run to run.
func (s *Server) newNode(p *product, parentID int64, itemUniqueID string) *node {
	id := s.nextNodeID
	s.nextNodeID++
	if itemUniqueID == "" {
		itemUniqueID = uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "urn:v2sim:node:%d", id)).String()
	}
	return &node{NodeID: id, ParentID: parentID, Product: p, ItemUniqueID: itemUniqueID}
}

// Wire documents of A4.
type quoteDoc struct {
	QuoteID             int64                `json:"quoteId"`
	CPQID               int32                `json:"cpqId"`
	CustomerID          int32                `json:"customerId"`
	CustomerQuoteID     int64                `json:"customerQuoteId"`
	Status              string               `json:"status"`
	Currency            string               `json:"currency"`
	CreatedAt           time.Time            `json:"createdAt"`
	UpdatedAt           time.Time            `json:"updatedAt"`
	TOFList             []tofDoc             `json:"tofList"`
	AvailablePricelists []pricelistDoc       `json:"availablePricelists"`
	Carts               []cartDoc            `json:"carts"`
	AppliedDiscounts    []appliedDiscountDoc `json:"appliedDiscounts"`
	ExtraDiscounts      []extraDiscountDoc   `json:"extraDiscounts"`
	Packages            []quotePackageDoc    `json:"packages"`
	Attachments         []attachmentDoc      `json:"attachments"`
	Contract            *contractRefDoc      `json:"contract,omitempty"`
	Totals              totals               `json:"totals"`
}

type tofDoc struct {
	ID          int32  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

type pricelistDoc struct {
	PricelistID int32  `json:"pricelistId"`
	Name        string `json:"name"`
}

type cartDoc struct {
	BasketID    int64   `json:"basketId"`
	TOFID       int32   `json:"tofId"`
	Label       string  `json:"label"`
	Quantity    int64   `json:"quantity"`
	PricelistID int32   `json:"pricelistId"`
	Root        nodeDoc `json:"root"`
	Totals      totals  `json:"totals"`
}

type nodeDoc struct {
	NodeID              int64        `json:"nodeId"`
	ParentID            int64        `json:"parentId"`
	ProductID           int32        `json:"productId"`
	TOFProductID        int32        `json:"tofProductId"`
	Kind                string       `json:"kind"`
	Name                string       `json:"name"`
	ItemUniqueID        string       `json:"itemUniqueId"`
	ListActivationPrice Money        `json:"listActivationPrice"`
	ListRecurringPrice  Money        `json:"listRecurringPrice"`
	ActivationPrice     Money        `json:"activationPrice"`
	RecurringPrice      Money        `json:"recurringPrice"`
	Repriced            bool         `json:"repriced"`
	Breakdown           breakdownDoc `json:"breakdown"`
	Children            []nodeDoc    `json:"children"`
}

type breakdownDoc struct {
	List      amountsDoc        `json:"list"`
	Discounts []discountLineDoc `json:"discounts"`
	Extra     amountsDoc        `json:"extra"`
	Net       amountsDoc        `json:"net"`
}

type amountsDoc struct {
	Activation Money `json:"activation"`
	Recurring  Money `json:"recurring"`
}

type discountLineDoc struct {
	DiscountID int32  `json:"discountId"`
	Name       string `json:"name"`
	Activation Money  `json:"activation"`
	Recurring  Money  `json:"recurring"`
}

type appliedDiscountDoc struct {
	DiscountID int32   `json:"discountId"`
	Name       string  `json:"name"`
	Percent    float64 `json:"percent"`
	AppliesTo  string  `json:"appliesTo"`
}

type extraDiscountDoc struct {
	DiscountID    int32   `json:"discountId"`
	Name          string  `json:"name"`
	DiscountValue float64 `json:"discountValue"`
	AppliesTo     string  `json:"appliesTo"`
}

type quotePackageDoc struct {
	PackageID      int32  `json:"packageId"`
	TOFID          int32  `json:"tofId"`
	Name           string `json:"name"`
	RecurringPrice Money  `json:"recurringPrice"`
	AssigneeUserID int64  `json:"assigneeUserId"`
}

type contractRefDoc struct {
	ContractID     int32  `json:"contractId"`
	ContractNumber string `json:"contractNumber"`
}

// tofDocs lists the TOFs of a configurator: a quote may hold carts of any of them, so they are the quote's TOFs
// (A4 tofList, A3 init).
func tofDocs(cfg *configurator) []tofDoc {
	out := make([]tofDoc, 0, len(cfg.TOFs))
	for _, t := range cfg.TOFs {
		out = append(out, tofDoc{ID: t.ID, Name: t.Name, Description: t.Description})
	}
	return out
}

// pricingInputs turns the quote's discount choices into pricing input.
func (s *Server) pricingInputs(q *quote) ([]appliedDiscount, []appliedExtra) {
	discounts := make([]appliedDiscount, 0, len(q.Applied))
	for _, id := range q.Applied {
		d := s.cat.discounts[id]
		discounts = append(discounts, appliedDiscount{ID: d.ID, Name: d.Name, BP: basisPoints(d.Percent), AppliesTo: d.AppliesTo})
	}
	extras := make([]appliedExtra, 0, len(q.Extras))
	for _, e := range q.Extras {
		d := s.cat.discounts[e.ID]
		extras = append(extras, appliedExtra{ID: d.ID, BP: basisPoints(e.Value), AppliesTo: d.AppliesTo})
	}
	return discounts, extras
}

// quoteDoc renders the whole quote document of A4. Caller holds s.mu.
func (s *Server) quoteDoc(q *quote) quoteDoc {
	cfg := s.cat.cpqByID[q.CPQID]
	doc := quoteDoc{
		QuoteID: q.ID, CPQID: q.CPQID, CustomerID: q.CustomerID, CustomerQuoteID: q.CustomerQuoteID,
		Status: q.Status, Currency: "EUR", CreatedAt: q.CreatedAt, UpdatedAt: q.UpdatedAt,
		TOFList:          tofDocs(cfg),
		Carts:            []cartDoc{},
		AppliedDiscounts: []appliedDiscountDoc{},
		ExtraDiscounts:   []extraDiscountDoc{},
		Packages:         []quotePackageDoc{},
		Attachments:      []attachmentDoc{},
	}
	for _, pl := range s.cat.pricelists {
		doc.AvailablePricelists = append(doc.AvailablePricelists, pricelistDoc{PricelistID: pl.ID, Name: pl.Name})
	}
	discounts, extras := s.pricingInputs(q)
	for _, c := range q.Carts {
		cd := cartDoc{BasketID: c.BasketID, TOFID: c.TOFID, Label: c.Label, Quantity: c.Quantity, PricelistID: c.PricelistID}
		cd.Root = priceNode(c, c.Root, discounts, extras, &cd.Totals)
		doc.Totals.add(cd.Totals)
		doc.Carts = append(doc.Carts, cd)
	}
	for _, id := range q.Applied {
		d := s.cat.discounts[id]
		doc.AppliedDiscounts = append(doc.AppliedDiscounts, appliedDiscountDoc{DiscountID: d.ID, Name: d.Name, Percent: d.Percent, AppliesTo: d.AppliesTo})
	}
	for _, e := range q.Extras {
		d := s.cat.discounts[e.ID]
		doc.ExtraDiscounts = append(doc.ExtraDiscounts, extraDiscountDoc{DiscountID: d.ID, Name: d.Name, DiscountValue: e.Value, AppliesTo: d.AppliesTo})
	}
	// Packages add to the quote's recurring list and net amounts (A4 totals).
	for _, ap := range q.Packages {
		p := s.cat.packages[ap.PackageID]
		doc.Packages = append(doc.Packages, quotePackageDoc{PackageID: p.ID, TOFID: ap.TOFID, Name: p.Name, RecurringPrice: p.Recurring, AssigneeUserID: ap.AssigneeID})
		doc.Totals.ListRecurring += p.Recurring
		doc.Totals.NetRecurring += p.Recurring
	}
	for _, a := range q.Attachments {
		doc.Attachments = append(doc.Attachments, a.doc())
	}
	if q.ContractID != 0 {
		ct := s.contracts[q.ContractID]
		doc.Contract = &contractRefDoc{ContractID: ct.ID, ContractNumber: ct.Number}
	}
	return doc
}

// priceNode prices n and its children, adding every line to t.
func priceNode(c *cart, n *node, discounts []appliedDiscount, extras []appliedExtra, t *totals) nodeDoc {
	listActivation, listRecurring := n.Product.price(c.PricelistID)
	unitActivation, unitRecurring := listActivation, listRecurring
	if n.Override != nil {
		unitActivation, unitRecurring = n.Override[0], n.Override[1]
	}
	lp := priceLine(unitActivation, unitRecurring, c.Quantity, discounts, extras)
	t.addLine(lp)
	nd := nodeDoc{
		NodeID: n.NodeID, ParentID: n.ParentID, ProductID: n.Product.ProductID, TOFProductID: n.Product.TOFProductID,
		Kind: n.Product.Kind, Name: n.Product.Name, ItemUniqueID: n.ItemUniqueID,
		ListActivationPrice: listActivation, ListRecurringPrice: listRecurring,
		ActivationPrice: unitActivation, RecurringPrice: unitRecurring, Repriced: n.Override != nil,
		Breakdown: breakdownDoc{
			List:      amountsDoc{lp.ListActivation, lp.ListRecurring},
			Discounts: make([]discountLineDoc, 0, len(lp.Discounts)),
			Extra:     amountsDoc{lp.ExtraActivation, lp.ExtraRecurring},
			Net:       amountsDoc{lp.NetActivation, lp.NetRecurring},
		},
		Children: make([]nodeDoc, 0, len(n.Children)),
	}
	for _, d := range lp.Discounts {
		nd.Breakdown.Discounts = append(nd.Breakdown.Discounts, discountLineDoc{DiscountID: d.ID, Name: d.Name, Activation: d.Activation, Recurring: d.Recurring})
	}
	for _, child := range n.Children {
		nd.Children = append(nd.Children, priceNode(c, child, discounts, extras, t))
	}
	return nd
}
