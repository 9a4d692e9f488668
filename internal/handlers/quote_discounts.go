package handlers

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Discounts of a quote: the applicable ones (call 11) with the applied ones ticked, and applying
// a selection with extra values (call 12, which replaces the quote's discounts: A5 #12).

const discountsForm = "quote-discounts-form"

// showDiscounts is GET .../discounts: the discount form. The applied discounts come from the
// quote (call 10), the applicable ones from call 11.
func (h *Handler) showDiscounts(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	// What is applied (call 10) is read beside the applicable discounts (call 11), not after them
	// (issue 27); call 10 needs no configuration session, so it starts before one is.
	ctx := h.apiContext(c)
	quoteOf := later(func() (*apiclient.Quote, error) {
		return h.api.CPQ.TOFList(ctx, a.ref.CPQID, a.ref.CustomerID, a.ref.QuoteID)
	})
	defer quoteOf() //nolint:errcheck // waited for on every path; the result is read below
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	discounts, err := h.api.CPQ.ApplicableDiscounts(ctx, sessionID, a.ref.CPQID, a.ref.QuoteID)
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), "", nil, fmt.Errorf("applicable discounts of quote %d: %w", a.ref.QuoteID, err))
		return
	}
	q, err := quoteOf()
	if err != nil {
		h.fail(c, fmt.Errorf("get quote %d: %w", a.ref.QuoteID, err))
		return
	}
	applied := map[int32]bool{}
	for _, d := range q.AppliedDiscounts {
		applied[d.DiscountID] = true
	}
	extraValues := map[int32]float64{}
	for _, d := range q.ExtraDiscounts {
		extraValues[d.DiscountID] = d.DiscountValue
	}
	vm := quotes.DiscountsVM{Ref: a.ref}
	for _, d := range discounts {
		if d.Extra {
			choice := quotes.ExtraChoice{DiscountID: d.DiscountID, Name: d.Name, AppliesTo: d.AppliesTo, Max: extraMax(d.MaxValue)}
			choice.Value, choice.HasValue = extraValues[d.DiscountID]
			vm.Extras = append(vm.Extras, choice)
			continue
		}
		vm.Regular = append(vm.Regular, quotes.DiscountChoice{DiscountID: d.DiscountID, Name: d.Name, AppliesTo: d.AppliesTo,
			Percent: d.Percent, Checked: applied[d.DiscountID]})
	}
	h.render(c, http.StatusOK, quotes.DiscountsPanel(vm))
}

// extraMax is the largest value of an extra discount: its maxValue, within 0 to 100 percent.
func extraMax(maxValue float64) float64 {
	if maxValue <= 0 || maxValue > maxPercent || math.IsNaN(maxValue) {
		return maxPercent
	}
	return maxValue
}

// applyDiscounts is POST .../discounts (discountId..., extra-<id>, extraMax-<id>): call 12.
// Regular discounts are the ticked boxes; an extra discount applies when its value is filled in
// (more than 0, at most its maxValue, carried by the form from call 11; the v2 API checks it too).
func (h *Handler) applyDiscounts(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	req, errs := discountSelection(c, tr(c))
	if len(errs) > 0 {
		h.badForm(c, discountsForm, errs)
		return
	}
	if !h.ensureCurrent(c, a, staleCheck{pending: discountPending(tr(c), req)}) {
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	q, err := h.api.CPQ.ApplyDiscounts(h.apiContext(c), sessionID, a.ref.CPQID, a.ref.QuoteID, req)
	if err != nil {
		fields := map[string]string{}
		for i, e := range req.ExtraDiscountList {
			fields[fmt.Sprintf("extraDiscountList[%d].discountValue", i)] = fmt.Sprintf("quote-extra-%d", e.DiscountID)
		}
		h.failCPQ(c, a.key, quoteAlert(a.ref), discountsForm, fields, fmt.Errorf("apply discounts to quote %d: %w", a.ref.QuoteID, err))
		return
	}
	message := t(c, "quote.toast.discounts_removed")
	if n := len(q.AppliedDiscounts) + len(q.ExtraDiscounts); n > 0 {
		message = tr(c).Plural(n, "quote.toast.discounts_applied.one", "quote.toast.discounts_applied.other")
	}
	h.cartsUpdate(c, a, q, false, 0, "quote-discounts-panel", message) // applied: the panel closes
}

// discountSelection reads the discount form into the body of call 12. Extra values are typed the
// reader's way ("12,5" in Italian) and go upstream as plain numbers.
func discountSelection(c *gin.Context, tr *i18n.Translator) (apiclient.ApplyDiscountsRequest, formErrors) {
	var req apiclient.ApplyDiscountsRequest
	var errs formErrors
	seen := map[int32]bool{}
	for _, raw := range c.Request.Form["discountId"] {
		id, ok := formID32(strings.TrimSpace(raw))
		if !ok {
			errs.addMessage(tr, discountsForm, i18n.M("quote.form.discount_choice"))
			return req, errs
		}
		if !seen[id] {
			seen[id] = true
			req.AppliedDiscounts = append(req.AppliedDiscounts, id)
		}
	}
	var extraIDs []int32
	for name := range c.Request.Form {
		rawID, ok := strings.CutPrefix(name, "extra-")
		if !ok {
			continue
		}
		id, ok := formID32(rawID)
		if !ok || len(extraIDs) >= maxExtraFields {
			errs.addMessage(tr, discountsForm, i18n.M("quote.form.extra_fields"))
			return req, errs
		}
		extraIDs = append(extraIDs, id)
	}
	slices.Sort(extraIDs) // form order is not kept by url.Values: a stable order for the body
	for _, id := range extraIDs {
		field := fmt.Sprintf("quote-extra-%d", id)
		raw := formValue(c, fmt.Sprintf("extra-%d", id))
		if raw == "" {
			continue // not applied
		}
		if seen[id] {
			errs.addMessage(tr, field, i18n.M("quote.form.discount_both"))
			continue
		}
		limit := float64(maxPercent)
		// The maximum is the portal's own hidden field: a plain number whatever the language.
		if rawMax := formValue(c, fmt.Sprintf("extraMax-%d", id)); rawMax != "" {
			m, err := strconv.ParseFloat(rawMax, 64)
			if err != nil {
				errs.addMessage(tr, discountsForm, i18n.M("quote.form.extra_fields"))
				return req, errs
			}
			limit = extraMax(m)
		}
		value, msg := parsePercent(tr, raw, limit)
		if !msg.IsZero() {
			errs.addMessage(tr, field, msg)
			continue
		}
		req.ExtraDiscountList = append(req.ExtraDiscountList, apiclient.ExtraDiscountInput{DiscountID: id, DiscountValue: value})
	}
	return req, errs
}

// discountPending says what the discount form asked for, for the conflict notice.
func discountPending(tr *i18n.Translator, req apiclient.ApplyDiscountsRequest) string {
	switch n := len(req.AppliedDiscounts) + len(req.ExtraDiscountList); n {
	case 0:
		return tr.T("quote.pending.discounts_none")
	case 1:
		return tr.T("quote.pending.discounts.one")
	default:
		return tr.T("quote.pending.discounts.other", tr.Integer(int64(n)))
	}
}
