package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/workindex"
)

// TestRecentQuotesShowTheWorkIndexStageAndTotalsInTheReadersLanguage: "Your recent quotes" on an
// Italian page names the stage in Italian, the way the work lists do, with the totals the work
// index holds now (not those of the first opening); the quote page's badge names the same stage
// as its contract banner (issue 33, item 5).
func TestRecentQuotesShowTheWorkIndexStageAndTotalsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, it := quoteTranslators(t)
	ref := e.newQuote(t)
	recentRow := func() *goquery.Selection {
		t.Helper()
		start := quoteMust(t, "quotes page", e.p.get(t, e.user, "/quotes", italian), http.StatusOK)
		var row *goquery.Selection
		start.Find(`[data-testid="quote-recent-row"]`).Each(func(_ int, s *goquery.Selection) {
			if s.Find(`[data-testid="quote-recent-link"]`).AttrOr("href", "") == ref.URL() {
				row = s
			}
		})
		if row == nil {
			t.Fatal("the quote is not among the recent quotes")
		}
		return row
	}
	badge := func(doc *goquery.Document) string {
		return strings.TrimSpace(doc.Find(`[data-testid="quote-stage"]`).Text())
	}

	page := quoteMust(t, "quote page", e.p.get(t, e.user, ref.URL(), italian), http.StatusOK)
	if got := badge(page); got != it.T("work.stage.draft") {
		t.Errorf("a new quote's badge %q, want %q", got, it.T("work.stage.draft"))
	}
	if row := recentRow(); !strings.Contains(row.Text(), it.T("work.stage.draft")) || strings.Contains(row.Text(), "DRAFT") {
		t.Errorf("recent quote %q: not the Italian draft stage", row.Text())
	}

	// A colleague reprices it, the contract is generated (the index sees the new totals) and archived.
	quote := e.quote(t, ref)
	init, err := e.api.CPQ.Init(e.ctx(), ref.CPQID, ref.CustomerID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.CPQ.Reprice(e.ctx(), init.SessionID, ref.CPQID, ref.QuoteID, apiclient.RepriceRequest{
		ActivationPrice: 7.5, RecurringPrice: 3.25, BasketID: quote.Carts[0].BasketID, CartItemID: quote.Carts[0].Root.NodeID}); err != nil {
		t.Fatal(err)
	}
	quoteMust(t, "generate", e.p.do(t, e.user, http.MethodPost, ref.URL()+"/contract",
		strings.NewReader(e.generateForm(t, ref).Encode()), map[string]string{"HX-Request": "true", "Origin": e.p.URL, "Content-Type": "application/x-www-form-urlencoded"}), http.StatusOK)
	contract := e.quote(t, ref).Contract
	if contract == nil {
		t.Fatal("no contract generated")
	}
	quoteMust(t, "archive", e.p.do(t, e.user, http.MethodPost, contractPath(contract.ContractID)+"/archive", strings.NewReader(url.Values{}.Encode()),
		map[string]string{"HX-Request": "true", "Origin": e.p.URL, "Content-Type": "application/x-www-form-urlencoded"}), http.StatusOK)

	now := e.quote(t, ref)
	row := recentRow()
	wantTotal := it.T("contracts.recent.total", it.Money(cents(now.Totals.NetActivation), "EUR"), it.Money(cents(now.Totals.NetRecurring), "EUR"))
	if text := row.Text(); !strings.Contains(text, it.T("work.stage.archived")) || !strings.Contains(text, wantTotal) {
		t.Errorf("recent quote %q, want the stage %q and the totals %q", text, it.T("work.stage.archived"), wantTotal)
	}

	// The quote page: the badge says what the banner says, never "DRAFT" beside it.
	page = quoteMust(t, "quote page with an archived contract", e.p.get(t, e.user, ref.URL(), italian), http.StatusOK)
	banner := page.Find(`[data-testid="quote-contract-banner"]`).AttrOr("data-stage-label", "")
	if got := badge(page); got != banner || got != it.T("work.stage.archived") {
		t.Errorf("badge %q beside the banner's %q, want both %q", got, banner, it.T("work.stage.archived"))
	}
	if header := page.Find(".page-header").Text(); strings.Contains(header, "DRAFT") || strings.Contains(header, it.T("quote.status.draft")) {
		t.Errorf("the quote's header still says draft: %q", header)
	}
}

// A recent contract the work index does not have (or the viewer may not see there) is named from
// its recorded v2 status in the lists' stage words, never in a second vocabulary ("Signature
// requested" beside "Out for signature").
func TestRecentContractsAsRecordedUseTheStageWords(t *testing.T) {
	t.Parallel()
	en, it := quoteTranslators(t)
	for status, stage := range map[string]workindex.Stage{
		"GENERATED": workindex.StageGenerated, "SIGNATURE_REQUESTED": workindex.StageSignature, "ARCHIVED": workindex.StageArchived,
	} {
		for _, tr := range []*i18n.Translator{en, it} {
			rows := recentRows(tr, []recent.Item{{Kind: recent.KindContract, ID: 7, Number: "C-7", CustomerID: 3, Status: status}})
			if len(rows) != 1 || rows[0].Status != stageLabel(tr, stage) {
				t.Errorf("%s, %s: %+v, want %q", status, tr.Lang(), rows, stageLabel(tr, stage))
			}
		}
	}
}
