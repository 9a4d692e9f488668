package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auditwords"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Stale actions (issue 18, docs/quotes.md "Two people, one quote").
//
// The v2 API has no version field and no events (spec sections 3 and 6), so the portal compares
// the fingerprint the page sent (what the user saw, quote_digest.go) with the quote as it is, read
// with call 10 (no configuration session, one cheap read) just before a mutation that depends on
// what the user saw. When they differ (or the fingerprint is missing or forged: "unknown"), the
// mutation is not sent: the answer is the current quote with the other changes highlighted, what
// changed (before → after, who from the validation audit) and the user's change offered again,
// to apply to the current quote or to drop. When call 10 fails, the action is refused (503) with a
// retry message: never applied blind.
//
// Actions that do not depend on what the user saw (adding a cart, adding a package) skip the
// check: they go through and their answer highlights everything that changed, theirs and others'.

// errStaleCheckFailed is the stale check's read failing: the action was not applied.
type staleCheckError struct{ err error }

func (e *staleCheckError) Error() string {
	return "checking the quote for changes by others before the action: " + e.err.Error()
}
func (e *staleCheckError) Unwrap() error { return e.err }

// staleCheck describes the action being checked.
type staleCheck struct {
	// pending says what the user asked for, for the conflict notice.
	pending string
	// exists reports whether what the action acts on is still in the quote (nil: always).
	exists func(q *apiclient.Quote) bool
}

// ensureCurrent reads the quote (call 10) and lets the action go on only when it is what the page
// showed; otherwise it has answered (the conflict notice, or the failure of the read).
func (h *Handler) ensureCurrent(c *gin.Context, a *quoteAction, check staleCheck) bool {
	ctx := h.apiContext(c)
	q, err := h.api.CPQ.TOFList(ctx, a.ref.CPQID, a.ref.CustomerID, a.ref.QuoteID)
	if err != nil {
		if errors.Is(err, apiclient.ErrUnauthorized) || errors.Is(err, apiclient.ErrNotFound) || errors.Is(err, apiclient.ErrForbidden) {
			// The quote itself was refused or is gone: forgotten for the viewer at once.
			h.forgetForViewer(c.Request.Context(), c, h.viewer(c), workindex.KindQuote, a.ref.QuoteID, err)
			h.fail(c, fmt.Errorf("read quote %d before the action: %w", a.ref.QuoteID, err))
			return false
		}
		h.fail(c, &staleCheckError{err: err})
		return false
	}
	digest := digestOf(q)
	h.changes.ObserveBy(quoteWatchKey(a.ref), customerCacheKey(c), changeTag(digest))
	if a.prev != nil && a.prev.sameState(parseDigest(digest)) {
		return true
	}
	h.log(c).Info("stale action not applied", slog.Int64("quote_id", a.ref.QuoteID), slog.Bool("unknown_state", a.prev == nil))
	h.respondConflict(c, a, q, digest, check)
	return false
}

// respondConflict answers 409 with the current quote (every cart and the summary, highlighted
// against what the page showed), the new fingerprint and the conflict notice.
func (h *Handler) respondConflict(c *gin.Context, a *quoteAction, q *apiclient.Quote, digest string, check staleCheck) {
	v := newQuoteView(tr(c), a.ref, q, a.prev)
	vm := v.update()
	carts := v.carts(false)
	vm.Carts = &carts
	conflict := quotes.ConflictVM{Ref: a.ref, Unknown: a.prev == nil, Pending: check.pending}
	if check.exists != nil && !check.exists(q) {
		conflict.Gone = true
	}
	if a.prev != nil {
		conflict.Changes = describeChanges(a.prev, q, v)
		conflict.Notice = h.changeNotice(h.apiContext(c), c, a.ref.QuoteID, a.prev.seenAt())
	}
	if !conflict.Gone {
		conflict.ReplayMethod = strings.ToLower(c.Request.Method)
		conflict.ReplayURL = c.Request.URL.Path
		conflict.ReplayFields = replayFields(c, digest)
	}
	vm.Conflict = &conflict
	c.Header("HX-Retarget", "#quote-carts")
	c.Header("HX-Reswap", "outerHTML")
	announce(c, t(c, "quote.conflict.announce"))
	h.render(c, http.StatusConflict, quotes.UpdatePartial(vm))
}

// replayFields are the action's form values with the current fingerprint, for "Apply my change".
func replayFields(c *gin.Context, digest string) []quotes.Field {
	var out []quotes.Field
	names := make([]string, 0, len(c.Request.Form))
	for name := range c.Request.Form {
		if name != "prev" && name != "replay" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, value := range c.Request.Form[name] {
			out = append(out, quotes.Field{Name: name, Value: value})
		}
	}
	return append(out, quotes.Field{Name: "prev", Value: digest}, quotes.Field{Name: "replay", Value: "1"})
}

