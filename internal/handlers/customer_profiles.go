package handlers

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
)

// Customer profiles (docs/v2-assumptions.md A8): create (POST /v2/customer/customerprofile) and
// delete (DELETE /v2/customer/customerprofile?customerId=&profileId=, after a confirmation).

// maxContactNameRunes is A8's bound of a profile's contact name.
const maxContactNameRunes = 200

// readProfileForm reads and checks the profile form; errors are keyed by input name.
func readProfileForm(c *gin.Context) (customers.ProfileInput, map[string]string, error) {
	if err := c.Request.ParseForm(); err != nil {
		return customers.ProfileInput{}, nil, err
	}
	get := func(name string) string { return strings.TrimSpace(c.Request.PostForm.Get(name)) }
	in := customers.ProfileInput{ProfileType: get("profileType"), ContactName: get("contactName"), Email: get("email"), Phone: get("phone")}
	errs := map[string]string{}
	tr := tr(c)
	if !slices.Contains(customers.ProfileTypes(), in.ProfileType) {
		errs["profileType"] = tr.T("customer.error.profile_type")
	}
	switch {
	case !utf8.ValidString(in.ContactName) || strings.ContainsFunc(in.ContactName, unicode.IsControl):
		errs["contactName"] = tr.T("customer.error.bad_characters", profileFieldLabel(tr, "contactName"))
	case utf8.RuneCountInString(in.ContactName) > maxContactNameRunes:
		errs["contactName"] = tr.T("customer.error.too_long", profileFieldLabel(tr, "contactName"), maxContactNameRunes)
	}
	if in.Email != "" && !customerrules.ValidEmail(in.Email) {
		errs["email"] = tr.T("customer.error.email")
	}
	if in.Phone != "" && !customerrules.ValidPhone(in.Phone) {
		errs["phone"] = tr.T("customer.error.phone")
	}
	return in, errs, nil
}

// profileFormField maps a v2 fieldError of the profile call to its input ("" for none).
func profileFormField(apiField string) string {
	if slices.Contains([]string{"profileType", "contactName", "email", "phone"}, apiField) {
		return apiField
	}
	return ""
}

func profileFieldLabel(tr *i18n.Translator, name string) string {
	switch name {
	case "profileType":
		return tr.T("customer.profiles.col.type")
	case "contactName":
		return tr.T("customer.profiles.contact_name")
	case "email":
		return tr.T("customer.field.email")
	case "phone":
		return tr.T("customer.field.phone")
	}
	return name
}

// renderProfileForm answers the profile form with errors: the form alone for htmx (it targets
// itself), a small page around it otherwise.
func (h *Handler) renderProfileForm(c *gin.Context, status int, customerID int32, form customers.ProfileFormVM) {
	h.renderSmallForm(c, status, customerID, t(c, "customer.profiles.add_title"), customers.ProfileFormRegionID, customers.ProfileForm(form))
}

// createCustomerProfile is POST /customers/{customerId}/profiles.
func (h *Handler) createCustomerProfile(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	in, errs, err := readProfileForm(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if len(errs) > 0 {
		h.renderProfileForm(c, http.StatusUnprocessableEntity, customerID, customers.NewProfileForm(tr(c), customerID, in, errs))
		return
	}
	ctx := h.apiContext(c)
	profile, err := h.api.Customers.CreateProfile(ctx, apiclient.ProfileInput{
		CustomerID: customerID, ProfileType: in.ProfileType, ContactName: in.ContactName, Email: in.Email, Phone: in.Phone,
	})
	if err != nil {
		apiErrs, status, ok := apiFormErrors(tr(c), err, profileFormField, profileFieldLabel)
		if !ok {
			h.failCustomer(c, customerID, err)
			return
		}
		h.log(c).Info("profile refused by the v2 API", "status", status, "err", err)
		h.renderProfileForm(c, status, customerID, customers.NewProfileForm(tr(c), customerID, in, apiErrs))
		return
	}
	h.log(c).Info("customer profile created", "customer_id", customerID, "profile_id", profile.ProfileID)
	h.profilesSaved(c, customerID, t(c, "customer.toast.profile_added", profile.ProfileType))
}

// deleteCustomerProfile is POST /customers/{customerId}/profiles/{profileId}/delete.
func (h *Handler) deleteCustomerProfile(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	profileID, err := parseInt32ID(c, "profileId")
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := h.api.Customers.DeleteProfile(h.apiContext(c), customerID, profileID); err != nil {
		h.fail(c, err) // a 404 carries the service's message: profile or customer not found
		return
	}
	h.log(c).Info("customer profile deleted", "customer_id", customerID, "profile_id", profileID)
	h.profilesSaved(c, customerID, t(c, "customer.toast.profile_deleted", strconv.FormatInt(int64(profileID), 10)))
}

// profilesSaved answers a successful profile call: the profiles region, read again from the v2
// API (the calls do not answer the customer), with a toast; a redirect for a plain form.
func (h *Handler) profilesSaved(c *gin.Context, customerID int32, message string) {
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, customerHref(customerID)+"#"+customers.ProfilesID)
		return
	}
	cust, err := h.api.Customers.Get(h.apiContext(c), customerID)
	if err != nil {
		// The change is done; only the refreshed region is missing: say so, and reload the page.
		h.log(c).Warn("profiles changed but the customer could not be read again", "customer_id", customerID, "err", err)
		h.toast(c, components.ToastSuccess, message+" "+t(c, "customer.toast.reloading"))
		c.Header("HX-Refresh", "true")
		c.Status(http.StatusOK)
		return
	}
	h.customers.Upsert(customerCacheKey(c), cust)
	h.toast(c, components.ToastSuccess, message)
	c.Header("HX-Retarget", "#"+customers.ProfilesID)
	c.Header("HX-Reswap", "outerHTML")
	h.render(c, http.StatusOK, customers.ProfilesPartial(profilesVM(tr(c), cust, customers.NewProfileForm(tr(c), customerID, customers.ProfileInput{}, nil))))
}
