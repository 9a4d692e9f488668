package handlers

import (
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
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
func parseOwnerID(raw string) (int64, i18n.Message) {
	if raw == "" {
		return 0, i18n.M("customer.error.owner_required")
	}
	id, err := parseID(raw, "ownerId", math.MaxInt64)
	if err != nil {
		return 0, i18n.M("customer.error.owner_format")
	}
	return id, i18n.Message{}
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
	ownerID, problem := parseOwnerID(raw)
	title := t(c, "customer.owners.add_label")
	if !problem.IsZero() {
		h.renderSmallForm(c, http.StatusUnprocessableEntity, customerID, title, "",
			customers.OwnerAddForm(customers.NewOwnerAddForm(tr(c), customerID, raw, problem.In(tr(c)))))
		return
	}
	cust, err := h.api.Customers.AddOwner(h.apiContext(c), customerID, ownerID)
	if err != nil {
		h.ownerFormAPIError(c, err, customerID, title, func(msg string) templ.Component {
			return customers.OwnerAddForm(customers.NewOwnerAddForm(tr(c), customerID, raw, msg))
		})
		return
	}
	h.ownersSaved(c, cust, t(c, "customer.toast.owner_added", strconv.FormatInt(ownerID, 10)))
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
	newOwnerID, problem := parseOwnerID(raw)
	if problem.IsZero() && newOwnerID == currentOwnerID {
		problem = i18n.M("customer.error.owner_same")
	}
	form := func(msg string) templ.Component {
		return customers.OwnerChangeForm(customers.NewOwnerChangeForm(tr(c), customerID, currentOwnerID, raw, msg))
	}
	title := t(c, "customer.owners.replace_title", strconv.FormatInt(currentOwnerID, 10))
	if !problem.IsZero() {
		h.renderSmallForm(c, http.StatusUnprocessableEntity, customerID, title, "", form(problem.In(tr(c))))
		return
	}
	cust, err := h.api.Customers.ChangeOwner(h.apiContext(c), customerID, currentOwnerID, newOwnerID)
	if err != nil {
		h.ownerFormAPIError(c, err, customerID, title, form)
		return
	}
	h.ownersSaved(c, cust, t(c, "customer.toast.owner_changed", strconv.FormatInt(currentOwnerID, 10), strconv.FormatInt(newOwnerID, 10)))
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
	ownerIDs, problem := parseOwnerIDList(raw)
	form := func(msg string) templ.Component {
		return customers.OwnersReplaceForm(customers.NewOwnersReplaceForm(tr(c), customerID, raw, msg))
	}
	title := t(c, "customer.owners.replace_submit")
	if !problem.IsZero() {
		h.renderSmallForm(c, http.StatusUnprocessableEntity, customerID, title, "", form(problem.In(tr(c))))
		return
	}
	cust, err := h.api.Customers.SetOwners(h.apiContext(c), customerID, ownerIDs)
	if err != nil {
		h.ownerFormAPIError(c, err, customerID, title, form)
		return
	}
	h.ownersSaved(c, cust, tr(c).Plural(len(cust.Owners), "customer.toast.owners_replaced_one", "customer.toast.owners_replaced"))
}

// parseOwnerIDList reads 1 to 10 distinct owner ids separated by commas or spaces.
func parseOwnerIDList(raw string) ([]int64, i18n.Message) {
	parts := strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) })
	if len(parts) == 0 {
		return nil, i18n.M("customer.error.owners_required")
	}
	if len(parts) > maxOwners {
		return nil, i18n.M("customer.error.owners_too_many", maxOwners)
	}
	ids := make([]int64, 0, len(parts))
	for _, p := range parts {
		id, problem := parseOwnerID(p)
		if !problem.IsZero() {
			return nil, i18n.M("customer.error.owners_not_id", clipForMessage(p))
		}
		if slices.Contains(ids, id) {
			return nil, i18n.M("customer.error.owners_twice", strconv.FormatInt(id, 10))
		}
		ids = append(ids, id)
	}
	return ids, i18n.Message{}
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
	h.renderSmallForm(c, apiErr.Status, customerID, title, "", form(apiMessages(tr(c), apiErr)))
}

// apiMessages is a v2 refusal as one sentence: its field messages, else its message.
func apiMessages(tr *i18n.Translator, e *apiclient.APIError) string {
	var parts []string
	for _, fe := range e.FieldErrors {
		parts = append(parts, fe.Message)
	}
	if len(parts) == 0 && e.Message != "" {
		parts = append(parts, e.Message)
	}
	if len(parts) == 0 {
		return tr.T("customer.error.api_refused_plain")
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
