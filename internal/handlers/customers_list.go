package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/pages"
)

// showCustomerList is a placeholder for the customer list (the customers engineer replaces this file).
func (h *Handler) showCustomerList(c *gin.Context) {
	h.renderPage(c, http.StatusOK, "Customers", layout.SectionCustomers,
		pages.Placeholder("Customers", "The customer list will be shown here."))
}
