package handlers

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
	"github.com/cpqportal/portal/web/templates/layout"
)

// showCustomer is GET /customers/{customerId}: the known fields as a summary, owners and
// profiles with their forms, the attributes and every other field the v2 API sent.
func (h *Handler) showCustomer(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	cust, err := h.api.Customers.Get(ctx, customerID)
	if err != nil {
		h.failCustomer(c, customerID, err)
		return
	}
	names, ok := h.configuratorNamesOrNil(c)
	if !ok {
		return
	}
	vm := h.customerDetailVM(c, cust, names)
	vm.Work = h.customerWork(c, customerID)
	h.renderPage(c, http.StatusOK, cust.Name, layout.SectionCustomers, customers.DetailPage(vm))
}

// configuratorNamesOrNil lists the configurators' names; when the list is unavailable the page
// shows ids instead (nil). ok is false when the error edge answered (refused token). The names
// are reused per user for a short time (configuratorCache), so a warm view makes one v2 call.
func (h *Handler) configuratorNamesOrNil(c *gin.Context) (map[int32]string, bool) {
	key := customerCacheKey(c)
	if names, ok := h.configurators.get(key); ok {
		return names, true
	}
	list, err := h.api.CPQ.List(h.apiContext(c))
	if err == nil {
		names := configuratorNames(list)
		h.configurators.put(key, names)
		return names, true
	}
	if h.mustFailWhole(err) {
		h.fail(c, err)
		return nil, false
	}
	h.log(c).Warn("configurator list unavailable", "err", err)
	return nil, true
}

// failCustomer is the error edge for calls about one customer: a 404 says which customer was
// not found, with the way back to the list; anything else goes to h.fail.
func (h *Handler) failCustomer(c *gin.Context, customerID int32, err error) {
	var apiErr *apiclient.APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		h.log(c).Info("customer not found", "customer_id", customerID, "err", err)
		id := strconv.FormatInt(int64(customerID), 10)
		title := t(c, "customer.error.not_found.title", id)
		message := t(c, "customer.error.not_found.message", id)
		if isHTMX(c) {
			message = t(c, "customer.error.not_found.toast", id)
		}
		h.renderError(c, http.StatusNotFound, title, message)
		return
	}
	h.fail(c, err)
}

// knownCustomerFields are the fields of the customer document the summary, owners, profiles
// and attributes sections show (docs/v2-assumptions.md A8); every other field goes to "Other
// fields".
var knownCustomerFields = []string{"id", "name", "taxId", "email", "phone", "segment", "status", "address",
	"owners", "profiles", "cpqIds", "attributes", "version", "createdAt", "updatedAt"}

// knownAddressFields are the address fields the summary shows.
var knownAddressFields = []string{"street", "city", "postalCode", "country"}

// customerDetailVM builds the detail page's view model from the customer document.
func (h *Handler) customerDetailVM(c *gin.Context, cust *apiclient.Customer, cpqNames map[int32]string) customers.DetailVM {
	tr := tr(c)
	vm := customers.DetailVM{
		ID: cust.ID, Name: cust.Name, Status: cust.Status, StatusLabel: customerStatusLabel(tr, cust.Status), Segment: cust.Segment,
		StartQuoteHref: startQuoteHref(cust),
		EditHref:       customerHref(cust.ID) + "/edit",
		Owners:         h.ownersVM(c, cust),
		Profiles:       profilesVM(tr, cust, customers.NewProfileForm(tr, cust.ID, customers.ProfileInput{}, nil)),
	}
	for _, id := range cust.CPQIDs {
		vm.Configurators = append(vm.Configurators, configuratorName(tr, id, cpqNames))
	}
	vm.Summary = []components.KV{
		{Key: tr.T("customer.field.number"), Value: strconv.FormatInt(int64(cust.ID), 10)},
		{Key: tr.T("customer.field.name"), Value: cust.Name},
		{Key: tr.T("customer.field.tax_id"), Value: cust.TaxID},
		{Key: tr.T("customer.field.segment"), Value: orDash(segmentLabel(tr, cust.Segment))},
		{Key: tr.T("customer.field.status"), Value: orDash(customerStatusLabel(tr, cust.Status))},
		{Key: tr.T("customer.field.email"), Value: orDash(cust.Email)},
		{Key: tr.T("customer.field.phone"), Value: orDash(cust.Phone)},
		{Key: tr.T("customer.form.address"), Value: orDash(formatAddress(cust.Address, func(code string) string { return h.countries.Name(tr.Tag(), code) }))},
		{Key: tr.T("customer.form.configurators"), Value: orDash(strings.Join(vm.Configurators, ", "))},
		{Key: tr.T("customer.field.version"), Value: strconv.FormatInt(cust.Version, 10)},
		{Key: tr.T("customer.profiles.col.created"), Value: orDash(""), At: cust.CreatedAt},
		{Key: tr.T("customers.col.updated"), Value: orDash(""), At: cust.UpdatedAt},
	}
	vm.Attributes = customerAttributes(cust)
	vm.Other = h.customerOtherFields(c, cust)
	return vm
}

