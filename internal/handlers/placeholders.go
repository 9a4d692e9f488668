package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/pages"
)

// Placeholder pages of areas not built yet; each is replaced by its area's real handlers.

// showQuotesPlaceholder is the Quotes area until its pages exist.
func (h *Handler) showQuotesPlaceholder(c *gin.Context) {
	h.renderPage(c, http.StatusOK, "Quotes", layout.SectionQuotes,
		pages.Placeholder("Quotes", "Quotes are opened from a customer: choose a customer, then start or resume a quote."))
}

// showContractsPlaceholder is the Contracts area until its pages exist.
func (h *Handler) showContractsPlaceholder(c *gin.Context) {
	h.renderPage(c, http.StatusOK, "Contracts", layout.SectionContracts,
		pages.Placeholder("Contracts", "Contracts generated from quotes will be found here."))
}

// showAuditsPlaceholder is the Audits area until its pages exist.
func (h *Handler) showAuditsPlaceholder(c *gin.Context) {
	h.renderPage(c, http.StatusOK, "Audits", layout.SectionAudits,
		pages.Placeholder("Audits", "Validation audits of quotes will be found here."))
}
