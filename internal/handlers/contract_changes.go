package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/contracts"
)

// Live notice of an open contract page (issue 18): the same scheme as quote_changes.go. The state
// compared is the contract's status, its signature requests and its archive (docs/v2-assumptions.md
// A10); the notice offers a reload of the page.

// contractChangeTag is a short hash of what the contract page shows of a contract's state.
func contractChangeTag(contract *apiclient.Contract) string {
	var b strings.Builder
	b.WriteString(contract.Status)
	b.WriteString("|" + strconv.FormatBool(isArchived(contract)))
	for _, r := range contract.SignatureRequests {
		b.WriteString("|" + string(r.SignatureRequestID) + "=" + r.Status)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:12])
}

// contractWatchKey is the shared watcher's key of a contract.
func contractWatchKey(contractID int32) string { return "contract:" + strconv.Itoa(int(contractID)) }

// pollContractChanges is GET /contracts/:contractId/changes[?since=<unix ms>], polled by app.js with
// If-None-Match: the change tag the page was rendered with.
func (h *Handler) pollContractChanges(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Cache-Control", "private, no-cache")
	c.Header("Vary", "Cookie")
	seen := etagValue(c.GetHeader("If-None-Match"))
	ctx := h.apiContext(c)
	var own *apiclient.Contract
	tag, err := h.changes.TagFor(ctx, contractWatchKey(contractID), customerCacheKey(c), liveMaxAge(c), func(ctx context.Context) (string, error) {
		contract, err := h.loadContract(ctx, contractID)
		if err != nil {
			return "", err
		}
		own = contract
		return contractChangeTag(contract), nil
	})
	if err != nil {
		h.fail(c, fmt.Errorf("has contract %d changed: %w", contractID, err))
		return
	}
	if tag != seen && own == nil {
		// Changed: what this viewer is shown is read with their own token.
		if own, err = h.loadContract(ctx, contractID); err != nil {
			h.fail(c, err)
			return
		}
		tag = contractChangeTag(own)
		h.changes.ObserveBy(contractWatchKey(contractID), customerCacheKey(c), tag)
	}
	if tag != seen {
		h.indexContract(c, own, workindex.ActRefreshed) // a colleague's change reaches the lists too
	}
	c.Header("ETag", `"`+tag+`"`)
	if tag == seen {
		c.Status(http.StatusNotModified)
		return
	}
	var since time.Time
	if ms, err := strconv.ParseInt(c.Query("since"), 10, 64); err == nil && ms > 0 {
		since = time.UnixMilli(ms).Truncate(time.Second)
	}
	notice := h.changeNotice(ctx, c, own.QuoteID, since)
	vm := contracts.LiveNoticeVM{Who: notice.Who, Ago: notice.Ago, AgoSeconds: notice.AgoSeconds, Actions: notice.Actions, ReloadURL: contractPath(contractID)}
	h.render(c, http.StatusOK, templ.Join(contracts.LiveNotice(vm), h.followingRegions(tr(c), own)))
}

// markContractSeen tells the page (header X-Live-Tag, read by app.js) and the watcher the contract's
// state after the user's own action, so their own change does not come back as a notice; and
// (X-Live-Since) the time the page's notices count from, so a later notice (the signer signed)
// lists what happened after this action, not the action itself as someone's change.
func (h *Handler) markContractSeen(c *gin.Context, contract *apiclient.Contract) {
	tag := contractChangeTag(contract)
	h.changes.ObserveBy(contractWatchKey(contract.ContractID), customerCacheKey(c), tag)
	c.Header("X-Live-Tag", tag)
	c.Header("X-Live-Since", strconv.FormatInt(h.now().UnixMilli(), 10))
}
