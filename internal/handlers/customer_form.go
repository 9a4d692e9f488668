package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/countries"
	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
	"github.com/cpqportal/portal/web/templates/layout"
)

// Create and edit a customer (POST and PUT /v2/customer). The portal checks the rules of
// docs/v2-assumptions.md A8 itself first, so most mistakes never leave the portal; what the v2
// API still refuses (a tax id already used, a stale version) is mapped back onto the fields.

// maxDuplicatesShown bounds the duplicate warning.
const maxDuplicatesShown = 5

// customerForm is what the user sent with the create/edit form.
type customerForm struct {
	Name, TaxID, Email, Phone, Segment string
	Street, City, PostalCode, Country  string
	Attributes                         string
	CPQIDs                             []int32
	CPQRaw                             []string
	CPQShown                           bool
	Version                            int64
	ConfirmedDuplicate                 string
}

// readCustomerForm reads the posted form, trimmed and normalised (tax id and country code in upper
// case, as A8 requires; the form's country list sends codes, so only a hand-made request differs). A body over the limit is an error for the error edge.
func readCustomerForm(c *gin.Context) (customerForm, error) {
	if err := c.Request.ParseForm(); err != nil {
		return customerForm{}, fmt.Errorf("read the customer form: %w", err)
	}
	get := func(name string) string { return strings.TrimSpace(c.Request.PostForm.Get(name)) }
	f := customerForm{
		Name: get("name"), TaxID: customerrules.TaxID(get("taxId"), get("country")), Email: get("email"), Phone: get("phone"),
		Segment: get("segment"), Street: get("street"), City: get("city"), PostalCode: get("postalCode"),
		Country: strings.ToUpper(get("country")), Attributes: get("attributes"),
		CPQRaw: c.Request.PostForm["cpqIds"], CPQShown: get("cpqShown") == "1",
		ConfirmedDuplicate: get("confirmedDuplicate"),
	}
	return f, nil
}

// validate checks the form against A8 (customerrules.Check, the same check as the customer
// import's); errors are keyed by input name ("" for the form), in tr's language. Optional fields
// may be empty, also on an edit, where that clears them (A8).
func (f *customerForm) validate(tr *i18n.Translator, knownCountry func(code string) bool) map[string]string {
	errs := map[string]string{}
	for _, p := range customerrules.Check(f.fields(), knownCountry) {
		errs[p.Field] = p.Message().In(tr)
	}
	if f.CPQShown {
		f.CPQIDs = f.CPQIDs[:0]
		for _, raw := range f.CPQRaw {
			id, err := parseID(raw, "cpqId", math.MaxInt32)
			if err != nil {
				errs["cpqIds"] = tr.T("customer.error.cpq_choice")
				break
			}
			if !slices.Contains(f.CPQIDs, int32(id)) {
				f.CPQIDs = append(f.CPQIDs, int32(id))
			}
		}
		if len(f.CPQRaw) == 0 {
			errs["cpqIds"] = tr.T("customer.error.cpq_none")
		}
	}
	return errs
}

// fields are the form's customer data as customerrules checks it.
func (f *customerForm) fields() customerrules.Fields {
	return customerrules.Fields{Name: f.Name, TaxID: f.TaxID, Email: f.Email, Phone: f.Phone, Segment: f.Segment,
		Street: f.Street, City: f.City, PostalCode: f.PostalCode, Country: f.Country, Attributes: f.Attributes}
}

// input is the v2 body of the create form (optional fields left out when empty; configurators
// only when the form offered them: none means every configurator, A8).
func (f customerForm) input() apiclient.CustomerInput {
	in := apiclient.CustomerInput{Name: f.Name, TaxID: f.TaxID, Email: f.Email, Phone: f.Phone, Segment: f.Segment,
		Attributes: f.compactAttributes()}
	if f.Street != "" || f.City != "" || f.PostalCode != "" || f.Country != "" {
		in.Address = &apiclient.Address{Street: f.Street, City: f.City, PostalCode: f.PostalCode, Country: f.Country}
	}
	if f.CPQShown {
		in.CPQIDs = slices.Clone(f.CPQIDs)
	}
	return in
}