// startQuoteHref opens the quote builder for the customer; with exactly one configurator it is
// chosen already.
func startQuoteHref(cust *apiclient.Customer) string {
	href := "/quotes/new?customerId=" + strconv.FormatInt(int64(cust.ID), 10)
	if len(cust.CPQIDs) == 1 {
		href += "&cpqId=" + strconv.FormatInt(int64(cust.CPQIDs[0]), 10)
	}
	return href
}

// ownersVM builds the owners region; the suggestions for owner ids are the owners named in the
// user's cached customer list plus this customer's (the directory is not exposed, A8).
func (h *Handler) ownersVM(c *gin.Context, cust *apiclient.Customer) customers.OwnersVM {
	vm := customers.OwnersVM{
		CustomerID: cust.ID,
	}
	known := map[int64]customers.OwnerVM{}
	if snap, ok := h.customers.Peek(customerCacheKey(c)); ok {
		for _, o := range snap.Owners() {
			known[o.ID] = customers.OwnerVM{ID: o.ID, Name: o.Name, Email: o.Email}
		}
	}
	for _, o := range cust.Owners {
		owner := customers.OwnerVM{ID: o.OwnerID, Name: o.Name, Email: o.Email}
		vm.Owners = append(vm.Owners, owner)
		known[o.OwnerID] = owner
	}
	for _, o := range known {
		vm.Known = append(vm.Known, o)
	}
	if me, ok := ownerOf(auth.CurrentUser(c), vm.Known); ok {
		vm.Me = me
		vm.MeOwner = slices.ContainsFunc(vm.Owners, func(o customers.OwnerVM) bool { return o.ID == me.ID })
	}
	slices.SortFunc(vm.Known, func(a, b customers.OwnerVM) int { return cmp.Compare(a.ID, b.ID) })
	return vm
}

