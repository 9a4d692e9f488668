package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/palette"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// The command palette (Ctrl/Cmd+K): jump to a customer by name or id, a contract by number or id,
// a quote by id, or a page. GET /palette?q= answers the results partial to htmx and a page of
// links otherwise. It asks the same sources the pages use: the user's cached customer list
// (internal/customercache, as the customer list does), the contract calls of the contract search
// (by id, by number), and the quotes the user worked on (their session). A quote id the session
// does not know is resolved only when it is opened (GET /palette/quotes/:quoteId), because the v2
// API has no "get quote by id" call and resolving costs several calls (docs/accessibility.md).

const (
	// paletteCustomerLimit is how many customers the palette lists.
	paletteCustomerLimit = 6
	// paletteRecentQuotes is how many recent quotes an empty query lists.
	paletteRecentQuotes = 5
	// paletteCustomerWait bounds how long the palette waits for a customer list that is not
	// cached yet (the fetch goes on; the next keystroke finds it).
	paletteCustomerWait = 2 * time.Second
	// paletteMaxConfigurators bounds the configurators tried when a quote is resolved.
	paletteMaxConfigurators = 20
	// paletteViewLimit is how many saved views the palette lists.
	paletteViewLimit = 6
)

// palettePage is a page the palette can jump to: its name (a catalogue key) and the keywords
// matched too. The keywords are English and stay so in every language: the name is matched in the
// person's language, the keywords as a fallback that works for everyone.
type palettePage struct {
	labelKey, href, keywords string
	// tool is the back-office tool the page is (0: everyone's page); offered only to its roles.
	tool tool
}

// palettePages are the pages the palette offers, in the order shown.
var palettePages = [...]palettePage{
	{"palette.page.customers", "/customers", "customers customer list clients search find", 0},
	{"palette.page.new_customer", "/customers/new", "new customer create add client", 0},
	{"palette.page.new_quote", "/quotes/new", "new quote quotes start create configure configurator cpq offer", 0},
	{"palette.page.contracts", "/contracts", "contracts contract search number find", 0},
	{"palette.page.audits", "/audits", "audits validation audit quote history", 0},
	{"palette.page.worklist", "/audits/worklist", "audit worklist validation audits many quotes export review", 0},
	{"palette.page.batch_archive", "/contracts/batch-archive", "batch archive many contracts bulk month end", toolBatchArchive},
	{"customers.list.handover", "/customers/handover", "hand over handover customers owner reassign leaving", toolHandover},
	{"customers.list.import", "/customers/import", "import customers upload file csv xlsx spreadsheet", toolImport},
}

// showPalette answers GET /palette?q=: the results partial for htmx, a page otherwise.
func (h *Handler) showPalette(c *gin.Context) {
	query := strings.TrimSpace(c.Query("q"))
	if problem := paletteQueryProblem(query); !problem.IsZero() {
		if isHTMX(c) {
			h.fail(c, badRequestMessage(problem))
			return
		}
		vm := palette.PageVM{Error: problem.In(tr(c))}
		h.renderPage(c, http.StatusBadRequest, t(c, "palette.title"), layout.SectionNone, palette.Page(vm))
		return
	}
	results, err := h.paletteResults(c, query)
	if err != nil {
		h.fail(c, err)
		return
	}
	if isHTMX(c) {
		h.render(c, http.StatusOK, palette.Results(results))
		return
	}
	h.renderPage(c, http.StatusOK, t(c, "palette.title"), layout.SectionNone, palette.Page(palette.PageVM{Results: results}))
}

// paletteQueryProblem checks the query before anything is searched: valid UTF-8, at most
// palette.MaxQueryLen characters, no control characters. It returns the message for the user
// (the zero Message when the query is fine).
func paletteQueryProblem(query string) i18n.Message {
	if !utf8.ValidString(query) {
		return i18n.M("palette.error.invalid_chars")
	}
	if utf8.RuneCountInString(query) > palette.MaxQueryLen {
		return i18n.M("palette.error.too_long", palette.MaxQueryLen)
	}
	for _, r := range query {
		if unicode.IsControl(r) {
			return i18n.M("palette.error.invalid_chars")
		}
	}
	return i18n.Message{}
}

