package handlers

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
	"github.com/cpqportal/portal/web/templates/layout"
)

// The owners of a customer (docs/v2-assumptions.md A8): add one (POST /{id}/owner/{ownerId}),
// change one (PUT /{id}/owner/change) and replace them all (PUT /{id}/owners). Owner ids are
// typed: the directory of sales users is not exposed by the spec; the suggestions are the owners
// named in the user's customer list.

// maxOwners is the most owners a customer has (A8: the replace call takes 1 to 10 ids).
const maxOwners = 10

// parseOwnerID reads an owner id typed into a form: "" and a message when it is not an id.
func parseOwnerID(raw string) (int64, string) {
	if raw == "" {
		return 0, "Enter an owner id"
	}
	id, err := parseID(raw, "ownerId", math.MaxInt64)
	if err != nil {
		return 0, "Enter the owner id as a whole number, like 1003"
	}
	return id, ""
}

// addCustomerOwner is POST /customers/{customerId}/owners/add.
func (h *Handler) addCustomerOwner(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := c.Request.ParseForm(); err != nil {
		h.fail(c, err)
		return
	}
	raw := strings.TrimSpace(c.Request.PostForm.Get("ownerId"))
	ownerID, msg := parseOwnerID(raw)
	if msg != "" {
		h.renderSmallForm(c, http.StatusUnprocessableEntity, customerID, "Add an owner", "",
			customers.OwnerAddForm(customers.NewOwnerAddForm(customerID, raw, msg)))
		return
	}
	cust, err := h.api.Customers.AddOwner(h.apiContext(c), customerID, ownerID)
	if err != nil {
		h.ownerFormAPIError(c, err, customerID, "Add an owner", func(msg string) templ.Component {
			return customers.OwnerAddForm(customers.NewOwnerAddForm(customerID, raw, msg))
		})
		return
	}
	h.ownersSaved(c, cust, fmt.Sprintf("Owner %d added.", ownerID))
}

// changeCustomerOwner is POST /customers/{customerId}/owners/change (the form of one owner).
func (h *Handler) changeCustomerOwner(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := c.Request.ParseForm(); err != nil {
		h.fail(c, err)
		return
	}
	// The current owner comes from a hidden input: a malformed one is not the user's typing.
	currentOwnerID, err := parseID(strings.TrimSpace(c.Request.PostForm.Get("currentOwnerId")), "currentOwnerId", math.MaxInt64)
	if err != nil {
		h.fail(c, badRequest("customer.error.owner_missing"))
		return
	}
	raw := strings.TrimSpace(c.Request.PostForm.Get("newOwnerId"))
	newOwnerID, msg := parseOwnerID(raw)
	if msg == "" && newOwnerID == currentOwnerID {
		msg = "Enter the id of another owner"
	}
	form := func(msg string) templ.Component {
		return customers.OwnerChangeForm(customers.NewOwnerChangeForm(customerID, currentOwnerID, raw, msg))
	}
	title := fmt.Sprintf("Replace owner %d", currentOwnerID)
	if msg != "" {
		h.renderSmallForm(c, http.StatusUnprocessableEntity, customerID, title, "", form(msg))
		return
	}
	cust, err := h.api.Customers.ChangeOwner(h.apiContext(c), customerID, currentOwnerID, newOwnerID)
	if err != nil {
		h.ownerFormAPIError(c, err, customerID, title, form)
		return
	}
	h.ownersSaved(c, cust, fmt.Sprintf("Owner %d replaced by owner %d.", currentOwnerID, newOwnerID))
}

// replaceCustomerOwners is POST /customers/{customerId}/owners: all owners at once.
func (h *Handler) replaceCustomerOwners(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := c.Request.ParseForm(); err != nil {
		h.fail(c, err)
		return
	}
	raw := strings.TrimSpace(c.Request.PostForm.Get("ownerIds"))
	ownerIDs, msg := parseOwnerIDList(raw)
	form := func(msg string) templ.Component {
		return customers.OwnersReplaceForm(customers.NewOwnersReplaceForm(customerID, raw, msg))
	}
	if msg != "" {
		h.renderSmallForm(c, http.StatusUnprocessableEntity, customerID, "Replace all owners", "", form(msg))
		return
	}
	cust, err := h.api.Customers.SetOwners(h.apiContext(c), customerID, ownerIDs)
	if err != nil {
		h.ownerFormAPIError(c, err, customerID, "Replace all owners", form)
		return
	}
	h.ownersSaved(c, cust, fmt.Sprintf("Owners replaced: %d owner(s).", len(cust.Owners)))
}

