package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/layout"
)

// showWorkContracts answers GET /work/contracts: the contracts the user may see, by stage
// (generated, out for signature, archived) and the quotes list's other filters; the selected ones
// go to the batch-archive check with "Archive selected" (POST /contracts/batch-archive).
func (h *Handler) showWorkContracts(c *gin.Context) {
	trl := tr(c)
	h.showWorkList(c, workListSpec{
		kind: workindex.KindContract, path: "/work/contracts", title: trl.T("work.contracts.title"),
		stages:    workindex.ContractStages(),
		mineLabel: trl.T("work.scope.mine_contracts"), allLabel: h.allScopeLabel(c),
		emptyHint: trl.T("work.contracts.empty"), section: layout.SectionWork,
	})
}

// showWorkStart answers GET /work, the start page after sign-in: back office lands on the
// contracts list, everyone else on My quotes (roles: PORTAL_BACKOFFICE_ROLES).
func (h *Handler) showWorkStart(c *gin.Context) {
	target := "/work/quotes"
	if h.isBackoffice(c) {
		target = "/work/contracts"
	}
	c.Redirect(http.StatusSeeOther, target)
}