// paletteResults searches every source for query. The customer list and the contract calls run
// at the same time. A source that fails adds a note and the others are still shown; only a
// refused sign-in (or the user leaving) fails the whole answer, through the error edge.
func (h *Handler) paletteResults(c *gin.Context, query string) (palette.ResultsVM, error) {
	vm := palette.ResultsVM{Query: query}
	tr := tr(c)
	may := func(t tool) bool { return h.may(c, t) }
	stored := h.recentItems(c, "")
	recent := recentQuoteRefs(stored, auth.CurrentSession(c))
	recentContracts := paletteRecentContracts(tr, stored, query)
	// Catalogue names only when this replica already holds them: the palette answers as the
	// person types, so it sends no call for a nicety (unknown names get their numbered word).
	names := h.paletteNames(c, stored, paletteShownQuotes(recent, query))
	if query == "" {
		for _, ref := range recent[:min(len(recent), paletteRecentQuotes)] {
			vm.Items = append(vm.Items, quoteItem(tr, ref, names))
		}
		vm.Items = append(vm.Items, recentContracts[:min(len(recentContracts), paletteRecentQuotes)]...)
		vm.Items = append(vm.Items, h.paletteViews(c, "")...)
		vm.Items = append(vm.Items, matchingPages(tr, "", may)...)
		return vm, nil
	}

	ctx := h.apiContext(c)
	var (
		wg                     sync.WaitGroup
		customers, contracts   []palette.Item
		customerErr            error
		contractErrs           []error
		customerNote, contNote string
	)
	wg.Go(func() { customers, customerNote, customerErr = h.paletteCustomers(ctx, customerCacheKey(c), query) })
	viewer := h.viewer(c)
	wg.Go(func() { contracts, contNote, contractErrs = h.paletteContracts(ctx, viewer, query) })
	wg.Wait()
	for _, err := range append([]error{customerErr}, contractErrs...) {
		if err != nil && h.mustFailWhole(err) {
			return vm, err
		}
	}
	if customerErr != nil {
		h.log(c).Warn("palette: customer search failed", "err", customerErr)
	}
	for _, err := range contractErrs {
		if err != nil {
			h.log(c).Warn("palette: contract lookup failed", "err", err)
		}
	}

	vm.Items = append(vm.Items, customers...)
	vm.Items = append(vm.Items, contracts...)
	for _, it := range recentContracts {
		if !slices.ContainsFunc(vm.Items, func(other palette.Item) bool { return other.Href == it.Href }) {
			vm.Items = append(vm.Items, it)
		}
	}
	vm.Items = append(vm.Items, paletteQuotes(tr, query, recent, names)...)
	vm.Items = append(vm.Items, h.paletteViews(c, query)...)
	vm.Items = append(vm.Items, matchingPages(tr, query, may)...)
	for _, note := range []string{customerNote, contNote} {
		if note != "" {
			vm.Notes = append(vm.Notes, note)
		}
	}
	return vm, nil
}

// paletteCustomers searches the user's customer list: an exact id first, then every customer
// whose name, tax id, e-mail or id contains all the words typed (the customer list's own search).
func (h *Handler) paletteCustomers(ctx context.Context, user, query string) ([]palette.Item, string, error) {
	waitCtx, cancel := context.WithTimeout(ctx, paletteCustomerWait)
	defer cancel()
	snap, err := h.customers.Get(waitCtx, user)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, customercache.ErrFetchFailed) && ctx.Err() == nil {
			return nil, i18n.T(ctx, "palette.note.customers_loading"), nil
		}
		if errors.Is(err, customercache.ErrFetchFailed) {
			// The v2 API's own error is wrapped inside: a refused token must fail the whole answer.
			return nil, i18n.T(ctx, "palette.note.customers_failed", classify(err).message.In(i18n.From(ctx))), err
		}
		return nil, "", err
	}
	var items []palette.Item
	seen := map[int32]bool{}
	if id, err := parseID(query, "id", math.MaxInt32); err == nil {
		if row, ok := snap.Lookup(int32(id)); ok {
			items = append(items, customerItem(row))
			seen[row.ID] = true
		}
	}
	res := snap.Search(customercache.Query{Text: query, Sort: customercache.SortByName, Limit: paletteCustomerLimit + 1})
	for _, row := range res.Rows {
		if len(items) >= paletteCustomerLimit {
			break
		}
		if !seen[row.ID] {
			items = append(items, customerItem(row))
			seen[row.ID] = true
		}
	}
	note := ""
	if res.Total > len(items) {
		note = i18n.T(ctx, "palette.note.customers_more", res.Total, len(items))
	}
	return items, note, nil
}