// update is the v2 body of the edit form. Every text field the form sent is sent as it stands:
// one the user emptied goes as "" and the service clears it (A8). A field missing from the
// posted form (a hand-made request) is left out and keeps its value, as are attributes left
// empty and configurators the form could not offer.
func (f customerForm) update(customerID int32, posted url.Values) apiclient.CustomerUpdate {
	sent := func(name, value string) *string {
		if _, ok := posted[name]; !ok {
			return nil
		}
		return new(value)
	}
	up := apiclient.CustomerUpdate{
		ID: customerID, Version: f.Version, Name: f.Name, TaxID: f.TaxID, Segment: f.Segment,
		Email: sent("email", f.Email), Phone: sent("phone", f.Phone),
		Attributes: f.compactAttributes(),
	}
	address := apiclient.AddressUpdate{Street: sent("street", f.Street), City: sent("city", f.City),
		PostalCode: sent("postalCode", f.PostalCode), Country: sent("country", f.Country)}
	if address != (apiclient.AddressUpdate{}) {
		up.Address = &address
	}
	if f.CPQShown {
		up.CPQIDs = slices.Clone(f.CPQIDs)
	}
	return up
}

// compactAttributes is the attributes JSON without insignificant spaces; nil when the form
// has none (validate has checked it is an object).
func (f customerForm) compactAttributes() json.RawMessage {
	if f.Attributes == "" {
		return nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(f.Attributes)); err != nil {
		return nil
	}
	return compact.Bytes()
}

// duplicateKey identifies the name and tax id the user confirmed past.
func (f customerForm) duplicateKey() string {
	return customercache.NormalizeName(f.Name) + "|" + f.TaxID
}

// customerFieldLabel is the label of a form input in tr's language, for the form and messages.
func customerFieldLabel(tr *i18n.Translator, name string) string {
	switch name {
	case "name":
		return tr.T("customer.field.name")
	case "taxId":
		return tr.T("customer.field.tax_id")
	case "segment":
		return tr.T("customer.field.segment")
	case "email":
		return tr.T("customer.field.email")
	case "phone":
		return tr.T("customer.field.phone")
	case "street":
		return tr.T("customer.field.street")
	case "city":
		return tr.T("customer.field.city")
	case "postalCode":
		return tr.T("customer.field.postal_code")
	case "country":
		return tr.T("customer.field.country")
	case "cpqIds":
		return tr.T("customer.form.configurators")
	case "attributes":
		return tr.T("customer.detail.attributes")
	}
	return name
}

// customerFormField maps a v2 fieldError name (A2/A8) to the form input it is about, or "".
func customerFormField(apiField string) string {
	switch {
	case apiField == "address.street":
		return "street"
	case apiField == "address.city":
		return "city"
	case apiField == "address.postalCode":
		return "postalCode"
	case apiField == "address.country":
		return "country"
	case apiField == "cpqIds" || strings.HasPrefix(apiField, "cpqIds["):
		return "cpqIds"
	case slices.Contains([]string{"name", "taxId", "email", "phone", "segment", "attributes"}, apiField):
		return apiField
	}
	return ""
}

// apiFormErrors maps a 409 or 422 answer of the v2 API onto a form: field errors go to the
// inputs mapField names (labelled), the others and the service's message (when no field error
// explains it) to "" (the summary, shown whole). status is the v2 status; ok is false for any
// other error, which belongs to the error edge.
func apiFormErrors(tr *i18n.Translator, err error, mapField func(string) string, label func(*i18n.Translator, string) string) (errs map[string]string, status int, ok bool) {
	var apiErr *apiclient.APIError
	if !errors.As(err, &apiErr) || (apiErr.Status != http.StatusConflict && apiErr.Status != http.StatusUnprocessableEntity) {
		return nil, 0, false
	}
	errs = map[string]string{}
	var general []string
	for _, fe := range apiErr.FieldErrors {
		name := mapField(fe.Field)
		if name == "" {
			general = append(general, fe.Field+": "+fe.Message)
			continue
		}
		if _, seen := errs[name]; !seen {
			errs[name] = labelled(tr, label(tr, name), fe.Message)
		}
	}
	if len(apiErr.FieldErrors) == 0 {
		msg := apiErr.Message
		if msg == "" {
			msg = tr.T("customer.error.api_no_message")
		}
		general = append(general, tr.T("customer.error.api_refused", msg))
	}
	if len(general) > 0 {
		errs[""] = strings.Join(general, "; ")
	}
	return errs, apiErr.Status, true
}

