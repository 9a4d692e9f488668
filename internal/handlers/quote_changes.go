package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Live notice of an open quote page (issue 18, docs/quotes.md "Two people, one quote").
//
// GET .../changes is polled by app.js every few seconds with If-None-Match: the change tag of what
// the page shows (quote_digest.go changeTag). The shared watcher (internal/watch) answers whether the
// quote changed, reading call 10 at most once per interval per quote on this replica, with the
// token of whichever viewer asks first (always a live session: the route requires sign-in). Equal
// tags: 304, nothing read for this viewer. Different: this viewer's own read (call 10, then the
// validation audit for who and what) decides the banner, so nobody is shown data read with another
// user's token; the banner's ETag is the new tag. GET .../current is "Show changes": the current
// quote's regions, highlighted against what the page showed.

// pollQuoteChanges is GET /quotes/:cpqId/:customerId/:quoteId/changes[?since=<unix ms>].
func (h *Handler) pollQuoteChanges(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Cache-Control", "private, no-cache")
	c.Header("Vary", "Cookie")
	seen := etagValue(c.GetHeader("If-None-Match"))
	ctx := h.apiContext(c)
	var own *apiclient.Quote
	tag, err := h.changes.TagFor(ctx, quoteWatchKey(ref), customerCacheKey(c), liveMaxAge(c), func(ctx context.Context) (string, error) {
		q, err := h.api.CPQ.TOFList(ctx, ref.CPQID, ref.CustomerID, ref.QuoteID)
		if err != nil {
			return "", err
		}
		own = q
		return changeTag(digestOf(q)), nil
	})
	if err != nil {
		h.fail(c, fmt.Errorf("has quote %d changed: %w", ref.QuoteID, err))
		return
	}
	if tag == seen {
		c.Header("ETag", `"`+tag+`"`)
		c.Status(http.StatusNotModified)
		return
	}
	// Changed (or this viewer's page is older than the shared tag): what this viewer is shown is
	// read with their own token. When the shared tag already told (a colleague's change seen on this
	// replica), the quote and the audit (who and what) are read side by side (issue 27).
	since := parseDigest("u=" + c.Query("since")).seenAt()
	var auditOf func() (*apiclient.ValidationAudit, error)
	if own == nil {
		if !since.IsZero() {
			auditOf = later(func() (*apiclient.ValidationAudit, error) { return h.api.Contracts.ValidationAudit(ctx, ref.QuoteID) })
			defer auditOf() //nolint:errcheck // waited for on every path; the result is read below
		}
		own, err = h.api.CPQ.TOFList(ctx, ref.CPQID, ref.CustomerID, ref.QuoteID)
		if err != nil {
			h.fail(c, fmt.Errorf("read quote %d for the live notice: %w", ref.QuoteID, err))
			return
		}
		tag = changeTag(digestOf(own))
		h.changes.ObserveBy(quoteWatchKey(ref), customerCacheKey(c), tag)
	}
	c.Header("ETag", `"`+tag+`"`)
	if tag == seen {
		c.Status(http.StatusNotModified)
		return
	}
	var notice quotes.ChangeNotice
	if auditOf != nil {
		audit, err := auditOf()
		notice = h.changeNoticeFrom(c, audit, err, since)
	} else {
		notice = h.changeNotice(ctx, c, ref.QuoteID, since)
	}
	vm := quotes.LiveNoticeVM{Subject: "quote", ShowURL: ref.Sub("/current"), Notice: notice}
	h.render(c, http.StatusOK, quotes.LiveNotice(vm))
}

// showCurrentQuote is GET .../current ("Show changes" of the live notice): every cart and the
// summary as they are now, highlighted against the fingerprint the page sent, the new fingerprint,
// and the notice cleared. Keyboard focus stays where it was.
func (h *Handler) showCurrentQuote(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	q, err := h.api.CPQ.TOFList(h.apiContext(c), a.ref.CPQID, a.ref.CustomerID, a.ref.QuoteID)
	if err != nil {
		h.fail(c, fmt.Errorf("get quote %d: %w", a.ref.QuoteID, err))
		return
	}
	v := newQuoteView(tr(c), a.ref, q, a.prev)
	vm := v.update()
	carts := v.carts(false)
	vm.Carts = &carts
	h.changes.ObserveBy(quoteWatchKey(a.ref), customerCacheKey(c), vm.DigestTag)
	announce(c, t(c, "quote.announce.current")+" "+totalText(tr(c), q))
	h.render(c, http.StatusOK, quotes.UpdatePartial(vm))
}

// idleLiveMaxAge is how old a shared change tag an idle page accepts (app.js sends idle=1 when its
// user has not touched the page for 2 minutes or the tab is hidden; it then polls once a minute):
// many idle viewers of one quote cost one v2 read a minute on this replica (issue 27).
const idleLiveMaxAge = time.Minute

// liveMaxAge is the age of a shared change tag this poll accepts: the watcher's interval for an
// active page, idleLiveMaxAge for an idle one.
func liveMaxAge(c *gin.Context) time.Duration {
	if c.Query("idle") == "1" {
		return idleLiveMaxAge
	}
	return 0
}

// etagValue reads an If-None-Match value: the first entity tag, without W/ and quotes.
func etagValue(header string) string {
	header, _, _ = strings.Cut(header, ",")
	header = strings.TrimSpace(header)
	header = strings.TrimPrefix(header, "W/")
	return strings.Trim(header, `"`)
}