func customerItem(row customercache.Row) palette.Item {
	detail := []string{"#" + strconv.FormatInt(int64(row.ID), 10)}
	for _, s := range []string{row.TaxID, row.City} {
		if s != "" {
			detail = append(detail, i18n.Isolate(s))
		}
	}
	return palette.Item{Kind: palette.KindCustomer, Label: row.Name, Detail: strings.Join(detail, " · "), Href: customerHref(row.ID)}
}

// paletteContracts looks the query up as a contract id (all digits) and as a contract number
// (the calls of the contract search, lookupContract). Only text that can be a contract number is
// sent: no spaces, at least one digit (contract numbers look like C-2026-000042), so ordinary
// words typed to find a customer cost no v2 call. Not found is no result, not an error; a
// contract id the v2 API refuses the viewer (403) is forgotten for them at once (a 404 of a
// typed number is only no result: it would fill the refusals with every number typed).
func (h *Handler) paletteContracts(ctx context.Context, v workindex.Viewer, query string) ([]palette.Item, string, []error) {
	byID := int32(0)
	if id, err := parseID(query, "id", math.MaxInt32); err == nil {
		byID = int32(id)
	}
	byNumber := mayBeContractNumber(query)
	if byID == 0 && !byNumber {
		return nil, "", nil
	}
	var (
		wg               sync.WaitGroup
		idDoc, numberDoc *apiclient.Contract
		idErr, numberErr error
		items            []palette.Item
		note             string
		failures         []error
	)
	if byID != 0 {
		wg.Go(func() { idDoc, idErr = h.api.Contracts.Get(ctx, byID) })
	}
	if byNumber {
		wg.Go(func() { numberDoc, numberErr = h.api.Contracts.GetByNumber(ctx, query) })
	}
	wg.Wait()
	if byID != 0 && h.work != nil && errors.Is(idErr, apiclient.ErrForbidden) {
		if err := h.work.Forget(ctx, v, workindex.KindContract, int64(byID)); err != nil {
			h.logger.Warn("work index: row not forgotten", "id", byID, "err", err)
		}
	}
	if idErr == nil && idDoc != nil {
		items = append(items, contractItem(i18n.From(ctx), idDoc))
	}
	if numberErr == nil && numberDoc != nil && (idDoc == nil || idDoc.ContractID != numberDoc.ContractID) {
		items = append(items, contractItem(i18n.From(ctx), numberDoc))
	}
	for _, err := range []error{idErr, numberErr} {
		switch {
		case err == nil, errors.Is(err, apiclient.ErrNotFound):
		case errors.Is(err, apiclient.ErrForbidden):
			// A contract the person may not read is one they cannot find: saying the search failed
			// would tell them it exists (issue 38).
		case errors.Is(err, apiclient.ErrBadRequest) && err == numberErr:
			// The service refuses this text as a contract number: no contract has it.
		default:
			failures = append(failures, err)
		}
	}
	for _, err := range failures {
		if !h.mustFailWhole(err) {
			note = i18n.T(ctx, "palette.note.contracts_failed", classify(err).message.In(i18n.From(ctx)))
		}
	}
	return items, note, failures
}

// mayBeContractNumber reports whether query could be a contract number worth a v2 call: one word
// with at least one digit, acceptable as a path segment (validateContractNumber).
func mayBeContractNumber(query string) bool {
	if query == "." || query == ".." || validateContractNumber(query) != nil {
		return false
	}
	return !strings.ContainsFunc(query, unicode.IsSpace) && strings.ContainsFunc(query, unicode.IsDigit)
}

func contractItem(tr *i18n.Translator, doc *apiclient.Contract) palette.Item {
	detail := []string{"#" + strconv.FormatInt(int64(doc.ContractID), 10)}
	if doc.Customer.Name != "" {
		detail = append(detail, i18n.Isolate(doc.Customer.Name))
	}
	if doc.Status != "" {
		detail = append(detail, strings.ToLower(strings.ReplaceAll(doc.Status, "_", " ")))
	}
	label := tr.T("palette.item.contract", doc.ContractNumber)
	if doc.ContractNumber == "" {
		label = tr.T("palette.item.contract", strconv.FormatInt(int64(doc.ContractID), 10))
	}
	return palette.Item{Kind: palette.KindContract, Label: label, Detail: strings.Join(detail, " · "), Href: contractPath(doc.ContractID)}
}