// ownerOf is the signed-in person among owners: the one whose e-mail is theirs (the owner
// directory is not exposed, A8, so the e-mail the provider verified is how the portal knows which
// owner a person is). false when none or more than one has it.
func ownerOf(u auth.User, owners []customers.OwnerVM) (customers.OwnerVM, bool) {
	if u.Email == "" {
		return customers.OwnerVM{}, false
	}
	var found []customers.OwnerVM
	for _, o := range owners {
		if strings.EqualFold(strings.TrimSpace(o.Email), u.Email) {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		return customers.OwnerVM{}, false
	}
	return found[0], true
}

// profilesVM builds the profiles region with the given create form.
func profilesVM(tr *i18n.Translator, cust *apiclient.Customer, form customers.ProfileFormVM) customers.ProfilesVM {
	vm := customers.ProfilesVM{CustomerID: cust.ID, Form: form}
	for _, p := range cust.Profiles {
		vm.Profiles = append(vm.Profiles, customers.ProfileVM{
			ID: p.ProfileID, Type: p.ProfileType, ContactName: p.ContactName, Email: p.Email, Phone: p.Phone,
			Created:    p.CreatedAt,
			DeleteHref: fmt.Sprintf("/customers/%d/profiles/%d/delete", cust.ID, p.ProfileID),
		})
	}
	return vm
}

// configuratorName is a product catalogue by its name, by its number only when the name is not
// known.
func configuratorName(tr *i18n.Translator, id int32, names map[int32]string) string {
	if name := names[id]; name != "" {
		return name
	}
	return tr.T("customer.configurator_id", strconv.FormatInt(int64(id), 10))
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// formatAddress writes an address on one line, the country by its name in the reader's language
// (countryName): "Via Roma 94, 25121 Brescia, Italia".
func formatAddress(a apiclient.Address, countryName func(code string) string) string {
	var parts []string
	if a.Street != "" {
		parts = append(parts, i18n.Isolate(a.Street))
	}
	if town := strings.TrimSpace(i18n.Isolate(a.PostalCode) + " " + i18n.Isolate(a.City)); town != "" {
		parts = append(parts, town)
	}
	if a.Country != "" {
		parts = append(parts, countryName(a.Country))
	}
	return strings.Join(parts, ", ")
}

// otherFields returns the members of the JSON object raw whose names are not in known, as one
// JSON object in document order (nil when there is none). For the objects named in nested, only
// their unknown members are kept (an address with an extra "region" shows just that).
func otherFields(raw json.RawMessage, known []string, nested map[string][]string) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, errors.New("handlers: the document is not valid JSON")
	}
	return otherFieldsOfValid(raw, known, nested)
}

// otherFieldsOfValid is otherFields for raw that is known to be valid JSON (an apiclient
// document's Raw: the client decoded it, and json.Unmarshal checks the whole input first).
func otherFieldsOfValid(raw json.RawMessage, known []string, nested map[string][]string) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	members, err := objectMembers(raw)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	n := 0
	add := func(key string, value json.RawMessage) {
		if n == 0 {
			out.WriteByte('{')
		} else {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key) // a string: cannot fail
		out.Write(k)
		out.WriteByte(':')
		out.Write(value)
		n++
	}
	for _, m := range members {
		if sub, ok := nested[m.key]; ok {
			if extra, err := otherFieldsOfValid(m.value, sub, nil); err == nil && extra != nil {
				add(m.key, extra)
			}
			continue
		}
		if !slices.Contains(known, m.key) {
			add(m.key, m.value)
		}
	}
	if n == 0 {
		return nil, nil
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

type jsonMember struct {
	key   string
	value json.RawMessage
}

// objectMembers lists the members of a JSON object in document order; anything else (an array,
// null) has none. raw must be valid JSON (otherFields checks it): it is sliced in place, which
// replaced the json.Decoder token API (about 6 % of the detail page's CPU, docs/performance.md).
func objectMembers(raw json.RawMessage) ([]jsonMember, error) {
	i := skipJSONSpace(raw, 0)
	if raw[i] != '{' {
		return nil, nil
	}
	i++
	var out []jsonMember
	for {
		i = skipJSONSpace(raw, i)
		switch raw[i] {
		case '}':
			return out, nil
		case ',':
			i = skipJSONSpace(raw, i+1)
		}
		keyEnd := jsonValueEnd(raw, i)
		key := string(raw[i+1 : keyEnd-1])
		if bytes.IndexByte(raw[i:keyEnd], '\\') >= 0 {
			if err := json.Unmarshal(raw[i:keyEnd], &key); err != nil {
				return nil, err
			}
		}
		i = skipJSONSpace(raw, keyEnd) + 1 // the colon
		i = skipJSONSpace(raw, i)
		end := jsonValueEnd(raw, i)
		out = append(out, jsonMember{key: key, value: json.RawMessage(raw[i:end])})
		i = end
	}
}

// skipJSONSpace returns the index of the first byte at or after i that is not JSON white space.
func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd returns the index just past the value starting at i of valid JSON b.
func jsonValueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = jsonValueEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[j])) {
		j++
	}
	return j
}