// isReplay reports whether the action is "Apply my change" of a conflict notice: its answer goes
// to every cart (the notice's form targets #quote-carts).
func isReplay(c *gin.Context) bool { return formValue(c, "replay") != "" }

// quoteWatchKey is the shared watcher's key of a quote.
func quoteWatchKey(ref quotes.Ref) string { return "quote:" + strconv.FormatInt(ref.QuoteID, 10) }

// describeChanges lists what differs between the fingerprint the page sent and the quote now, in
// the reader's language (v.tr); names from the v2 API are quoted as they come.
func describeChanges(prev quoteDigest, q *apiclient.Quote, v *quoteView) []quotes.Change {
	tr := v.tr
	money := func(cents int64) string { return quotes.Money(tr, cents) }
	var out []quotes.Change
	seen := map[string]bool{}
	for i := range q.Carts {
		cart := &q.Carts[i]
		key := "c" + strconv.FormatInt(cart.BasketID, 10)
		seen[key] = true
		title := cartTitle(tr, cart)
		p, ok := prev.previous(key, 8)
		if !ok {
			out = append(out, quotes.Change{What: tr.T("quote.change.cart_added", title)})
			walkItems(cart.Root, 0, "", func(it *apiclient.Item, _ int, _ string) { seen["n"+strconv.FormatInt(it.NodeID, 10)] = true })
			continue
		}
		if p[0] != int64(cart.Quantity) {
			out = append(out, quotes.Change{What: tr.T("quote.change.quantity", title), Before: tr.Integer(p[0]), After: tr.Integer(int64(cart.Quantity))})
		}
		if p[1] != int64(cart.PricelistID) {
			out = append(out, quotes.Change{What: tr.T("quote.change.pricelist", title), Before: v.pricelistName(int32(p[1])), After: v.pricelistName(cart.PricelistID)})
		}
		walkItems(cart.Root, 0, "", func(it *apiclient.Item, _ int, _ string) {
			nk := "n" + strconv.FormatInt(it.NodeID, 10)
			seen[nk] = true
			np, ok := prev.previous(nk, 8)
			if !ok {
				out = append(out, quotes.Change{What: tr.T("quote.change.item_added", it.Name, title)})
				return
			}
			if np[0] != cents(it.ActivationPrice) {
				out = append(out, quotes.Change{What: tr.T("quote.change.unit_activation", i18n.Isolate(it.Name)), Before: money(np[0]), After: money(cents(it.ActivationPrice))})
			}
			if np[1] != cents(it.RecurringPrice) {
				out = append(out, quotes.Change{What: tr.T("quote.change.unit_recurring", i18n.Isolate(it.Name)), Before: money(np[1]), After: money(cents(it.RecurringPrice))})
			}
		})
	}
	discounts := map[string]string{}
	for _, d := range quoteDiscountSums(q) {
		key := "d" + strconv.FormatInt(int64(d.id), 10)
		discounts[key] = d.name
		if _, ok := prev[key]; !ok {
			out = append(out, quotes.Change{What: tr.T("quote.change.discount_applied", d.name)})
		}
	}
	packages := map[string]bool{}
	for _, p := range q.Packages {
		key := "p" + strconv.FormatInt(int64(p.PackageID), 10)
		packages[key] = true
		if _, ok := prev[key]; !ok {
			out = append(out, quotes.Change{What: tr.T("quote.change.package_added", i18n.Isolate(p.Name))})
		}
	}
	var removedItems int
	keys := make([]string, 0, len(prev))
	for key := range prev {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		switch {
		case strings.HasPrefix(key, "c") && !seen[key]:
			out = append(out, quotes.Change{What: tr.T("quote.change.cart_removed", key[1:])})
		case strings.HasPrefix(key, "n") && !seen[key]:
			removedItems++
		case strings.HasPrefix(key, "d") && discounts[key] == "":
			out = append(out, quotes.Change{What: tr.T("quote.change.discount_removed", key[1:])})
		case strings.HasPrefix(key, "p") && !packages[key]:
			out = append(out, quotes.Change{What: tr.T("quote.change.package_removed", key[1:])})
		}
	}
	if removedItems > 0 {
		out = append(out, quotes.Change{What: tr.Plural(removedItems, "quote.change.items_removed.one", "quote.change.items_removed.other")})
	}
	if p, ok := prev.previous("q", 6); ok {
		t := q.Totals
		if p[4] != cents(t.NetActivation) {
			out = append(out, quotes.Change{What: tr.T("quote.change.total_activation"), Before: money(p[4]), After: money(cents(t.NetActivation))})
		}
		if p[5] != cents(t.NetRecurring) {
			out = append(out, quotes.Change{What: tr.T("quote.change.total_recurring"), Before: money(p[5]), After: money(cents(t.NetRecurring))})
		}
	}
	return out
}

