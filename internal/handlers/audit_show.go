package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
)

// auditActionCustomerUpdated is the audit action of a customer data change (docs/v2-assumptions.md A7).
const auditActionCustomerUpdated = "CUSTOMER_UPDATED"

// maxAuditValueRunes bounds a before/after value shown in the timeline (the raw JSON has it whole).
const maxAuditValueRunes = 500

func auditSearchVM(value, problem string) contracts.AuditSearchVM {
	vm := contracts.AuditSearchVM{QuoteID: components.Field{
		ID: "audit-quote-id", Name: "quoteId", Label: "Quote id", Value: strings.ToValidUTF8(value, "\uFFFD"), Error: problem, Required: true,
		Hint:  "The number of the quote whose validation audit you want to review, e.g. 900001.",
		Attrs: map[string]any{"inputmode": "numeric", "maxlength": 19, "autocomplete": "off", "data-search": true, "data-testid": "audit-quote-input"},
	}}
	vm.Errors = components.SummaryFrom(vm.QuoteID)
	return vm
}

// showAuditSearch answers GET /audits: the form for a quote id; with ?quoteId= it goes to that
// quote's audit (a malformed id answers 400 with the form and its message, nothing is sent).
func (h *Handler) showAuditSearch(c *gin.Context) {
	if !c.Request.URL.Query().Has("quoteId") {
		h.renderPage(c, http.StatusOK, "Audits", layout.SectionAudits, contracts.AuditSearchPage(auditSearchVM("", "")))
		return
	}
	raw := strings.TrimSpace(c.Query("quoteId"))
	problem := ""
	if raw == "" {
		problem = "Enter a quote id."
	} else if _, err := parseID(raw, "quoteId", math.MaxInt64); err != nil {
		problem = "A quote id is a whole number, such as 900001."
	}
	if problem != "" {
		h.renderPage(c, http.StatusBadRequest, "Audits", layout.SectionAudits, contracts.AuditSearchPage(auditSearchVM(raw, problem)))
		return
	}
	c.Redirect(http.StatusSeeOther, auditURL(mustParseQuoteID(raw)))
}

func mustParseQuoteID(raw string) int64 {
	id, _ := strconv.ParseInt(raw, 10, 64) // checked by parseID
	return id
}

// showAudit answers GET /audits/:quoteId: the JSON validation audit of a quote as a timeline (who,
// when, what; changes as before → after), its raw JSON, and the PDF audit previewed inline.
func (h *Handler) showAudit(c *gin.Context) {
	quoteID, err := parseInt64ID(c, "quoteId")
	if err != nil {
		h.fail(c, err)
		return
	}
	audit, err := h.api.Contracts.ValidationAudit(h.apiContext(c), quoteID)
	if err != nil {
		h.fail(c, fmt.Errorf("audits: validation audit of quote %d: %w", quoteID, err))
		return
	}
	vm := auditVM(quoteID, audit)
	vm.ShowPreview = true
	h.renderPage(c, http.StatusOK, fmt.Sprintf("Validation audit of quote %d", quoteID), layout.SectionAudits, contracts.AuditPage(vm))
}

// auditVM builds the audit view of a quote.
func auditVM(quoteID int64, audit *apiclient.ValidationAudit) contracts.AuditVM {
	url := auditURL(quoteID)
	customerID := audit.CustomerID
	vm := contracts.AuditVM{
		QuoteID:     quoteID,
		CustomerID:  customerID,
		CustomerURL: "/customers/" + strconv.Itoa(int(customerID)),
		Raw:         audit.Raw,
		PDFURL:      url + "/pdf",
		PreviewURL:  url + "/pdf?inline=1",
	}
	for _, e := range audit.Entries {
		entry := contracts.AuditEntryVM{
			ID:             string(e.EntryID),
			At:             timeText(e.At),
			AtISO:          timeISO(e.At),
			Actor:          e.Actor,
			Action:         e.Action,
			ActionLabel:    contracts.TypeLabel(e.Action),
			Summary:        e.Summary,
			CustomerChange: e.Action == auditActionCustomerUpdated,
		}
		for _, ch := range e.Changes {
			before, after := auditValue(ch.Before), auditValue(ch.After)
			entry.Changes = append(entry.Changes, contracts.AuditChangeVM{
				Field: ch.Field, Before: before, After: after, Changed: before != after,
			})
		}
		vm.Entries = append(vm.Entries, entry)
	}
	return vm
}

// auditValue shows a change's before or after value: strings as their text (A7 says they are
// strings), anything else as compact JSON, null or absent as "", long values cut.
func auditValue(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	text := ""
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return ""
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			text = string(raw)
		}
	default:
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			text = string(raw)
		} else {
			text = buf.String()
		}
	}
	if utf8.RuneCountInString(text) > maxAuditValueRunes {
		runes := []rune(text)
		text = string(runes[:maxAuditValueRunes]) + "…"
	}
	return text
}

// auditPDFName is the download name of a quote's PDF audit.
func auditPDFName(quoteID int64) string {
	return fmt.Sprintf("validation-audit-%d.pdf", quoteID)
}

// downloadAuditPDF answers GET /audits/:quoteId/pdf: the PDF validation audit streamed from the v2
// API, as a download, or with ?inline=1 for the preview frame.
func (h *Handler) downloadAuditPDF(c *gin.Context) {
	inline := wantsInline(c)
	if inline {
		AllowFramingBySelf(c)
	}
	quoteID, err := parseInt64ID(c, "quoteId")
	if err != nil {
		h.fail(c, err)
		return
	}
	limit := h.newStartLimit(h.apiContext(c))
	defer limit.release()
	download, err := h.api.Contracts.ValidationAuditPDF(limit.ctx, quoteID)
	if err = limit.started(err); err != nil {
		h.failDocument(c, asPDFError(fmt.Errorf("audits: PDF audit of quote %d: %w", quoteID, err), "the audit"))
		return
	}
	defer download.Close()
	h.streamPDF(c, download, auditPDFName(quoteID), inline, "the audit")
}
