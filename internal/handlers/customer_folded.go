package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
	"github.com/cpqportal/portal/web/templates/layout"
)

// The customer page's folded sections ("Add or replace owners", the trees of its attributes and
// other fields) are loaded when the person opens them (customers.LazyDetails): most views never
// open them, and rendering and compressing them was about a tenth of the page's CPU (issue 43).
// Each answers the section's content to htmx and, to a browser without JavaScript following the
// fallback link, a page of its own. Each reads the customer again, so a customer the v2 API no
// longer shows (deleted, refused) is answered as on the customer page.

// showOwnersManage is GET /customers/{customerId}/owners/manage: the add-owner and
// replace-owners forms.
func (h *Handler) showOwnersManage(c *gin.Context) {
	cust, ok := h.foldedCustomer(c)
	if !ok {
		return
	}
	h.renderFolded(c, cust, t(c, "customer.owners.manage"), customers.OwnersManage(cust.ID))
}

// showCustomerAttributes is GET /customers/{customerId}/attributes: the tree of the customer's
// free attributes.
func (h *Handler) showCustomerAttributes(c *gin.Context) {
	cust, ok := h.foldedCustomer(c)
	if !ok {
		return
	}
	h.renderFolded(c, cust, t(c, "customer.detail.attributes"), components.JSONTree(customerAttributes(cust)))
}

// showCustomerOtherFields is GET /customers/{customerId}/other-fields: the tree of the fields
// of the customer document the portal does not know.
func (h *Handler) showCustomerOtherFields(c *gin.Context) {
	cust, ok := h.foldedCustomer(c)
	if !ok {
		return
	}
	h.renderFolded(c, cust, t(c, "customer.detail.other"), components.JSONTree(h.customerOtherFields(c, cust)))
}

// foldedCustomer reads the customer of the request's path; false when the error edge answered.
func (h *Handler) foldedCustomer(c *gin.Context) (*apiclient.Customer, bool) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return nil, false
	}
	cust, err := h.api.Customers.Get(h.apiContext(c), customerID)
	if err != nil {
		h.failCustomer(c, customerID, err)
		return nil, false
	}
	return cust, true
}

// renderFolded answers a folded section: its content to htmx, else a page around it.
func (h *Handler) renderFolded(c *gin.Context, cust *apiclient.Customer, title string, content templ.Component) {
	if isHTMX(c) {
		h.render(c, http.StatusOK, content)
		return
	}
	// The name only in the document's title: a heading would have to isolate it (<bdi>).
	h.renderPage(c, http.StatusOK, cust.Name+" – "+title, layout.SectionCustomers, customers.StandaloneForm(title, customerHref(cust.ID), "", content))
}

// customerAttributes is the customer's free attributes, nil when there are none.
func customerAttributes(cust *apiclient.Customer) json.RawMessage {
	if attrs := bytes.TrimSpace(cust.Attributes); len(attrs) > 0 && !bytes.Equal(attrs, []byte("null")) && !bytes.Equal(attrs, []byte("{}")) {
		return cust.Attributes
	}
	return nil
}

// customerOtherFields is every field of the customer document the portal does not know, as one
// JSON object (nil when there is none).
func (h *Handler) customerOtherFields(c *gin.Context, cust *apiclient.Customer) json.RawMessage {
	// The client decoded Raw, so it is valid JSON: no second check (docs/performance.md).
	other, err := otherFieldsOfValid(cust.Raw, knownCustomerFields, map[string][]string{"address": knownAddressFields})
	if err != nil {
		h.log(c).Warn("customer document: cannot list its other fields", "customer_id", cust.ID, "err", err)
	}
	return other
}