// labelled joins a field label and a v2 message fragment (the v2 API speaks English): "Tax id is
// already used by another customer"; a message that is a sentence of its own gets a colon. Other
// languages always use the colon form (their label cannot start an English sentence).
func labelled(tr *i18n.Translator, label, msg string) string {
	for _, start := range []string{"must ", "is ", "are ", "should ", "cannot ", "may "} {
		if strings.HasPrefix(msg, start) {
			return tr.T("customer.error.api_field_fragment", label, msg)
		}
	}
	return tr.T("customer.error.api_field", label, msg)
}

// customerFormVM builds the form view model from the user's input, errors and the
// configurators (nil when the list is unavailable).
func customerFormVM(tr *i18n.Translator, f customerForm, errs map[string]string, edit bool, customerID int32, cfgs []apiclient.Configurator, cfgErr bool) customers.FormVM {
	vm := customers.FormVM{
		Edit: edit, CustomerID: customerID, Version: f.Version,
		Title: tr.T("customers.list.new"), Action: "/customers", CancelHref: "/customers",
	}
	if edit {
		vm.Title = tr.T("customer.form.edit_title", i18n.Isolate(f.Name))
		vm.Action = customerHref(customerID)
		vm.CancelHref = customerHref(customerID)
	}
	field := func(name string, mod func(*components.Field)) components.Field {
		fd := components.Field{Name: name, Label: customerFieldLabel(tr, name), Value: f.formValue(name), Error: errs[name],
			Attrs: templ.Attributes{"data-testid": "customer-" + name}}
		if mod != nil {
			mod(&fd)
		}
		return fd
	}
	// No maxlength: a browser cuts a longer paste silently; validate says why instead.
	vm.Name = field("name", func(fd *components.Field) { fd.Required, fd.Autocomplete = true, "organization" })
	vm.TaxID = field("taxId", func(fd *components.Field) {
		fd.Required, fd.Hint, fd.Autocomplete = true, tr.T("customer.form.tax_id_hint"), "off"
		fd.Attrs["spellcheck"] = "false"
	})
	vm.Segment = field("segment", func(fd *components.Field) { fd.Required = true })
	vm.Email = field("email", func(fd *components.Field) { fd.Type, fd.Autocomplete = "email", "email" })
	vm.Phone = field("phone", func(fd *components.Field) {
		fd.Type, fd.Autocomplete, fd.Hint = "tel", "tel", tr.T("customer.form.phone_hint")
	})
	vm.Street = field("street", func(fd *components.Field) { fd.Autocomplete = "street-address" })
	vm.PostalCode = field("postalCode", func(fd *components.Field) { fd.Autocomplete = "postal-code" })
	vm.City = field("city", func(fd *components.Field) { fd.Autocomplete = "address-level2" })
	vm.Country = field("country", func(fd *components.Field) { fd.Autocomplete = "country" })
	vm.Attributes = field("attributes", func(fd *components.Field) {
		fd.Label = tr.T("customer.form.attributes_label")
		fd.Hint = tr.T("customer.form.attributes_hint")
		if edit {
			fd.Hint = tr.T("customer.form.attributes_hint_edit")
		}
		fd.Attrs["spellcheck"] = "false"
		fd.Attrs["class"] = "mono"
	})
	vm.Segments = []components.Option{{Value: "", Label: tr.T("customer.form.choose_segment")}}
	for _, s := range customerrules.Segments {
		vm.Segments = append(vm.Segments, components.Option{Value: s, Label: segmentLabel(tr, s)})
	}

	switch {
	case cfgs != nil:
		vm.CPQShown = true
		for _, cfg := range cfgs {
			vm.CPQ = append(vm.CPQ, customers.CPQChoice{ID: cfg.ID, Name: cfg.Name, Checked: slices.Contains(f.CPQIDs, cfg.ID)})
		}
		for _, id := range f.CPQIDs { // configurators the list does not name (any more)
			if !slices.ContainsFunc(cfgs, func(cfg apiclient.Configurator) bool { return cfg.ID == id }) {
				vm.CPQ = append(vm.CPQ, customers.CPQChoice{ID: id, Name: configuratorName(tr, id, nil), Checked: true})
			}
		}
	case f.CPQShown:
		vm.CPQShown = true
		for _, id := range f.CPQIDs {
			vm.CPQ = append(vm.CPQ, customers.CPQChoice{ID: id, Name: configuratorName(tr, id, nil), Checked: true})
		}
	case cfgErr && edit:
		vm.CPQNote = tr.T("customer.form.cpq_unavailable_edit")
	case cfgErr:
		vm.CPQNote = tr.T("customer.form.cpq_unavailable_new")
	}
	vm.CPQError = errs["cpqIds"]

	vm.Errors = components.SummaryFrom(vm.Name, vm.TaxID, vm.Segment, vm.Email, vm.Phone, vm.Street, vm.PostalCode, vm.City, vm.Country)
	if vm.CPQError != "" {
		vm.Errors = append(vm.Errors, components.FieldError{FieldID: customers.CPQFieldID, Message: vm.CPQError})
	}
	if vm.Attributes.Error != "" {
		vm.Errors = append(vm.Errors, components.FieldError{FieldID: vm.Attributes.InputID(), Message: vm.Attributes.Error})
	}
	if msg := errs[""]; msg != "" {
		vm.Errors = append(vm.Errors, components.FieldError{Message: msg})
	}
	return vm
}

