package v2sim

import (
	"fmt"
	"slices"
)

// seedQuotes makes a few quotes so demo pages are not empty: a mobile quote with discounts and a package, a
// fibre quote on the partner price list, and a cloud quote with a contract awaiting signature. They belong to
// customers 1 to 3 (when seeded) and are recorded in the audit as made by "system".
func (s *Server) seedQuotes() {
	type item struct {
		productID int32
		children  []item
	}
	type cartSeed struct {
		tofID     int32
		label     string
		quantity  int64
		pricelist int32
		root      item
	}
	seeds := []struct {
		customerID int32
		cpqID      int32
		reference  int64
		carts      []cartSeed
		discounts  []int32
		extras     []extraChoice
		packages   []int32
		contract   bool
	}{
		{customerID: 1, cpqID: 1, reference: 4711, carts: []cartSeed{
			{tofID: 11, label: "Head office", quantity: 5, pricelist: pricelistStandard, root: item{102, []item{{104, nil}, {106, []item{{107, nil}}}}}},
			{tofID: 12, label: "Field team", quantity: 3, pricelist: pricelistStandard, root: item{113, []item{{115, []item{{116, nil}}}, {117, nil}}}},
		}, discounts: []int32{1}, extras: []extraChoice{{ID: 9, Value: 5}}, packages: []int32{31}},
		{customerID: 2, cpqID: 2, carts: []cartSeed{
			{tofID: 21, label: "Warehouse", quantity: 1, pricelist: pricelistPartner, root: item{131, []item{{137, []item{{138, nil}}}, {135, nil}}}},
		}, discounts: []int32{12}},
		{customerID: 3, cpqID: 3, reference: 2026001, carts: []cartSeed{
			{tofID: 32, label: "Production", quantity: 1, pricelist: pricelistStandard, root: item{161, []item{{164, []item{{166, nil}}}, {167, nil}}}},
			{tofID: 31, label: "Staff", quantity: 25, pricelist: pricelistStandard, root: item{151, []item{{154, nil}}}},
		}, discounts: []int32{21}, contract: true},
	}
	for _, seed := range seeds {
		cu := s.customerByID(int64(seed.customerID))
		if cu == nil {
			continue
		}
		if !slices.Contains(cu.CPQIDs, seed.cpqID) {
			cu.CPQIDs = append(cu.CPQIDs, seed.cpqID)
			slices.Sort(cu.CPQIDs)
			cu.encoded = nil
		}
		q := s.createQuote(nil, seed.cpqID, seed.customerID, seed.reference)
		for _, cs := range seed.carts {
			t := s.cat.tofs[cs.tofID]
			c := s.addCartTo(nil, q, t, s.cat.products[cs.root.productID], cs.label)
			c.Quantity = cs.quantity
			c.PricelistID = cs.pricelist
			var add func(parent *node, items []item)
			add = func(parent *node, items []item) {
				for _, it := range items {
					n := s.newNode(s.cat.products[it.productID], parent.NodeID, "")
					parent.Children = append(parent.Children, n)
					q.itemUIDs[n.ItemUniqueID] = true
					s.audit(nil, q, auditItemAdded, fmt.Sprintf("%s added under %s in cart %d", n.Product.Name, parent.Product.Name, c.BasketID))
					add(n, it.children)
				}
			}
			add(c.Root, cs.root.children)
		}
		if len(seed.discounts)+len(seed.extras) > 0 {
			q.Applied = seed.discounts
			q.Extras = seed.extras
			s.audit(nil, q, auditDiscountsApplied, fmt.Sprintf("Discounts applied: %d regular, %d extra", len(seed.discounts), len(seed.extras)))
		}
		for _, id := range seed.packages {
			pk := s.cat.packages[id]
			q.Packages = append(q.Packages, assignedPackage{PackageID: id, TOFID: pk.TOFID, AssigneeID: cu.Owners[0], AssignedAt: s.stamp()})
			s.audit(nil, q, auditPackageAdded, fmt.Sprintf("Package %s added, assigned to user %d", pk.Name, cu.Owners[0]))
		}
		if seed.contract {
			c, err := s.generate(nil, q)
			if err != nil {
				s.logger.Error("v2sim: seeding a contract", "err", err)
				continue
			}
			sr := &signatureRequest{ID: s.nextSignatureID, ContractID: c.ID, Email: cu.Email, SignerName: "Legal representative of " + cu.Name,
				Message: "Please review and sign the attached contract.", Status: signatureSent, SentAt: s.stamp(),
				ExpiresAt: s.stamp().Add(s.opts.SignatureExpiry), Token: newSigningToken()}
			s.nextSignatureID++
			c.Signatures = append(c.Signatures, sr)
			c.Status = contractSignatureRequested
			s.audit(nil, q, auditSignatureRequest, fmt.Sprintf("Signature of contract %s requested from %s", c.Number, sr.Email))
		}
	}
}
