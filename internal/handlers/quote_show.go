package handlers

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// showQuote is GET /quotes/:cpqId/:customerId/:quoteId, the quote's own address: it can be
// bookmarked, reloaded and sent to a colleague. The quote comes from call 10, which needs no
// configuration session (the spec has no "get quote" call: docs/v2-assumptions.md A4), so
// showing it never starts one; the first action does, when the user has none for this quote.
func (h *Handler) showQuote(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)

	// The customer's and configurator's names only label the page: fetched alongside the quote,
	// and the page is shown without them if they fail.
	// A placeholder ("Customer 42") labels the page only: the index and the recent items get the
	// names the v2 API gave, or nothing.
	var knownCustomer, knownCPQ string
	var wg sync.WaitGroup
	wg.Go(func() {
		if cu, err := h.api.Customers.Get(ctx, ref.CustomerID); err == nil {
			knownCustomer = cu.Name
		} else {
			h.log(c).Warn("customer name unavailable", slog.Any("err", err))
		}
	})
	user := customerCacheKey(c)
	wg.Go(func() {
		cfgs, err := h.configuratorList(ctx, user)
		if err != nil {
			h.log(c).Warn("configurator name unavailable", slog.Any("err", err))
			return
		}
		for _, cfg := range cfgs {
			if cfg.ID == ref.CPQID {
				knownCPQ = cfg.Name
			}
		}
	})
	q, err := h.api.CPQ.TOFList(ctx, ref.CPQID, ref.CustomerID, ref.QuoteID)
	wg.Wait()
	if err != nil {
		h.fail(c, fmt.Errorf("get quote %d (toflist): %w", ref.QuoteID, err))
		return
	}
	h.touchRecent(c, recentQuoteItem(ref, q, knownCustomer))
	h.indexQuote(c, ref.CPQID, ref.CustomerID, q, knownCustomer, knownCPQ, workindex.ActOpened)
	customerName := cmp.Or(knownCustomer, t(c, "quote.customer.numbered", idText(ref.CustomerID)))
	cpqName := cmp.Or(knownCPQ, t(c, "quote.configurator.numbered", idText(ref.CPQID)))
	h.changes.ObserveBy(quoteWatchKey(ref), customerCacheKey(c), changeTag(digestOf(q)))
	vm := quotePageVM(tr(c), ref, q, customerName, cpqName, hasCPQSession(c, cpqKeyOf(ref)))
	var stage workindex.Stage
	vm.ContractBanner, vm.ChangeConfirm, stage = h.contractBanner(c, q)
	vm.StageLabel, vm.StageLevel = stageLabel(tr(c), stage), stageLevel(stage)
	vm.ChangeScript = h.assets.URL("change-confirm.js")
	// The documents region comes from the same read of the quote: no second call 10 (issue 27).
	vm.Documents = contracts.DocumentsPartial(h.documentsVM(c.Request.Context(), tr(c),
		ref, q))
	h.renderPage(c, http.StatusOK, t(c, "quote.title", idText(ref.QuoteID)), layout.SectionQuotes, quotes.QuotePage(vm))
}

// quotePageVM builds the whole page.
func quotePageVM(tr *i18n.Translator, ref quotes.Ref, q *apiclient.Quote, customerName, cpqName string, hasSession bool) quotes.QuoteVM {
	v := newQuoteView(tr, ref, q, nil)
	vm := quotes.QuoteVM{
		Ref: ref, CustomerName: customerName, ConfiguratorName: cpqName, Status: q.Status,
		CustomerQuoteID: q.CustomerQuoteID, Carts: v.carts(false), Summary: v.summary(), TOFs: v.tofs(),
		Digest: digestOf(q), HasSession: hasSession, UpdatedAt: q.UpdatedAt,
	}
	vm.DigestTag = changeTag(vm.Digest)
	return vm
}
