package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auditwords"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/internal/worklist"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
)

// auditActionCustomerUpdated is the audit action of a customer data change (docs/v2-assumptions.md A7).
const auditActionCustomerUpdated = "CUSTOMER_UPDATED"

// maxAuditValueRunes bounds a before/after value shown in the timeline (the raw JSON has it whole).
const maxAuditValueRunes = 500

func auditSearchVM(tr *i18n.Translator, value string, problem i18n.Message) contracts.AuditSearchVM {
	vm := contracts.AuditSearchVM{QuoteID: components.Field{
		ID: "audit-quote-id", Name: "quoteId", Label: tr.T("audits.field.quote_id"), Value: strings.ToValidUTF8(value, "\uFFFD"), Error: problem.In(tr), Required: true,
		Hint:  tr.T("audits.field.quote_id_hint"),
		Attrs: map[string]any{"inputmode": "numeric", "autocomplete": "off", "data-search": true, "data-testid": "audit-quote-input"},
	}}
	vm.Errors = components.SummaryFrom(vm.QuoteID)
	return vm
}

// showAuditSearch answers GET /audits: the form for a quote id; with ?quoteId= it goes to that
// quote's audit (a malformed id answers 400 with the form and its message, nothing is sent).
func (h *Handler) showAuditSearch(c *gin.Context) {
	if !c.Request.URL.Query().Has("quoteId") {
		h.renderPage(c, http.StatusOK, t(c, "audits.title"), layout.SectionAudits, contracts.AuditSearchPage(auditSearchVM(tr(c), "", i18n.Message{})))
		return
	}
	raw := strings.TrimSpace(c.Query("quoteId"))
	var problem i18n.Message
	if raw == "" {
		problem = i18n.M("audits.error.quote_id_empty")
	} else if _, err := parseID(raw, "quoteId", math.MaxInt64); err != nil {
		problem = i18n.M("audits.error.quote_id_invalid")
	}
	if !problem.IsZero() {
		h.renderPage(c, http.StatusBadRequest, t(c, "audits.title"), layout.SectionAudits, contracts.AuditSearchPage(auditSearchVM(tr(c), raw, problem)))
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
	ctx := h.apiContext(c)
	// Where the quote lives (customer, configurator) is known to the work index when the portal has
	// seen the quote: the names are then read beside the audit (issue 27: one round trip, not three).
	// The index only says where to read; everything shown is read with the viewer's own token, and a
	// hint the audit contradicts is dropped for the ordinary reads after it.
	hint, hinted := h.quoteWhereabouts(c.Request.Context(), quoteID)
	var namesOf func() (*auditwords.Names, error)
	if hinted {
		source := h.worklistSource(c)
		namesOf = later(func() (*auditwords.Names, error) {
			names, _ := source.NamesAmong(ctx, quoteID, hint.CustomerID, []int32{hint.CPQID})
			return names, nil
		})
		defer namesOf() //nolint:errcheck // waited for on every path; the result is read below
	}
	audit, err := h.api.Contracts.ValidationAudit(ctx, quoteID)
	if err != nil {
		h.fail(c, fmt.Errorf("audits: validation audit of quote %d: %w", quoteID, err))
		return
	}
	var names *auditwords.Names
	switch cpqIDs := h.cachedCatalogues(c, audit.CustomerID); {
	case hinted && hint.CustomerID == audit.CustomerID:
		names, _ = namesOf()
	case len(cpqIDs) > 0:
		// A quote the index has not seen, of a customer in the user's cached list: the list says
		// which catalogues to look in, so the customer and the quote are read side by side (two
		// round trips with the audit, not three).
		names, _ = h.worklistSource(c).NamesAmong(ctx, quoteID, audit.CustomerID, cpqIDs)
	default:
		names = h.auditNames(c, quoteID, audit.CustomerID)
	}
	vm := auditVM(tr(c), quoteID, audit, names)
	vm.ShowPreview = true
	h.renderPage(c, http.StatusOK, t(c, "audit.title", strconv.FormatInt(quoteID, 10)), layout.SectionAudits, contracts.AuditPage(vm))
}

// auditVM builds the audit view of a quote: newest entry first (entries of the same second in
// reverse of the v2's order, which lists them as they happened), each change in the reader's
// words (internal/auditwords), people by name where the portal knows it (names may be nil).
func auditVM(tr *i18n.Translator, quoteID int64, audit *apiclient.ValidationAudit, names *auditwords.Names) contracts.AuditVM {
	url := auditURL(quoteID)
	customerID := audit.CustomerID
	vm := contracts.AuditVM{
		QuoteID:      quoteID,
		CustomerID:   customerID,
		CustomerURL:  "/customers/" + strconv.Itoa(int(customerID)),
		CustomerName: names.CustomerName(),
		Raw:          audit.Raw,
		PDFURL:       url + "/pdf",
		PreviewURL:   url + "/pdf?inline=1",
		Zone:         tr.Zone().String(),
	}
	entries := slices.Clone(audit.Entries)
	actors := make([]string, 0, len(entries))
	for _, e := range entries {
		actors = append(actors, e.Actor)
	}
	names.Prefetch(actors...) // one lookup of the people directory for the page
	slices.Reverse(entries)
	slices.SortStableFunc(entries, func(a, b apiclient.AuditEntry) int { return b.At.Compare(a.At) })
	for _, e := range entries {
		who := names.Actor(tr, e.Actor)
		entry := contracts.AuditEntryVM{
			ID:             string(e.EntryID),
			At:             e.At,
			Actor:          who.Name,
			ActorLogin:     who.Login,
			Action:         e.Action,
			ActionLabel:    contracts.ActionLabel(tr, e.Action),
			CustomerChange: e.Action == auditActionCustomerUpdated,
		}
		if auditwords.ShowSummary(e.Action, len(e.Changes)) {
			entry.Summary = e.Summary
		}
		for _, ch := range e.Changes {
			words := auditwords.Describe(tr, names, ch.Field, auditValue(ch.Before), auditValue(ch.After))
			entry.Changes = append(entry.Changes, contracts.AuditChangeVM{
				Key: ch.Field, Field: words.Field, Before: cut(words.Before), After: cut(words.After), Changed: words.Changed,
			})
		}
		vm.Entries = append(vm.Entries, entry)
	}
	return vm
}

// auditNames gathers, best effort, what the audit of quoteID names by id (worklist.V2.Names):
// a few v2 reads with the viewer's token; what cannot be read is written as numbered words.
func (h *Handler) auditNames(c *gin.Context, quoteID int64, customerID int32) *auditwords.Names {
	names, _ := h.worklistSource(c).Names(h.apiContext(c), quoteID, customerID)
	return names
}

// cachedCatalogues are the configurators of customerID as the user's cached customer list holds
// them (nil when it is not cached or does not have the customer): a hint of where to read the
// quote, never data to show.
func (h *Handler) cachedCatalogues(c *gin.Context, customerID int32) []int32 {
	snap, ok := h.customers.Peek(customerCacheKey(c))
	if !ok {
		return nil
	}
	row, ok := snap.Lookup(customerID)
	if !ok {
		return nil
	}
	return row.CPQIDs
}

// quoteWhereabouts is the customer and configurator of a quote as the work index last saw them
// (false when it has not seen the quote): a hint of where to read, never data to show.
func (h *Handler) quoteWhereabouts(ctx context.Context, quoteID int64) (workindex.Row, bool) {
	if h.work == nil {
		return workindex.Row{}, false
	}
	row, ok := h.work.Peek(ctx, workindex.KindQuote, quoteID)
	return row, ok && row.CustomerID > 0 && row.CPQID > 0
}

// worklistSource is the v2 source of audits and their names for the viewer of c.
func (h *Handler) worklistSource(c *gin.Context) worklist.V2 {
	user := auth.CurrentUser(c)
	return worklist.V2{API: h.api, Configurators: h.configuratorNamesQuietly(c), ViewerName: user.Name, ViewerEmail: user.Email, People: h.peopleView(c)}
}

// configuratorNamesQuietly is configuratorNamesOrNil for pages where the names are a nicety:
// a failure only leaves them out (nil).
func (h *Handler) configuratorNamesQuietly(c *gin.Context) map[int32]string {
	key := customerCacheKey(c)
	if names, ok := h.configurators.get(key); ok {
		return names
	}
	list, err := h.api.CPQ.List(h.apiContext(c))
	if err != nil {
		return nil
	}
	names := configuratorNames(list)
	h.configurators.put(key, names)
	return names
}

// auditValue shows a change's before or after value as the v2 API wrote it: strings as their
// text (A7 says they are strings), anything else as compact JSON, null or absent as "".
// auditwords.Describe then puts it into words.
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
	return text
}

// cut bounds a value shown in the timeline (the raw JSON has it whole).
func cut(text string) string {
	if utf8.RuneCountInString(text) > maxAuditValueRunes {
		runes := []rune(text)
		text = string(runes[:maxAuditValueRunes]) + "…"
	}
	return text
}

// auditPDFName is the download name of a quote's PDF audit, in tr's language.
func auditPDFName(tr *i18n.Translator, quoteID int64) string {
	return tr.T("audit.file.pdf", strconv.FormatInt(quoteID, 10))
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
	h.streamPDF(c, download, auditPDFName(tr(c), quoteID), inline, "the audit")
}
