package handlers

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Starting a quote: choose a configurator (call 1) and a customer (the configurator's online
// customer search), start the configuration session (call 2, its TOFs shown), pick a TOF's main
// product (call 9) and create the quote with its first cart (call 3).
//
// /quotes/new?customerId=<id>[&cpqId=<id>] is how the customers area starts a quote for a
// customer: the form opens with that customer (and configurator) chosen.

// showQuoteStart is GET /quotes and GET /quotes/new.
func (h *Handler) showQuoteStart(c *gin.Context) {
	var cpqID, customerID int32
	var err error
	if c.Query("cpqId") != "" {
		if cpqID, err = queryID32(c, "cpqId"); err != nil {
			h.fail(c, err)
			return
		}
	}
	if c.Query("customerId") != "" {
		if customerID, err = queryID32(c, "customerId"); err != nil {
			h.fail(c, err)
			return
		}
	}
	ctx, user := h.apiContext(c), customerCacheKey(c)
	// Call 1 and, when the page starts from a customer, that customer's read go side by side; the
	// configurator list is reused per user for a short time (configuratorCache), so a start page
	// after the customers area makes one round trip (issue 27).
	var configurators []apiclient.Configurator
	var customer *apiclient.Customer
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if configurators, err = h.configuratorList(gctx, user); err != nil {
			return fmt.Errorf("list configurators: %w", err)
		}
		return nil
	})
	if customerID != 0 {
		g.Go(func() (err error) {
			if customer, err = h.api.Customers.Get(gctx, customerID); err != nil {
				return fmt.Errorf("get customer %d: %w", customerID, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		h.fail(c, err)
		return
	}
	vm := quotes.StartVM{Recent: h.recentRows(c, h.recentItems(c, recent.KindQuote))}
	known := map[int32]bool{}
	for _, cfg := range configurators {
		known[cfg.ID] = true
		vm.Configurators = append(vm.Configurators, components.Option{Value: strconv.FormatInt(int64(cfg.ID), 10), Label: cfg.Name})
	}
	if cpqID != 0 && !known[cpqID] {
		h.fail(c, badRequest("quote.error.no_configurator", cpqID))
		return
	}

	if customer != nil {
		// Started from a customer: offer that customer, on the configurator asked for, else the
		// first of the customer's configurators.
		for _, id := range customer.CPQIDs {
			if cpqID == 0 && known[id] {
				cpqID = id
			}
		}
		vm.Customers = quotes.CustomerResultsVM{Customers: []quotes.CustomerChoice{customerChoice(customer)}, Selected: customer.ID,
			Message: i18n.M("start.search_other")}
	}
	if cpqID == 0 && len(configurators) > 0 {
		cpqID = configurators[0].ID
	}
	vm.CPQID = cpqID
	vm.Customers.CPQID = cpqID
	if customerID == 0 && cpqID != 0 {
		vm.Customers, err = h.searchCustomers(c, cpqID, "")
		if err != nil {
			h.fail(c, err)
			return
		}
	}
	h.renderPage(c, http.StatusOK, t(c, "quotes.title"), layout.SectionQuotes, quotes.StartPage(vm))
}

// customerChoice is a customer as the start form offers it.
func customerChoice(cu *apiclient.Customer) quotes.CustomerChoice {
	return quotes.CustomerChoice{ID: cu.ID, Name: cu.Name, TaxID: cu.TaxID, City: cu.Address.City}
}

// searchCustomers runs the configurator's online customer search (A8: at most 50).
func (h *Handler) searchCustomers(c *gin.Context, cpqID int32, query string) (quotes.CustomerResultsVM, error) {
	vm := quotes.CustomerResultsVM{CPQID: cpqID, Query: query}
	found, err := h.api.Customers.Search(h.apiContext(c), int64(cpqID), query)
	if err != nil {
		return vm, fmt.Errorf("search customers of configurator %d: %w", cpqID, err)
	}
	for i := range found {
		vm.Customers = append(vm.Customers, customerChoice(&found[i]))
	}
	switch {
	case len(found) == 0 && query != "":
		vm.Message = i18n.M("start.search_none", query)
	case len(found) == 0:
		vm.Message = i18n.M("start.search_no_customers")
	case len(found) >= 50:
		vm.Message = i18n.M("start.search_first", 50)
	}
	if len(found) == 1 {
		vm.Selected = found[0].ID
	}
	return vm, nil
}

// customersFound announces how many customers a search found, in the right grammatical number.
func customersFound(tr *i18n.Translator, n int) string {
	return tr.Plural(n, "start.customers_found.one", "start.customers_found.other")
}

// searchQuoteCustomers is GET /quotes/new/customers?cpqId=&q=[&customerId=]: the customer
// choice, replaced as the user types.
func (h *Handler) searchQuoteCustomers(c *gin.Context) {
	cpqID, err := queryID32(c, "cpqId")
	if err != nil {
		h.fail(c, err)
		return
	}
	query := strings.TrimSpace(c.Query("q"))
	if !validText(query, maxSearchRunes) {
		h.fail(c, badRequest("quote.error.search_text", maxSearchRunes))
		return
	}
	vm, err := h.searchCustomers(c, cpqID, query)
	if err != nil {
		h.fail(c, err)
		return
	}
	// The customer chosen before this search stays chosen when the search still finds them.
	if chosen, ok := formID32(strings.TrimSpace(c.Query("customerId"))); ok {
		for _, cu := range vm.Customers {
			if cu.ID == chosen {
				vm.Selected = chosen
			}
		}
	}
	if query != "" {
		announce(c, customersFound(tr(c), len(vm.Customers)))
	}
	h.render(c, http.StatusOK, quotes.CustomerResults(vm))
}

// startQuoteSession is POST /quotes/new (cpqId, customerId): it starts the configuration session
// (call 2) and shows the configurator's offer types.
func (h *Handler) startQuoteSession(c *gin.Context) {
	if err := parseForm(c); err != nil {
		h.fail(c, err)
		return
	}
	var errs formErrors
	cpqID, ok := formID32(formValue(c, "cpqId"))
	if !ok {
		errs.add("quote-cpq", t(c, "start.form.configurator"))
	}
	customerID, okCustomer := formID32(formValue(c, "customerId"))
	if !okCustomer {
		errs.add("quote-customer-search", t(c, "start.form.customer"))
	}
	if len(errs) > 0 {
		h.badForm(c, "quote-start-form", errs)
		return
	}
	// The names only label the step: they are read alongside call 2 (the configurator's from the
	// user's cached list), never after it, and the step is shown without them if they fail.
	ctx, user := h.apiContext(c), customerCacheKey(c)
	customerName := t(c, "start.customer_numbered", idText(customerID))
	configuratorName := t(c, "start.configurator_numbered", idText(cpqID))
	var labels sync.WaitGroup
	labels.Go(func() {
		if cu, err := h.api.Customers.Get(ctx, customerID); err == nil {
			customerName = cu.Name
		} else {
			h.log(c).Warn("customer name unavailable", slog.Any("err", err))
		}
	})
	labels.Go(func() {
		if cfgs, err := h.configuratorList(ctx, user); err == nil {
			for _, cfg := range cfgs {
				if cfg.ID == cpqID {
					configuratorName = cfg.Name
				}
			}
		}
	})
	res, err := h.startCPQSession(c, session.CPQKey{CPQID: cpqID, CustomerID: customerID})
	labels.Wait()
	if err != nil {
		h.fail(c, err)
		return
	}
	vm := quotes.StartTOFsVM{CPQID: cpqID, CustomerID: customerID, CustomerName: customerName,
		ConfiguratorName: configuratorName}
	for _, tof := range res.TOFList {
		name := tof.Name
		if name == "" {
			name = t(c, "quote.tof.numbered", idText(tof.ID))
		}
		vm.TOFs = append(vm.TOFs, quotes.TOF{ID: tof.ID, Name: name, Description: tof.Description})
	}
	announce(c, t(c, "start.session_started"))
	if !isHTMX(c) {
		h.renderPage(c, http.StatusOK, t(c, "quotes.title"), layout.SectionQuotes, quotes.StartTOFsPartial(vm))
		return
	}
	h.render(c, http.StatusOK, quotes.StartTOFsPartial(vm))
}

// startParams reads /quotes/new/:cpqId/:customerId/tofs/:tofId.
func startParams(c *gin.Context) (cpqID, customerID, tofID int32, err error) {
	if cpqID, err = parseInt32ID(c, "cpqId"); err != nil {
		return
	}
	if customerID, err = parseInt32ID(c, "customerId"); err != nil {
		return
	}
	tofID, err = parseInt32ID(c, "tofId")
	return
}

// showStartProducts is GET /quotes/new/:cpqId/:customerId/tofs/:tofId/products: the TOF's main
// products (call 9) to create the quote with.
func (h *Handler) showStartProducts(c *gin.Context) {
	cpqID, customerID, tofID, err := startParams(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	key := session.CPQKey{CPQID: cpqID, CustomerID: customerID}
	sessionID, err := h.cpqSession(c, key)
	if err != nil {
		h.fail(c, err)
		return
	}
	products, err := h.api.CPQ.ValidProducts(h.apiContext(c), sessionID, cpqID, tofID)
	if err != nil {
		h.failCPQ(c, key, startAlert(cpqID, customerID), "", nil, fmt.Errorf("valid products of TOF %d: %w", tofID, err))
		return
	}
	vm := quotes.StartProductsVM{CPQID: cpqID, CustomerID: customerID, TOF: quotes.TOF{ID: tofID, Name: t(c, "quote.tof.numbered", idText(tofID))}}
	for _, p := range products {
		switch p.Kind {
		case "MAIN":
			vm.Products = append(vm.Products, productVM(p))
			if p.Default || vm.Selected == 0 {
				vm.Selected = p.ProductID
			}
		case "ADDON":
			vm.Addons++
		}
	}
	if name := tofNameOf(c); name != "" {
		vm.TOF.Name = name
	}
	h.render(c, http.StatusOK, quotes.StartProductsPartial(vm))
}

// tofNameOf is the TOF's name the page sent along (display only), when it is sensible text.
func tofNameOf(c *gin.Context) string {
	name := strings.TrimSpace(c.Query("tofName"))
	if name == "" || !validText(name, 200) {
		return ""
	}
	return name
}

// productVM is a product of call 9 for the view.
func productVM(p apiclient.Product) quotes.Product {
	return quotes.Product{ProductID: p.ProductID, TOFProductID: p.TOFProductID, Name: p.Name, Description: p.Description,
		Kind: p.Kind, Default: p.Default, Activation: cents(p.ActivationPrice), Recurring: cents(p.RecurringPrice)}
}

// findProduct returns the product of the list with the id and kind.
func findProduct(products []apiclient.Product, productID int32, kind string) (apiclient.Product, bool) {
	for _, p := range products {
		if p.ProductID == productID && p.Kind == kind {
			return p, true
		}
	}
	return apiclient.Product{}, false
}

// createQuote is POST /quotes/new/:cpqId/:customerId/tofs/:tofId (productId, label,
// customerQuoteId): call 3 creates the quote with its first cart; the configuration session is
// then kept under the quote's key and the browser goes to the quote's page.
func (h *Handler) createQuote(c *gin.Context) {
	cpqID, customerID, tofID, err := startParams(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := parseForm(c); err != nil {
		h.fail(c, err)
		return
	}
	const form = "quote-create-form"
	var errs formErrors
	productID, ok := formID32(formValue(c, "productId"))
	if !ok {
		errs.add("quote-products", t(c, "start.form.product"))
	}
	label := formValue(c, "label")
	if !validText(label, maxLabelRunes) {
		errs.add("quote-label", t(c, "start.form.label", maxLabelRunes))
	}
	var reference int64
	if raw := formValue(c, "customerQuoteId"); raw != "" {
		if !digitsOnly.MatchString(raw) {
			errs.add("quote-reference", t(c, "start.form.reference"))
		} else if reference, err = strconv.ParseInt(raw, 10, 64); err != nil {
			errs.add("quote-reference", t(c, "start.form.reference_large"))
		}
	}
	if len(errs) > 0 {
		h.badForm(c, form, errs)
		return
	}

	key := session.CPQKey{CPQID: cpqID, CustomerID: customerID}
	alert := startAlert(cpqID, customerID)
	sessionID, err := h.cpqSession(c, key)
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	// The products step sends each main product's TOF product id along (tofProduct=<productId>:<id>),
	// so creating the quote needs no second call 9 (issue 27). It is the user's own input, checked
	// by the v2 API like any other field of call 3; without it, call 9 tells.
	product, ok := tofProductOf(c, productID)
	if !ok {
		products, err := h.api.CPQ.ValidProducts(ctx, sessionID, cpqID, tofID)
		if err != nil {
			h.failCPQ(c, key, alert, form, nil, fmt.Errorf("valid products of TOF %d: %w", tofID, err))
			return
		}
		if product, ok = findProduct(products, productID, "MAIN"); !ok {
			h.badForm(c, form, formErrors{{FieldID: "quote-products", Message: t(c, "start.form.product_listed")}})
			return
		}
	}
	q, err := h.api.CPQ.AddCart(ctx, sessionID, cpqID, tofID, apiclient.AddCartRequest{
		ProductID: product.ProductID, TOFProductID: product.TOFProductID, CustomerID: customerID,
		CustomerQuoteID: reference, Label: label,
	})
	if err != nil {
		h.failCPQ(c, key, alert, form, map[string]string{"label": "quote-label", "customerQuoteId": "quote-reference"},
			fmt.Errorf("create quote: %w", err))
		return
	}
	if q.QuoteID < 1 {
		h.fail(c, fmt.Errorf("create quote: %w: no quoteId", apiclient.ErrMalformedResponse))
		return
	}
	ref := quotes.Ref{CPQID: cpqID, CustomerID: customerID, QuoteID: q.QuoteID}
	// From now on the session serves this quote (and the next new quote starts its own).
	if s := auth.CurrentSession(c); s != nil && s.PromoteCPQSession(key, cpqKeyOf(ref), h.now()) {
		if err := h.saveUserSession(c); err != nil {
			h.fail(c, err)
			return
		}
	}
	h.log(c).Info("quote created", slog.Int64("quote_id", q.QuoteID))
	h.indexQuote(c, cpqID, customerID, q, "", "", workindex.ActCreated)
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, ref.URL())
		return
	}
	c.Header("HX-Redirect", ref.URL())
	c.Status(http.StatusOK)
}

// tofProductOf reads the chosen main product's TOF product id from the form's tofProduct values
// ("<productId>:<tofProductId>", one per product the step offered).
func tofProductOf(c *gin.Context, productID int32) (apiclient.Product, bool) {
	for _, v := range c.Request.PostForm["tofProduct"] {
		main, tof, ok := strings.Cut(v, ":")
		if !ok {
			continue
		}
		if id, ok := formID32(main); !ok || id != productID {
			continue
		}
		if tofProductID, ok := formID32(tof); ok {
			return apiclient.Product{ProductID: productID, TOFProductID: tofProductID, Kind: "MAIN"}, true
		}
	}
	return apiclient.Product{}, false
}

// openQuote is GET /quotes/open?cpqId=&customerId=&quoteId=: the quote's address from its numbers.
func (h *Handler) openQuote(c *gin.Context) {
	cpqID, err := queryID32(c, "cpqId")
	if err != nil {
		h.fail(c, err)
		return
	}
	customerID, err := queryID32(c, "customerId")
	if err != nil {
		h.fail(c, badRequest("quote.error.customer_number"))
		return
	}
	quoteID, ok := formID(strings.TrimSpace(c.Query("quoteId")), 1<<63-1)
	if !ok {
		h.fail(c, badRequest("quote.error.quote_number"))
		return
	}
	c.Redirect(http.StatusSeeOther, quotes.Ref{CPQID: cpqID, CustomerID: customerID, QuoteID: quoteID}.URL())
}