// countryOptions are the country choices in tr's language and order, after "no country". A
// stored value the list does not have (a customer saved before the list) is offered as it is, so
// opening the form changes nothing; saving it says why it is refused.
func countryOptions(tr *i18n.Translator, list *countries.List, current string) []components.Option {
	all := list.In(tr.Tag())
	options := make([]components.Option, 0, len(all)+2)
	options = append(options, components.Option{Value: "", Label: tr.T("customer.form.country_none")})
	if current != "" && !list.Has(current) {
		options = append(options, components.Option{Value: current, Label: current})
	}
	for _, country := range all {
		options = append(options, components.Option{Value: country.Code, Label: country.Name})
	}
	return options
}

// segmentLabel is a segment code of A8 in tr's language.
func segmentLabel(tr *i18n.Translator, segment string) string {
	switch segment {
	case "BUSINESS":
		return tr.T("customer.segment.business")
	case "CONSUMER":
		return tr.T("customer.segment.consumer")
	case "PUBLIC":
		return tr.T("customer.segment.public")
	}
	return segment
}

// customerStatusLabel is a customer's status in the reader's words: ACTIVE (the one status A8
// names) as a word; a status the portal does not know as its code in plain case ("ON_HOLD" is
// "On hold"), never as a code.
func customerStatusLabel(tr *i18n.Translator, status string) string {
	if status == "ACTIVE" {
		return tr.T("customer.status.active")
	}
	words := strings.ToLower(strings.ReplaceAll(status, "_", " "))
	if words == "" {
		return ""
	}
	r, size := utf8.DecodeRuneInString(words)
	return string(unicode.ToUpper(r)) + words[size:]
}

// formValue is the value an input shows.
func (f customerForm) formValue(name string) string { return f.fields().Get(name) }

// configuratorsForForm lists the configurators for the form's checkboxes; nil and true when
// the list is unavailable. ok is false when the error edge answered.
func (h *Handler) configuratorsForForm(c *gin.Context) (cfgs []apiclient.Configurator, unavailable, ok bool) {
	list, err := h.api.CPQ.List(h.apiContext(c))
	if err == nil {
		if list == nil {
			list = []apiclient.Configurator{}
		}
		return list, false, true
	}
	if h.mustFailWhole(err) {
		h.fail(c, err)
		return nil, true, false
	}
	h.log(c).Warn("configurator list unavailable on the customer form", "err", err)
	return nil, true, true
}

// renderCustomerForm answers the form: the region for htmx, the whole page otherwise.
func (h *Handler) renderCustomerForm(c *gin.Context, status int, vm customers.FormVM) {
	vm.Countries = countryOptions(tr(c), h.countries, vm.Country.Value)
	if isHTMX(c) {
		h.render(c, status, customers.FormPartial(vm))
		return
	}
	h.renderPage(c, status, vm.Title, layout.SectionCustomers, customers.FormPage(vm))
}

// showCustomerNew is GET /customers/new.
func (h *Handler) showCustomerNew(c *gin.Context) {
	cfgs, unavailable, ok := h.configuratorsForForm(c)
	if !ok {
		return
	}
	f := customerForm{Segment: "BUSINESS"}
	for _, cfg := range cfgs { // A8: a new customer is offered by every configurator unless told otherwise
		f.CPQIDs = append(f.CPQIDs, cfg.ID)
	}
	h.renderCustomerForm(c, http.StatusOK, customerFormVM(tr(c), f, nil, false, 0, cfgs, unavailable))
}

