package handlers

import (
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/layout"
)

// showWorkQuotes answers GET /work/quotes: "My quotes" (made or last changed by me) by default,
// every quote the user may see with scope=all (the team's for PORTAL_TEAM_ROLES); filters by
// stage, customer, configurator and date range, sorted by last change or value, found by quote
// number or customer name.
func (h *Handler) showWorkQuotes(c *gin.Context) {
	trl := tr(c)
	h.showWorkList(c, workListSpec{
		kind: workindex.KindQuote, path: "/work/quotes", title: trl.T("work.quotes.title"),
		stages:    workindex.Stages(),
		mineLabel: trl.T("work.scope.mine_quotes"), allLabel: h.allScopeLabel(c),
		emptyHint: trl.T("work.quotes.empty"), section: layout.SectionWork,
	})
}

// allScopeLabel names the "all" scope: the team's for a team role, "all I worked on" otherwise.
func (h *Handler) allScopeLabel(c *gin.Context) string {
	if h.viewer(c).Team {
		return t(c, "work.scope.team")
	}
	return t(c, "work.scope.seen")
}