// paletteQuotes offers the quotes of the user's session whose id contains the digits typed, and,
// for a whole quote id the session does not know, "Quote N", resolved when opened.
func paletteQuotes(tr *i18n.Translator, query string, recent []quotes.Ref, names paletteNames) []palette.Item {
	if query == "" || strings.ContainsFunc(query, func(r rune) bool { return r < '0' || r > '9' }) {
		return nil
	}
	var items []palette.Item
	exact := false
	for _, ref := range recent {
		id := strconv.FormatInt(ref.QuoteID, 10)
		if strings.Contains(id, query) {
			items = append(items, quoteItem(tr, ref, names))
			exact = exact || id == query
		}
	}
	if id, err := parseID(query, "quoteId", math.MaxInt64); err == nil && !exact {
		items = append(items, palette.Item{Kind: palette.KindQuote, Label: tr.T("palette.item.quote", strconv.FormatInt(id, 10)),
			Detail: tr.T("palette.item.quote_by_number"), Href: "/palette/quotes/" + strconv.FormatInt(id, 10)})
	}
	return items
}

// paletteNames are the names the palette knows without a call: product catalogues this replica
// holds, customers of the user's recent items (either may be empty).
type paletteNames struct {
	catalogues map[int32]string
	customers  map[int32]string
}

// paletteNames are the names of the recent quotes' customers and catalogues the portal knows
// without a v2 call (issue 33: never "customer #60" when the name can be known): the recent items,
// the user's cached customer list, the catalogue names this replica holds, and the work index's
// row of the quote as the person's own token read it.
// shown are the recent quotes the answer lists (paletteShownQuotes); at most paletteNameLookups
// of them are looked up in the index (one indexed read each).
func (h *Handler) paletteNames(c *gin.Context, stored []recent.Item, shown []quotes.Ref) paletteNames {
	names := paletteNames{catalogues: maps.Clone(h.configuratorNamesHeld(c)), customers: recentCustomerNames(stored)}
	if names.catalogues == nil {
		names.catalogues = map[int32]string{}
	}
	v := h.viewer(c)
	lookups := 0
	for _, ref := range shown {
		if names.customers[ref.CustomerID] == "" {
			names.customers[ref.CustomerID] = h.customerNameHeld(c, ref.CustomerID)
		}
		if h.work == nil || lookups >= paletteNameLookups || (names.customers[ref.CustomerID] != "" && names.catalogues[ref.CPQID] != "") {
			continue
		}
		lookups++
		if row, ok := h.work.Lookup(c.Request.Context(), v, workindex.KindQuote, ref.QuoteID); ok {
			names.customers[ref.CustomerID] = cmp.Or(names.customers[ref.CustomerID], row.Customer)
			names.catalogues[ref.CPQID] = cmp.Or(names.catalogues[ref.CPQID], row.Configurator)
		}
	}
	return names
}

// paletteNameLookups bounds the index reads that name the recent quotes of one answer.
const paletteNameLookups = 10

// paletteShownQuotes are the recent quotes an answer lists: the first few for an empty query,
// else those whose number contains the digits typed (paletteQuotes).
func paletteShownQuotes(recent []quotes.Ref, query string) []quotes.Ref {
	if query == "" {
		return recent[:min(len(recent), paletteRecentQuotes)]
	}
	var shown []quotes.Ref
	for _, ref := range recent {
		if strings.Contains(strconv.FormatInt(ref.QuoteID, 10), query) {
			shown = append(shown, ref)
		}
	}
	return shown
}

// recentCustomerNames are the customers' names the user's recent items carry.
func recentCustomerNames(items []recent.Item) map[int32]string {
	names := make(map[int32]string, len(items))
	for _, it := range items {
		if it.Customer != "" && it.CustomerID > 0 {
			names[it.CustomerID] = it.Customer
		}
	}
	return names
}