// createCustomer is POST /customers: validate, warn about look-alikes, create, show the customer.
func (h *Handler) createCustomer(c *gin.Context) {
	f, err := readCustomerForm(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	errs := f.validate(tr(c), h.countries.Has)
	if len(errs) > 0 {
		cfgs, unavailable, ok := h.configuratorsForForm(c)
		if !ok {
			return
		}
		h.renderCustomerForm(c, http.StatusUnprocessableEntity, customerFormVM(tr(c), f, errs, false, 0, cfgs, unavailable))
		return
	}
	ctx := h.apiContext(c)
	userKey := customerCacheKey(c)
	if f.ConfirmedDuplicate != f.duplicateKey() {
		dups, ok := h.customerDuplicates(c, userKey, f)
		if !ok {
			return
		}
		if len(dups) > 0 {
			cfgs, unavailable, ok := h.configuratorsForForm(c)
			if !ok {
				return
			}
			vm := customerFormVM(tr(c), f, nil, false, 0, cfgs, unavailable)
			vm.Duplicates, vm.DuplicateKey = dups, f.duplicateKey()
			h.renderCustomerForm(c, http.StatusOK, vm)
			return
		}
	}
	created, err := h.api.Customers.Create(ctx, f.input())
	if err != nil {
		h.customerFormAPIError(c, err, f, false, 0)
		return
	}
	h.log(c).Info("customer created", "customer_id", created.ID)
	created = h.ownCreatedCustomer(c, created)
	h.customers.Upsert(userKey, created)
	h.showSavedCustomer(c, created, t(c, "customer.toast.created", i18n.Isolate(created.Name)))
}

// ownCreatedCustomer makes the person who created a customer without owners its owner, when
// the portal knows their owner id (their e-mail among the owners of their customer list: ownerOf),
// so the customer is in their own lists and pipeline. The customer exists either way: when the
// owner call fails, the page offers "Make me an owner" (ownersVM) and the failure is logged.
func (h *Handler) ownCreatedCustomer(c *gin.Context, created *apiclient.Customer) *apiclient.Customer {
	if len(created.Owners) > 0 {
		return created
	}
	snap, ok := h.customers.Peek(customerCacheKey(c))
	if !ok {
		return created
	}
	var known []customers.OwnerVM
	for _, o := range snap.Owners() {
		known = append(known, customers.OwnerVM{ID: o.ID, Name: o.Name, Email: o.Email})
	}
	me, ok := ownerOf(auth.CurrentUser(c), known)
	if !ok {
		return created
	}
	owned, err := h.api.Customers.AddOwner(h.apiContext(c), created.ID, me.ID)
	if err != nil {
		h.log(c).Warn("customer created without its creator as owner", "customer_id", created.ID, "owner_id", me.ID, "err", err)
		return created
	}
	return owned
}

// customerDuplicates lists customers of the user's list with the same name or tax id. When the
// list cannot be read the check is skipped (the v2 API still refuses a tax id used twice).
func (h *Handler) customerDuplicates(c *gin.Context, userKey string, f customerForm) ([]customers.DuplicateVM, bool) {
	snap, err := h.customers.Get(h.apiContext(c), userKey)
	if err != nil {
		if h.mustFailWhole(err) {
			h.fail(c, err)
			return nil, false
		}
		h.log(c).Warn("duplicate check skipped: customer list unavailable", "err", err)
		return nil, true
	}
	var out []customers.DuplicateVM
	wantName := customercache.NormalizeName(f.Name)
	for _, r := range snap.Duplicates(f.Name, f.TaxID, 0, maxDuplicatesShown) {
		sameName := customercache.NormalizeName(r.Name) == wantName
		sameTax := r.TaxID == f.TaxID
		reason := "customer.form.same_name"
		switch {
		case sameName && sameTax:
			reason = "customer.form.same_both"
		case sameTax:
			reason = "customer.form.same_tax_id"
		}
		out = append(out, customers.DuplicateVM{ID: r.ID, Name: r.Name, TaxID: r.TaxID, Href: customerHref(r.ID), ReasonKey: reason})
	}
	return out, true
}

// customerFormAPIError answers a failed create/update: refusals with field errors re-render the
// form, a missing customer is a 404 page or toast, the rest goes to the error edge.
func (h *Handler) customerFormAPIError(c *gin.Context, err error, f customerForm, edit bool, customerID int32) {
	errs, status, ok := apiFormErrors(tr(c), err, customerFormField, customerFieldLabel)
	if !ok {
		if edit {
			h.failCustomer(c, customerID, err)
			return
		}
		h.fail(c, err)
		return
	}
	if edit && status == http.StatusConflict && errs["taxId"] == "" {
		// A stale version (A8): someone saved in between.
		errs[""] = t(c, "customer.error.stale", errs[""])
	}
	h.log(c).Info("customer form refused by the v2 API", "status", status, "err", err)
	cfgs, unavailable, ok := h.configuratorsForForm(c)
	if !ok {
		return
	}
	h.renderCustomerForm(c, status, customerFormVM(tr(c), f, errs, edit, customerID, cfgs, unavailable))
}

// showSavedCustomer answers a successful create or update: htmx swaps the customer's page into
// <main> and pushes its URL (no full reload), with a toast; a plain form is redirected there.
func (h *Handler) showSavedCustomer(c *gin.Context, cust *apiclient.Customer, message string) {
	href := customerHref(cust.ID)
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, href)
		return
	}
	names, ok := h.configuratorNamesOrNil(c)
	if !ok {
		return
	}
	h.toast(c, components.ToastSuccess, message)
	c.Header("HX-Retarget", "#main")
	c.Header("HX-Reswap", "innerHTML show:window:top")
	c.Header("HX-Push-Url", href)
	h.render(c, http.StatusOK, customers.DetailSwap(h.customerDetailVM(c, cust, names)))
}

