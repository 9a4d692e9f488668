package handlers

import (
	"fmt"
	"log/slog"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Recent items (internal/recent): the quote and contract pages record what the user opened or
// changed; the Quotes and Contracts pages, the command palette and the audit worklist list them.
// Recording never fails a page: a store problem is logged and the page is shown.

// touchRecent records item for the signed-in user.
func (h *Handler) touchRecent(c *gin.Context, item recent.Item) {
	if h.recent == nil {
		return
	}
	subject := auth.CurrentUser(c).Subject
	if subject == "" {
		return
	}
	if err := h.recent.Touch(c.Request.Context(), subject, item); err != nil {
		h.log(c).Warn("recent items: not recorded", slog.Any("err", err))
	}
}

// recentItems lists the signed-in user's recent items of kind ("" for all).
func (h *Handler) recentItems(c *gin.Context, kind recent.Kind) []recent.Item {
	if h.recent == nil {
		return nil
	}
	items, err := h.recent.List(c.Request.Context(), auth.CurrentUser(c).Subject, kind)
	if err != nil {
		h.log(c).Warn("recent items: not listed", slog.Any("err", err))
	}
	return items
}

// recentTotalText is a quote's or contract's total as the recent lists show it.
func recentTotalText(t apiclient.Totals) string {
	return fmt.Sprintf("%s one-off, %s monthly", quotes.FormatEUR(cents(t.NetActivation)), quotes.FormatEUR(cents(t.NetRecurring)))
}

// recentQuoteItem is a quote as recorded when its page is shown.
func recentQuoteItem(ref quotes.Ref, q *apiclient.Quote, customerName string) recent.Item {
	return recent.Item{Kind: recent.KindQuote, ID: ref.QuoteID, QuoteID: ref.QuoteID, CPQID: ref.CPQID, CustomerID: ref.CustomerID,
		Customer: customerName, Total: recentTotalText(q.Totals), Totals: recentTotals(q.Totals), Status: q.Status}
}

// recentContractItem is a contract as recorded when its page is shown.
func recentContractItem(contract *apiclient.Contract) recent.Item {
	return recent.Item{Kind: recent.KindContract, ID: int64(contract.ContractID), Number: contract.ContractNumber,
		QuoteID: contract.QuoteID, CPQID: contract.CPQID, CustomerID: contract.CustomerID,
		Customer: contract.Customer.Name, Total: recentTotalText(contract.Totals), Totals: recentTotals(contract.Totals), Status: contract.Status}
}

// recentTotals keeps the amounts, so the list writes them in each reader's language.
func recentTotals(t apiclient.Totals) *recent.Totals {
	return &recent.Totals{OneOffCents: cents(t.NetActivation), MonthlyCents: cents(t.NetRecurring)}
}

// recentRows are recent items as the shared table shows them, in the reader's language: the stage
// and totals of the work index when it has the item and the viewer may see it (workindex.Lookup:
// a contract archived since, a quote repriced by a colleague), else what was recorded when the
// item was opened. The stage is named as the work lists and the quote page name it.
func (h *Handler) recentRows(c *gin.Context, items []recent.Item) []components.RecentRow {
	trl := tr(c)
	rows := recentRows(trl, items)
	for i, it := range items {
		// Recorded without a name (the customer could not be read then): the user's cached list may have it.
		if it.Customer != "" {
			continue
		}
		if name := h.customerNameHeld(c, it.CustomerID); name != "" {
			rows[i].Customer = name
		}
	}
	if h.work == nil {
		return rows
	}
	ctx := c.Request.Context()
	v := h.viewer(c)
	for i, it := range items {
		kind := workindex.KindQuote
		if it.Kind == recent.KindContract {
			kind = workindex.KindContract
		}
		row, ok := h.work.Lookup(ctx, v, kind, it.ID)
		if !ok {
			continue
		}
		rows[i].Status = stageLabel(trl, row.Stage)
		rows[i].Total = trl.T("contracts.recent.total", trl.Money(row.OneOffCents, "EUR"), trl.Money(row.MonthlyCents, "EUR"))
		if row.Customer != "" {
			rows[i].Customer = row.Customer
		}
	}
	return rows
}

// recentRows are recent items as recorded, as the shared table shows them, in tr's language.
func recentRows(tr *i18n.Translator, items []recent.Item) []components.RecentRow {
	rows := make([]components.RecentRow, 0, len(items))
	for _, it := range items {
		row := components.RecentRow{Customer: it.Customer, Total: it.Total, Status: it.Status, When: it.At,
			QuoteID: it.QuoteID}
		if row.Customer == "" {
			row.Customer = tr.T("worklist.customer_fallback", strconv.FormatInt(int64(it.CustomerID), 10))
		}
		if it.Totals != nil {
			row.Total = tr.T("contracts.recent.total", tr.Money(it.Totals.OneOffCents, "EUR"), tr.Money(it.Totals.MonthlyCents, "EUR"))
		}
		switch it.Kind {
		case recent.KindQuote:
			row.Label = tr.T("worklist.pick.quote", strconv.FormatInt(it.ID, 10))
			row.Href = quotes.Ref{CPQID: it.CPQID, CustomerID: it.CustomerID, QuoteID: it.ID}.URL()
			if it.Status == "DRAFT" {
				// The v2 quote's own status: the work index's "draft" in the reader's words.
				row.Status = stageLabel(tr, workindex.StageDraft)
			}
		case recent.KindContract:
			row.Label = tr.T("contract.title", it.Number)
			// As recorded: the v2 status in the stage words the lists use (one word per stage).
			row.Status = contracts.StatusLabel(tr, it.Status)
			switch it.Status {
			case "GENERATED", "SIGNATURE_REQUESTED", "ARCHIVED":
				row.Status = stageLabel(tr, workindex.StageOfContract(workindex.ContractFacts{Status: it.Status}))
			}
			row.Href = contractPath(int32(it.ID))
		}
		rows = append(rows, row)
	}
	return rows
}