// quoteItem is a recent quote: its number, its customer and its product catalogue, by name when
// names knows them, else by number.
func quoteItem(tr *i18n.Translator, ref quotes.Ref, names paletteNames) palette.Item {
	catalogue := names.catalogues[ref.CPQID]
	if catalogue == "" {
		catalogue = tr.T("customer.configurator_id", strconv.FormatInt(int64(ref.CPQID), 10))
	}
	detail := tr.T("palette.item.recent_quote", strconv.FormatInt(int64(ref.CustomerID), 10), catalogue)
	if customer := names.customers[ref.CustomerID]; customer != "" {
		detail = tr.T("palette.item.recent_quote_named", i18n.Isolate(customer), i18n.Isolate(catalogue))
	}
	return palette.Item{Kind: palette.KindQuote, Label: tr.T("palette.item.quote", strconv.FormatInt(ref.QuoteID, 10)),
		Detail: detail, Href: ref.URL()}
}

// paletteRecentContracts are the user's recent contracts whose number contains query (all of
// them for an empty query), most recent first.
func paletteRecentContracts(tr *i18n.Translator, items []recent.Item, query string) []palette.Item {
	var out []palette.Item
	for _, it := range items {
		if it.Kind != recent.KindContract || !strings.Contains(strings.ToLower(it.Number), strings.ToLower(query)) {
			continue
		}
		detail := tr.T("palette.item.recent_contract")
		if it.Customer != "" {
			detail += " · " + i18n.Isolate(it.Customer)
		}
		out = append(out, palette.Item{Kind: palette.KindContract, Label: tr.T("palette.item.contract", it.Number), Detail: detail, Href: contractPath(int32(it.ID))})
	}
	return out
}