// cartTitle names a cart as its heading does.
func cartTitle(tr *i18n.Translator, cart *apiclient.Cart) string {
	if cart.Label != "" {
		return cart.Label
	}
	if cart.Root != nil && cart.Root.Name != "" {
		return cart.Root.Name
	}
	return tr.T("quote.cart.numbered", idText(cart.BasketID))
}

// auditActions are the catalogue keys of the validation audit's actions (docs/v2-assumptions.md
// A7), worded for notices.
var auditActions = map[string]string{
	"CART_ADDED": "quote.audit.cart_added", "CART_REMOVED": "quote.audit.cart_removed", "ITEM_ADDED": "quote.audit.item_added",
	"ITEM_REMOVED": "quote.audit.item_removed", "QUANTITY_CHANGED": "quote.audit.quantity_changed",
	"DISCOUNTS_APPLIED": "quote.audit.discounts_applied", "REPRICED": "quote.audit.repriced",
	"PACKAGE_ADDED": "quote.audit.package_added", "PRICELIST_CHANGED": "quote.audit.pricelist_changed",
	"ATTACHMENT_ADDED": "quote.audit.attachment_added", "ATTACHMENT_DELETED": "quote.audit.attachment_deleted",
	"CONTRACT_GENERATED": "quote.audit.contract_generated", "SIGNATURE_REQUESTED": "quote.audit.signature_requested",
	"SIGNATURE_REMOVED": "quote.audit.signature_removed", "SIGNATURE_SIGNED": "quote.audit.signature_signed",
	"SIGNATURE_DECLINED": "quote.audit.signature_declined", "SIGNATURE_EXPIRED": "quote.audit.signature_expired",
	"CONTRACT_ARCHIVED": "quote.audit.contract_archived",
	"CUSTOMER_UPDATED":  "quote.audit.customer_updated",
}

// changeNotice says who changed the quote after since and what, from the validation audit read
// with the user's own token. Best effort: without the audit (or since), the notice says less.
func (h *Handler) changeNotice(ctx context.Context, c *gin.Context, quoteID int64, since time.Time) quotes.ChangeNotice {
	if since.IsZero() {
		return quotes.ChangeNotice{}
	}
	audit, err := h.api.Contracts.ValidationAudit(ctx, quoteID)
	return h.changeNoticeFrom(c, audit, err, since)
}

// changeNoticeFrom builds the notice from an audit already read (err: its read failed; the
// notice then says nothing of who and what).
func (h *Handler) changeNoticeFrom(c *gin.Context, audit *apiclient.ValidationAudit, err error, since time.Time) quotes.ChangeNotice {
	var n quotes.ChangeNotice
	if since.IsZero() {
		return n
	}
	if err != nil {
		h.log(c).Warn("validation audit unavailable for the change notice", slog.Any("err", err))
		return n
	}
	// Audit times may be whole seconds (the simulator's are): entries after since are the changes;
	// when there are none, those of since's own second may be (docs/v2-assumptions.md, A10).
	entries := auditSince(audit.Entries, since, false)
	if len(entries) == 0 {
		entries = auditSince(audit.Entries, since, true)
	}
	var actors []string
	var last time.Time
	var names *auditwords.Names // read only when there is someone to name
	for _, e := range entries {
		if e.Actor != "" {
			if names == nil {
				names = h.actorNames(c)
				actors := make([]string, len(entries))
				for i, e := range entries {
					actors[i] = e.Actor
				}
				names.Prefetch(actors...)
			}
			if who := names.Actor(tr(c), e.Actor).Name; !slices.Contains(actors, who) {
				actors = append(actors, who)
			}
		}
		if key, ok := auditActions[e.Action]; ok && !slices.Contains(n.Actions, t(c, key)) {
			n.Actions = append(n.Actions, t(c, key))
		}
		if e.At.After(last) {
			last = e.At
		}
	}
	n.Who = strings.Join(actors, ", ")
	if !last.IsZero() {
		n.Ago = agoText(tr(c), h.now().Sub(last))
		n.AgoSeconds = max(0, int64(h.now().Sub(last)/time.Second))
	}
	return n
}

// auditSince keeps the entries after since (or at it too, when atToo).
func auditSince(entries []apiclient.AuditEntry, since time.Time, atToo bool) []apiclient.AuditEntry {
	var out []apiclient.AuditEntry
	for _, e := range entries {
		if e.At.After(since) || (atToo && e.At.Equal(since)) {
			out = append(out, e)
		}
	}
	return out
}

// agoText is "10 s ago", "3 min ago", "2 h ago" in the reader's language.
func agoText(tr *i18n.Translator, d time.Duration) string {
	switch {
	case d < 0:
		return tr.T("quote.ago.now")
	case d < time.Minute:
		return tr.T("quote.ago.seconds", tr.Integer(int64(d/time.Second)))
	case d < time.Hour:
		return tr.T("quote.ago.minutes", tr.Integer(int64(d/time.Minute)))
	default:
		return tr.T("quote.ago.hours", tr.Integer(int64(d/time.Hour)))
	}
}