// showCustomerEdit is GET /customers/{customerId}/edit.
func (h *Handler) showCustomerEdit(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	cust, err := h.api.Customers.Get(h.apiContext(c), customerID)
	if err != nil {
		h.failCustomer(c, customerID, err)
		return
	}
	cfgs, unavailable, ok := h.configuratorsForForm(c)
	if !ok {
		return
	}
	f := customerForm{
		Name: cust.Name, TaxID: cust.TaxID, Email: cust.Email, Phone: cust.Phone, Segment: cust.Segment,
		Street: cust.Address.Street, City: cust.Address.City, PostalCode: cust.Address.PostalCode, Country: cust.Address.Country,
		CPQIDs: slices.Clone(cust.CPQIDs), CPQShown: cfgs != nil, Version: cust.Version,
	}
	if attrs := bytes.TrimSpace(cust.Attributes); len(attrs) > 0 && !bytes.Equal(attrs, []byte("null")) && !bytes.Equal(attrs, []byte("{}")) {
		var pretty bytes.Buffer
		if json.Indent(&pretty, attrs, "", "  ") == nil {
			f.Attributes = pretty.String()
		}
	}
	h.renderCustomerForm(c, http.StatusOK, customerFormVM(tr(c), f, nil, true, customerID, cfgs, unavailable))
}

// updateCustomer is POST /customers/{customerId} (the edit form): PUT /v2/customer with the
// version the form was opened with, so a concurrent change is not overwritten.
func (h *Handler) updateCustomer(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	f, err := readCustomerForm(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	version, err := strconv.ParseInt(strings.TrimSpace(c.Request.PostForm.Get("version")), 10, 64)
	if err != nil || version < 0 {
		h.fail(c, badRequest("customer.error.version_missing"))
		return
	}
	f.Version = version
	errs := f.validate(tr(c), h.countries.Has)
	if len(errs) > 0 {
		cfgs, unavailable, ok := h.configuratorsForForm(c)
		if !ok {
			return
		}
		h.renderCustomerForm(c, http.StatusUnprocessableEntity, customerFormVM(tr(c), f, errs, true, customerID, cfgs, unavailable))
		return
	}
	updated, err := h.api.Customers.Update(h.apiContext(c), f.update(customerID, c.Request.PostForm))
	if err != nil {
		h.customerFormAPIError(c, err, f, true, customerID)
		return
	}
	h.customers.Upsert(customerCacheKey(c), updated)
	h.log(c).Info("customer updated", "customer_id", updated.ID)
	h.showSavedCustomer(c, updated, t(c, "customer.toast.saved", i18n.Isolate(updated.Name)))
}