// recentQuoteRefs are the user's recent quotes (internal/recent), then the quotes of their
// configuration sessions not among them, most recent first.
func recentQuoteRefs(items []recent.Item, s *session.Session) []quotes.Ref {
	var refs []quotes.Ref
	for _, it := range items {
		if it.Kind == recent.KindQuote {
			refs = append(refs, quotes.Ref{CPQID: it.CPQID, CustomerID: it.CustomerID, QuoteID: it.ID})
		}
	}
	if s == nil {
		return refs
	}
	for _, e := range s.CPQ {
		ref := quotes.Ref{CPQID: e.Key.CPQID, CustomerID: e.Key.CustomerID, QuoteID: e.Key.QuoteID}
		if e.Key.QuoteID != 0 && !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return refs
}

// matchingPages are the pages whose name or keywords contain every word of query, of those the
// person may open (may reports whether their roles open a back-office tool).
func matchingPages(tr *i18n.Translator, query string, may func(tool) bool) []palette.Item {
	terms := customercache.SearchTerms(query)
	var items []palette.Item
	for _, p := range palettePages {
		if p.tool != 0 && !may(p.tool) {
			continue
		}
		label := tr.T(p.labelKey)
		text := strings.ToLower(label + " " + p.keywords)
		if !slices.ContainsFunc(terms, func(t string) bool { return !strings.Contains(text, t) }) {
			items = append(items, palette.Item{Kind: palette.KindPage, Label: label, Detail: p.href, Href: p.href})
		}
	}
	return items
}

// openPaletteQuote answers GET /palette/quotes/:quoteId: the quote page's address needs the
// configurator and the customer too. A quote of the user's session is known; otherwise the
// quote's validation audit names its customer (A7), and the quote is looked up (call 10) in the
// configurators the customer names (A8), then in every other configurator, until one has it (at
// most paletteMaxConfigurators calls). Not found anywhere: 404.
func (h *Handler) openPaletteQuote(c *gin.Context) {
	quoteID, err := parseInt64ID(c, "quoteId")
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, ref := range recentQuoteRefs(h.recentItems(c, recent.KindQuote), auth.CurrentSession(c)) {
		if ref.QuoteID == quoteID {
			c.Redirect(http.StatusSeeOther, ref.URL())
			return
		}
	}
	notFound := func() {
		h.renderError(c, http.StatusNotFound, t(c, "palette.error.quote_not_found.title"),
			t(c, "palette.error.quote_not_found.message", strconv.FormatInt(quoteID, 10)))
	}
	ctx := h.apiContext(c)
	audit, err := h.api.Contracts.ValidationAudit(ctx, quoteID)
	switch {
	case errors.Is(err, apiclient.ErrNotFound):
		notFound()
		return
	case err != nil:
		h.fail(c, fmt.Errorf("palette: find the customer of quote %d: %w", quoteID, err))
		return
	case audit.CustomerID < 1:
		notFound()
		return
	}
	cpqID, found, err := h.findQuoteConfigurator(ctx, customerCacheKey(c), audit.CustomerID, quoteID)
	switch {
	case err != nil:
		h.fail(c, err)
	case found:
		c.Redirect(http.StatusSeeOther, quotes.Ref{CPQID: cpqID, CustomerID: audit.CustomerID, QuoteID: quoteID}.URL())
	default:
		notFound()
	}
}

// findQuoteConfigurator finds the configurator that holds a quote of customerID: first among the
// configurators the customer names (the likely ones), then among every other configurator, since
// a quote may be started in a configurator its customer's record does not list (A8). It asks call
// 10 at most paletteMaxConfigurators times; found is false when none has the quote.
func (h *Handler) findQuoteConfigurator(ctx context.Context, user string, customerID int32, quoteID int64) (cpqID int32, found bool, err error) {
	tried := map[int32]bool{}
	for phase := range 2 {
		var candidates []int32
		if phase == 0 {
			candidates, err = h.configuratorsOfCustomer(ctx, user, customerID)
		} else {
			candidates, err = h.allConfigurators(ctx)
		}
		if err != nil {
			return 0, false, fmt.Errorf("palette: configurators for quote %d: %w", quoteID, err)
		}
		for _, id := range candidates {
			if tried[id] || len(tried) >= paletteMaxConfigurators {
				continue
			}
			tried[id] = true
			_, err := h.api.CPQ.TOFList(ctx, id, customerID, quoteID)
			switch {
			case err == nil:
				return id, true, nil
			case !errors.Is(err, apiclient.ErrNotFound):
				return 0, false, fmt.Errorf("palette: look up quote %d in configurator %d: %w", quoteID, id, err)
			}
		}
	}
	return 0, false, nil
}

// configuratorsOfCustomer lists the configurators a customer belongs to: from the user's cached
// list when it is in memory, else from the customer (A8 cpqIds); none when the customer names none
// (findQuoteConfigurator then tries every configurator, listed once).
func (h *Handler) configuratorsOfCustomer(ctx context.Context, user string, customerID int32) ([]int32, error) {
	if snap, ok := h.customers.Peek(user); ok {
		if row, ok := snap.Lookup(customerID); ok && len(row.CPQIDs) > 0 {
			return row.CPQIDs, nil
		}
	}
	customer, err := h.api.Customers.Get(ctx, customerID)
	switch {
	case err == nil && len(customer.CPQIDs) > 0:
		return customer.CPQIDs, nil
	case err != nil && !errors.Is(err, apiclient.ErrNotFound):
		return nil, err
	}
	return nil, nil
}

// allConfigurators lists the ids of every configurator (call 1).
func (h *Handler) allConfigurators(ctx context.Context) ([]int32, error) {
	list, err := h.api.CPQ.List(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]int32, 0, len(list))
	for _, cfg := range list {
		ids = append(ids, cfg.ID)
	}
	return ids, nil
}

// paletteViews are the person's saved views whose name contains the query (any case; every one,
// up to paletteViewLimit, for an empty query), by name: a saved view is a list with its filters.
func (h *Handler) paletteViews(c *gin.Context, query string) []palette.Item {
	if h.views == nil {
		return nil
	}
	views, err := h.views.List(c.Request.Context(), auth.CurrentUser(c).Subject, "")
	if err != nil {
		h.log(c).Warn("palette: saved views not listed", "err", err)
		return nil
	}
	trl := tr(c)
	folded := strings.ToLower(query)
	var items []palette.Item
	for _, v := range views {
		if len(items) == paletteViewLimit {
			break
		}
		if !strings.Contains(strings.ToLower(v.Name), folded) {
			continue
		}
		list := trl.T("work.quotes.title")
		switch v.List {
		case viewListContracts:
			list = trl.T("work.contracts.title")
		case viewListCustomers:
			list = trl.T("customers.list.title")
		case viewListAudits:
			list = trl.T("worklist.title")
		}
		items = append(items, palette.Item{Kind: palette.KindView, Label: v.Name, Detail: list, Href: viewLink(v, "").Href})
	}
	return items
}