// parseOwnerIDList reads 1 to 10 distinct owner ids separated by commas or spaces.
func parseOwnerIDList(raw string) ([]int64, string) {
	parts := strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) })
	if len(parts) == 0 {
		return nil, "Enter at least one owner id"
	}
	if len(parts) > maxOwners {
		return nil, fmt.Sprintf("Enter at most %d owner ids", maxOwners)
	}
	ids := make([]int64, 0, len(parts))
	for _, p := range parts {
		id, msg := parseOwnerID(p)
		if msg != "" {
			return nil, fmt.Sprintf("“%s” is not an owner id: enter whole numbers, like 1003, 1004", clipForMessage(p))
		}
		if slices.Contains(ids, id) {
			return nil, fmt.Sprintf("Owner %d is listed twice", id)
		}
		ids = append(ids, id)
	}
	return ids, ""
}

// clipForMessage shortens user input quoted back in a message.
func clipForMessage(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if r := []rune(s); len(r) > 20 {
		return string(r[:20]) + "…"
	}
	return s
}

// renderSmallForm answers one of the detail page's small forms (owners, profile) with an error:
// the form alone for htmx (it targets itself or its own region), a small page around it for a
// plain browser form.
func (h *Handler) renderSmallForm(c *gin.Context, status int, customerID int32, title, regionID string, form templ.Component) {
	if isHTMX(c) {
		h.render(c, status, form)
		return
	}
	h.renderPage(c, status, title, layout.SectionCustomers, customers.StandaloneForm(title, customerHref(customerID), regionID, form))
}

// ownerFormAPIError answers a refused owner call: 409/422 become the form's field error (the
// service's messages whole), a missing customer the 404 page or toast, the rest the error edge.
func (h *Handler) ownerFormAPIError(c *gin.Context, err error, customerID int32, title string, form func(msg string) templ.Component) {
	var apiErr *apiclient.APIError
	if !errors.As(err, &apiErr) || (apiErr.Status != http.StatusConflict && apiErr.Status != http.StatusUnprocessableEntity) {
		h.failCustomer(c, customerID, err)
		return
	}
	h.log(c).Info("owner change refused by the v2 API", "status", apiErr.Status, "err", err)
	h.renderSmallForm(c, apiErr.Status, customerID, title, "", form(apiMessages(apiErr)))
}

// apiMessages is a v2 refusal as one sentence: its field messages, else its message.
func apiMessages(e *apiclient.APIError) string {
	var parts []string
	for _, fe := range e.FieldErrors {
		parts = append(parts, fe.Message)
	}
	if len(parts) == 0 && e.Message != "" {
		parts = append(parts, e.Message)
	}
	if len(parts) == 0 {
		return "The CPQ service refused the change."
	}
	msg := strings.Join(parts, "; ")
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// ownersSaved answers a successful owner call (the v2 API answers the customer document): the
// owners region for htmx, with a toast; a redirect to the customer for a plain form. The
// user's cached list gets the change at once.
func (h *Handler) ownersSaved(c *gin.Context, cust *apiclient.Customer, message string) {
	h.customers.Upsert(customerCacheKey(c), cust)
	h.log(c).Info("customer owners changed", "customer_id", cust.ID)
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, customerHref(cust.ID)+"#"+customers.OwnersID)
		return
	}
	h.toast(c, components.ToastSuccess, message)
	c.Header("HX-Retarget", "#"+customers.OwnersID)
	c.Header("HX-Reswap", "outerHTML")
	h.render(c, http.StatusOK, customers.OwnersPartial(h.ownersVM(c, cust)))
}
