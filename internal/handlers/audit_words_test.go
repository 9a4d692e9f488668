package handlers

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/worklist"
)

// TestAuditInPeoplesWords drives every action the simulator audits on one quote, then reads the
// audit page: no change shows JSON or a bare id where the v2 gives a name, discount and product
// names are there, entries are newest first, and times have seconds.
func TestAuditInPeoplesWords(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ctx := e.ctx()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	const cpqID, customerID = int32(1), int32(1)
	init, err := e.api.CPQ.Init(ctx, cpqID, customerID)
	must("init", err)
	sid, tofID := init.SessionID, init.TOFList[0].ID
	products, err := e.api.CPQ.ValidProducts(ctx, sid, cpqID, tofID)
	must("products", err)
	var mains, addons []apiclient.Product
	for _, p := range products {
		if p.Kind == "MAIN" {
			mains = append(mains, p)
		} else {
			addons = append(addons, p)
		}
	}
	if len(mains) == 0 || len(addons) == 0 {
		t.Fatal("the simulator offers no main product and add-on")
	}
	q, err := e.api.CPQ.AddCart(ctx, sid, cpqID, tofID, apiclient.AddCartRequest{ProductID: mains[0].ProductID, TOFProductID: mains[0].TOFProductID, CustomerID: customerID, Label: "First"})
	must("add cart", err)
	quoteID, cart := q.QuoteID, q.Carts[0]
	var addon *apiclient.Product
	for i, a := range addons {
		if len(a.ParentProductIDs) == 0 || slices.Contains(a.ParentProductIDs, cart.Root.ProductID) {
			addon = &addons[i]
			break
		}
	}
	if addon == nil {
		t.Fatal("no add-on for the main product")
	}
	q, err = e.api.CPQ.AddItem(ctx, sid, cpqID, quoteID, cart.BasketID, cart.Root.NodeID, apiclient.AddItemRequest{OfferTypeID: tofID, ProductID: addon.ProductID, OfferTypeProductID: addon.TOFProductID})
	must("add item", err)
	item := q.Carts[0].Root.Children[0]
	_, err = e.api.CPQ.SetQuantity(ctx, sid, cpqID, quoteID, cart.BasketID, 3)
	must("quantity", err)
	discounts, err := e.api.CPQ.ApplicableDiscounts(ctx, sid, cpqID, quoteID)
	must("discounts", err)
	var apply apiclient.ApplyDiscountsRequest
	for _, d := range discounts {
		if d.Extra && len(apply.ExtraDiscountList) == 0 {
			apply.ExtraDiscountList = append(apply.ExtraDiscountList, apiclient.ExtraDiscountInput{DiscountID: d.DiscountID, DiscountValue: min(d.MaxValue, 5)})
		} else if !d.Extra && len(apply.AppliedDiscounts) == 0 {
			apply.AppliedDiscounts = append(apply.AppliedDiscounts, d.DiscountID)
		}
	}
	if len(apply.AppliedDiscounts) == 0 || len(apply.ExtraDiscountList) == 0 {
		t.Fatalf("need a regular and an extra discount: %+v", discounts)
	}
	q, err = e.api.CPQ.ApplyDiscounts(ctx, sid, cpqID, quoteID, apply)
	must("apply discounts", err)
	_, err = e.api.CPQ.Reprice(ctx, sid, cpqID, quoteID, apiclient.RepriceRequest{ActivationPrice: 1234.5, RecurringPrice: 99.9, BasketID: cart.BasketID, CartItemID: cart.Root.NodeID})
	must("reprice", err)
	for _, pl := range q.AvailablePricelists {
		if pl.PricelistID != cart.PricelistID {
			_, err = e.api.CPQ.ChangePricelist(ctx, sid, cpqID, quoteID, apiclient.ChangePricelistRequest{PricelistID: pl.PricelistID, CartID: cart.BasketID})
			must("price list", err)
			break
		}
	}
	customer, err := e.api.Customers.Get(ctx, customerID)
	must("customer", err)
	pc, err := e.api.CPQ.PackageConfig(ctx, sid, cpqID, tofID, quoteID)
	must("packages", err)
	if len(pc.Packages) > 0 && len(customer.Owners) > 0 {
		_, err = e.api.CPQ.AddPackage(ctx, sid, cpqID, apiclient.AddPackageRequest{CustomerID: customerID, CustomerQuoteID: q.CustomerQuoteID, PackageID: pc.Packages[0].PackageID, TOFID: tofID, QuoteID: quoteID, AssigneeUserID: customer.Owners[0].OwnerID})
		must("add package", err)
	}
	second, err := e.api.CPQ.AddCartToQuote(ctx, sid, cpqID, tofID, quoteID)
	must("second cart", err)
	must("remove item", e.api.CPQ.RemoveItem(ctx, sid, cpqID, quoteID, cart.BasketID, item.NodeID, cart.Root.NodeID))
	must("remove cart", e.api.CPQ.RemoveCart(ctx, sid, cpqID, quoteID, second.Carts[len(second.Carts)-1].BasketID))
	att, err := e.api.Attachments.Upload(ctx, quoteID, "OTHER", "note.txt", "text/plain", 5, strings.NewReader("hello"))
	must("upload", err)
	must("delete attachment", e.api.Attachments.Delete(ctx, att.AttachmentID, quoteID))
	_, err = e.api.Attachments.Upload(ctx, quoteID, "OTHER", "kept.txt", "text/plain", 5, strings.NewReader("hello"))
	must("upload", err)
	_, err = e.api.Customers.Update(ctx, apiclient.CustomerUpdate{ID: customerID, Name: customer.Name + " Renamed", Attributes: []byte(`{"tier":"gold","seats":12}`)})
	must("customer update", err)
	owners := []int64{}
	for _, o := range customer.Owners {
		owners = append(owners, o.OwnerID)
	}
	for id := int64(1001); id <= 1010 && len(owners) == len(customer.Owners); id++ {
		if !slices.Contains(owners, id) {
			owners = append(owners, id)
		}
	}
	_, err = e.api.Customers.SetOwners(ctx, customerID, owners)
	must("owners", err)
	res, err := e.api.Contracts.Generate(ctx, quoteID)
	must("generate", err)
	_ = res.Close()
	contract, err := e.api.Contracts.Get(ctx, res.ContractID)
	must("contract", err)
	_, err = e.api.Signatures.Create(ctx, apiclient.SignatureInput{ContractID: contract.ContractID, Email: "signer@example.com", SignerName: "Signer"})
	must("signature", err)
	must("remove signature", e.api.Signatures.Delete(ctx, contract.ContractID))
	// The signer's answers (docs/v2-assumptions.md A7): declined, expired, then signed.
	for _, answer := range []string{"DECLINED", "EXPIRED", "SIGNED"} {
		_, err = e.api.Signatures.Create(ctx, apiclient.SignatureInput{ContractID: contract.ContractID, Email: "signer@example.com", SignerName: "Signer"})
		must("signature", err)
		reason := ""
		if answer == "DECLINED" {
			reason = "Price too high"
		}
		must("answer "+answer, e.sim.AnswerSignature(contract.ContractNumber, answer, reason))
	}
	_, err = e.api.Contracts.Archive(ctx, contract.ContractNumber)
	must("archive", err)

	resp := e.p.get(t, e.user, auditURL(quoteID), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("audit: %d", resp.StatusCode)
	}
	doc := parseHTML(t, resp.body)
	if got := strings.TrimSpace(doc.Find(`[data-testid="audit-customer"]`).Text()); got != customer.Name+" Renamed" {
		t.Errorf("the audit names its customer %q, want its name %q", got, customer.Name+" Renamed")
	}
	timeline := doc.Find(`[data-testid="audit-timeline"]`)
	seen := map[string]bool{}
	var times []time.Time
	timeline.Find(`[data-testid="audit-entry"]`).Each(func(_ int, s *goquery.Selection) {
		seen[s.AttrOr("data-action", "")] = true
		at, err := time.Parse(time.RFC3339, s.Find("time").AttrOr("datetime", ""))
		if err != nil {
			t.Errorf("entry time: %v", err)
		}
		times = append(times, at)
		if shown := s.Find("time").Text(); !strings.Contains(shown, at.UTC().Format("15:04:05")) {
			t.Errorf("time %q is not shown to the second (%s)", shown, at.Format("15:04:05"))
		}
	})
	for _, action := range worklist.Actions() {
		if !seen[action] {
			t.Errorf("the audit has no %s entry", action)
		}
	}
	if !slices.IsSortedFunc(times, func(a, b time.Time) int { return b.Compare(a) }) {
		t.Errorf("entries are not newest first: %v", times)
	}
	// The v2's English sentences with internal ids give way to the changes in words.
	if n := timeline.Find(`[data-action="CART_ADDED"] [data-testid="audit-summary"], [data-action="DISCOUNTS_APPLIED"] [data-testid="audit-summary"]`).Length(); n != 0 {
		t.Errorf("%d entries told by their changes still show the v2's summary", n)
	}
	if timeline.Find(`[data-action="SIGNATURE_REQUESTED"] [data-testid="audit-summary"]`).Length() != 4 {
		t.Error("the signature request lost its summary (who was asked)")
	}
	if got := squash(timeline.Find(`[data-action="SIGNATURE_DECLINED"] [data-testid="audit-summary"]`).Text()); !strings.Contains(got, "Price too high") {
		t.Errorf("the decline's summary %q does not give the signer's reason", got)
	}
	timeline.Find(`[data-testid="audit-change"]`).Each(func(_ int, s *goquery.Selection) {
		text := strings.Join(strings.Fields(s.Text()), " ")
		if strings.ContainsAny(text, `{}[]"`) || strings.Contains(text, "discountId") {
			t.Errorf("change %s shows JSON: %q", s.AttrOr("data-field", ""), text)
		}
	})
	// Every change of a field, one a line: things removed later have no name left in the
	// quote's document (they are then "cart no. 12", never JSON), the others do.
	changeText := func(field string) string {
		var lines []string
		timeline.Find(`[data-testid="audit-change"][data-field="` + field + `"]`).Each(func(_ int, s *goquery.Selection) {
			lines = append(lines, strings.Join(strings.Fields(s.Text()), " "))
		})
		return strings.Join(lines, "\n")
	}
	extra := discounts[slices.IndexFunc(discounts, func(d apiclient.Discount) bool { return d.DiscountID == apply.ExtraDiscountList[0].DiscountID })]
	regular := discounts[slices.IndexFunc(discounts, func(d apiclient.Discount) bool { return d.DiscountID == apply.AppliedDiscounts[0] })]
	for field, want := range map[string]string{
		"extraDiscounts":   extra.Name,
		"appliedDiscounts": regular.Name,
		"carts":            cart.Root.Name,
		"attachments":      "kept.txt",
		"contract.status":  "Archived",
		"attributes":       "tier: gold",
		"owners":           customer.Owners[0].Name,
	} {
		if got := changeText(field); !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", field, got, want)
		}
	}
	if got := changeText("items[" + itoa64(cart.Root.NodeID) + "].activationPrice"); !strings.Contains(got, "€1,234.50") || !strings.Contains(got, cart.Root.Name) {
		t.Errorf("reprice: %q, want the product's name and €1,234.50", got)
	}
	if got := changeText("carts[" + itoa64(cart.BasketID) + "].quantity"); !strings.Contains(got, "Quantity of") || !strings.Contains(got, cart.Root.Name) {
		t.Errorf("quantity: %q", got)
	}
	// The worklist shows the same words.
	wl := parseHTML(t, e.p.get(t, e.user, "/audits/worklist?quotes="+itoa64(quoteID), nil).body)
	var lines []string
	wl.Find(`[data-testid="worklist-change"]`).Each(func(_ int, s *goquery.Selection) {
		lines = append(lines, strings.Join(strings.Fields(s.Text()), " "))
	})
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, "Negotiated discounts: (empty) → "+extra.Name) || strings.ContainsAny(all, `{}[]"@`) {
		t.Errorf("worklist changes:\n%s", all)
	}
	if zone := doc.Find(`[data-testid="audit-zone"]`).Text(); !strings.Contains(zone, "UTC") {
		t.Errorf("the time zone is not named: %q", zone)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// TestAuditTimesInThePersonsZone: with the zone cookie app.js writes, the audit shows its times
// in that zone and names it; a zone the database does not know falls back to UTC.
func TestAuditTimesInThePersonsZone(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	for zone, want := range map[string]*time.Location{"Asia/Tokyo": tokyo, "Mars/Olympus": time.UTC} {
		resp := e.p.get(t, e.user, auditURL(ref.QuoteID), map[string]string{"Cookie": "portal_tz=" + zone})
		doc := parseHTML(t, resp.body)
		if got := doc.Find(`[data-testid="audit-zone"]`).Text(); !strings.Contains(got, want.String()) {
			t.Errorf("%s: the zone is named %q, want %s", zone, got, want)
		}
		if got := doc.Find(`[data-testid="audit-zone"] [data-tz-name]`).Text(); got != want.String() {
			t.Errorf("%s: the zone's name app.js can rewrite is %q, want %s", zone, got, want)
		}
		if got := doc.Find("html").AttrOr("data-tz", ""); got != want.String() {
			t.Errorf("%s: the page says it was rendered in %q, want %s", zone, got, want)
		}
		entry := doc.Find(`[data-testid="audit-entry"] time`).First()
		at, err := time.Parse(time.RFC3339, entry.AttrOr("datetime", ""))
		if err != nil {
			t.Fatal(err)
		}
		local := at.In(want)
		if shown := entry.Text(); !strings.Contains(shown, local.Format("15:04:05")+" "+local.Format("MST")) {
			t.Errorf("%s: time %q, want %s", zone, shown, local.Format("15:04:05 MST"))
		}
	}
}
