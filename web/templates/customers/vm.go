// Package customers holds the pages and htmx partials of the Customers area: the list with its
// search (#customer-results), the detail page with its owners (#customer-owners) and profiles
// (#customer-profiles) regions, and the create/edit form (#customer-form in
// #customer-form-region).
//
// Templates only display the typed view models below; the handlers (internal/handlers,
// customer*.go) build them. Every URL in a view model is built by the handlers from validated
// values.
package customers

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
)

// Region ids: the stable hx-target of each partial.
const (
	ResultsID    = "customer-results"
	FormID       = "customer-form"
	FormRegionID = "customer-form-region"
	// ProfileFormRegionID holds the create-profile form.
	ProfileFormRegionID = "profile-form-region"
	OwnersID            = "customer-owners"
	ProfilesID          = "customer-profiles"
)

// ListVM is the customer list page: the search form and the results region.
type ListVM struct {
	Query string
	// CPQID is the configurator whose online search is used; 0 means the portal's list.
	CPQID int32
	// Configurators offered as sources (GET /v2/cpq/list); ConfiguratorsError says why there are none.
	Configurators      []Configurator
	ConfiguratorsError string
	// Tools are the person's saved views of the list and the form that saves the current search
	// (rendered by the work templates; nil: none).
	Tools   templ.Component
	Results ResultsVM
	// CanHandover and CanImport: the person's roles open the handover and the import (their
	// links are not offered otherwise).
	CanHandover, CanImport bool
}

// Configurator is a configurator as a choice.
type Configurator struct {
	ID       int32
	Name     string
	Selected bool
}

// SourceValue is the configurator's value in the source select.
func (c Configurator) SourceValue() string { return strconv.FormatInt(int64(c.ID), 10) }

// ResultsVM is the results region (#customer-results): count, table, pager, or a message.
type ResultsVM struct {
	Query string
	CPQID int32
	// Sort and Desc are the current order (hidden inputs of the search form live in the region,
	// so typing keeps the order the user chose).
	Sort string
	Desc bool
	Rows []RowVM
	// Total is how many customers match; From and To the 1-based range shown.
	Total, From, To int
	Pager           components.Pager
	Columns         []ColumnVM
	// SourceLabel names where the rows come from ("Customer list" or a configurator).
	SourceLabel string
	// Limited is set when the online search answered its maximum (more may exist).
	Limited    bool
	LimitCount int
	// Error is shown instead of the table when the list could not be read (upstream down or
	// slow); RetryURL reloads the region.
	Error    string
	RetryURL string
	// Loading is set when the list is still being fetched: the region loads itself from LoadURL.
	Loading bool
	LoadURL string
	// ExportCSV and ExportXLSX download every customer of the current search, in the current order.
	ExportCSV, ExportXLSX string
}

// DirValue is the dir hidden input's value.
func (r ResultsVM) DirValue() string {
	if r.Desc {
		return "desc"
	}
	return "asc"
}

// ColumnVM is one column header; sortable columns link to their order.
type ColumnVM struct {
	Label string
	Key   string // sort key; "" when the column is not sortable
	Href  string
	// AriaSort is "ascending" or "descending" for the current order, else "".
	AriaSort string
	Numeric  bool
}

// RowVM is one customer in the table.
type RowVM struct {
	ID      int32
	Name    string
	TaxID   string
	Email   string
	Segment string
	City    string
	Owners  string
	Updated time.Time // zero when unknown
	Source  string
	Href    string
}

// IDText is the id as text.
func (r RowVM) IDText() string { return strconv.FormatInt(int64(r.ID), 10) }

// CountText says how many customers match and which are shown, with the counts grouped the
// language's way ("100,000", "100.000"). A search and the whole list are worded apart, and one
// customer apart from several, since languages inflect differently.
func (r ResultsVM) CountText(tr *i18n.Translator) string {
	searched := strings.TrimSpace(r.Query) != ""
	switch {
	case r.Total == 0:
		return tr.T("customers.count.none")
	case (r.Total == 1 || r.From == 1 && r.To == r.Total) && searched:
		return tr.Plural(r.Total, "customers.count.found_one", "customers.count.found")
	case r.Total == 1 || r.From == 1 && r.To == r.Total:
		return tr.Plural(r.Total, "customers.count.all_one", "customers.count.all")
	case searched:
		return tr.T("customers.count.found_range", r.Total, r.From, r.To)
	}
	return tr.T("customers.count.all_range", r.Total, r.From, r.To)
}

// EmptyMessage explains an empty result.
func (r ResultsVM) EmptyMessage(tr *i18n.Translator) string {
	if strings.TrimSpace(r.Query) != "" {
		return tr.T("customers.empty.no_match", r.Query)
	}
	return tr.T("customers.empty.none")
}

// CaptionText describes the table for screen readers.
func (r ResultsVM) CaptionText(tr *i18n.Translator) string {
	for _, c := range r.Columns {
		switch c.AriaSort {
		case "ascending":
			return tr.T("customers.caption.ascending", c.Label)
		case "descending":
			return tr.T("customers.caption.descending", c.Label)
		}
	}
	return tr.T("customers.list.title")
}

// Arrow marks the current order in the header.
func (c ColumnVM) Arrow() string {
	switch c.AriaSort {
	case "ascending":
		return " ▲"
	case "descending":
		return " ▼"
	}
	return ""
}

// statusBadge colours a customer status.
func statusBadge(status string) components.BadgeLevel {
	if status == "ACTIVE" {
		return components.BadgeSuccess
	}
	return components.BadgeNeutral
}

// DetailVM is the customer detail page.
type DetailVM struct {
	// Work is the customer's quotes and contracts from the work index (nil: off).
	Work   templ.Component
	ID     int32
	Name   string
	Status string
	// StatusLabel is the status in the reader's words.
	StatusLabel string
	Segment     string
	// Summary lists the known fields (A8) in reading order.
	Summary []components.KV
	// Configurators are the customer's configurators, named when the list is available.
	Configurators []string
	// Attributes is the free nested JSON of the customer; Other every field the portal does not
	// know, as one JSON object (nil when there is none).
	Attributes json.RawMessage
	Other      json.RawMessage
	// StartQuoteHref opens the quote builder for the customer; EditHref the edit form.
	StartQuoteHref string
	EditHref       string
	Owners         OwnersVM
	Profiles       ProfilesVM
}

// OwnersVM is the owners region (#customer-owners) with its forms.
type OwnersVM struct {
	CustomerID int32
	Owners     []OwnerVM
	// Known are owners seen in the customer documents (the directory is not exposed, A8), for
	// the owner-id inputs' suggestions.
	Known []OwnerVM
	// Me is the signed-in person as an owner (their e-mail among the known owners'), zero when
	// the portal does not know their owner id; MeOwner says they own the customer already.
	Me      OwnerVM
	MeOwner bool
}

// OfferMe says whether the page offers the person to become an owner: their owner id is known
// and they are not one.
func (vm OwnersVM) OfferMe() bool { return vm.Me.ID != 0 && !vm.MeOwner }

// AddAction is where the add-owner form posts ("Add me as owner" too).
func (vm OwnersVM) AddAction() string { return ownersBase(vm.CustomerID) + "/add" }

// ChangeForm is the change form of one owner (empty, without error).
func (vm OwnersVM) ChangeForm(tr *i18n.Translator, o OwnerVM) OwnerFormVM {
	return NewOwnerChangeForm(tr, vm.CustomerID, o.ID, "", "")
}

// OwnerVM is one owner.
type OwnerVM struct {
	ID    int64
	Name  string
	Email string
}

// IDText is the owner id as text.
func (o OwnerVM) IDText() string { return strconv.FormatInt(o.ID, 10) }

// Label names the owner for suggestions: "1003 – Anna Rossi".
func (o OwnerVM) Label() string {
	if o.Name == "" {
		return o.IDText()
	}
	return o.IDText() + " – " + o.Name
}

// OwnerFormVM is one of the owner forms: add, change (one per owner) or replace.
type OwnerFormVM struct {
	FormID string
	Action string
	// ConfirmURL answers the question asked before a change that takes an owner away, read when
	// the person acts (app.js, [data-confirm-url]); "" for none.
	ConfirmURL string
	// CurrentOwnerID is the owner a change form replaces.
	CurrentOwnerID string
	Field          components.Field
}

// ownersBase is the URL prefix of the owner forms.
func ownersBase(customerID int32) string {
	return "/customers/" + strconv.FormatInt(int64(customerID), 10) + "/owners"
}

// OwnersManageHref loads the add-owner and replace-owners forms ("Add or replace owners").
func OwnersManageHref(customerID int32) string { return ownersBase(customerID) + "/manage" }

// AttributesHref and OtherFieldsHref load the trees of the customer's attributes and of the
// fields the portal does not know.
func AttributesHref(customerID int32) string {
	return "/customers/" + strconv.FormatInt(int64(customerID), 10) + "/attributes"
}

// OtherFieldsHref: see AttributesHref.
func OtherFieldsHref(customerID int32) string {
	return "/customers/" + strconv.FormatInt(int64(customerID), 10) + "/other-fields"
}

// NewOwnerAddForm is the add-owner form with the user's value and error.
func NewOwnerAddForm(tr *i18n.Translator, customerID int32, value, errMsg string) OwnerFormVM {
	return OwnerFormVM{
		FormID: "owner-add-form",
		Action: ownersBase(customerID) + "/add",
		Field: components.Field{
			ID: "owner-add-id", Name: "ownerId", Label: tr.T("customer.owners.add_label"), Value: value, Error: errMsg,
			Hint:  tr.T("customer.owners.add_hint"),
			Attrs: templ.Attributes{"list": "known-owners", "inputmode": "numeric", "autocomplete": "off", "data-testid": "owner-add-id"},
		},
	}
}

// NewOwnerChangeForm is the change form of owner ownerID with the user's value and error.
func NewOwnerChangeForm(tr *i18n.Translator, customerID int32, ownerID int64, value, errMsg string) OwnerFormVM {
	id := strconv.FormatInt(ownerID, 10)
	return OwnerFormVM{
		FormID:         "owner-change-form-" + id,
		Action:         ownersBase(customerID) + "/change",
		ConfirmURL:     ownersBase(customerID) + "/change/confirm",
		CurrentOwnerID: id,
		Field: components.Field{
			ID: "owner-change-new-" + id, Name: "newOwnerId", Label: tr.T("customer.owners.change_label", id), Value: value, Error: errMsg,
			Attrs: templ.Attributes{"list": "known-owners", "inputmode": "numeric", "autocomplete": "off", "data-testid": "owner-change-new"},
		},
	}
}

// NewOwnersReplaceForm is the replace-all-owners form with the user's value and error.
func NewOwnersReplaceForm(tr *i18n.Translator, customerID int32, value, errMsg string) OwnerFormVM {
	return OwnerFormVM{
		FormID:     "owners-replace-form",
		Action:     ownersBase(customerID),
		ConfirmURL: ownersBase(customerID) + "/confirm",
		Field: components.Field{
			ID: "owners-replace-ids", Name: "ownerIds", Label: tr.T("customer.owners.replace_label"), Value: value, Error: errMsg,
			Hint:  tr.T("customer.owners.replace_hint"),
			Attrs: templ.Attributes{"autocomplete": "off", "data-testid": "owners-replace-ids"},
		},
	}
}

// ProfilesVM is the profiles region (#customer-profiles) with its create form.
type ProfilesVM struct {
	CustomerID int32
	Profiles   []ProfileVM
	Form       ProfileFormVM
}

// ProfileVM is one customer profile.
type ProfileVM struct {
	ID          int32
	Type        string
	ContactName string
	Email       string
	Phone       string
	Created     time.Time
	// DeleteHref deletes the profile; DeleteHref + "/confirm" answers the question asked first.
	DeleteHref string
}

// IDText is the profile id as text.
func (p ProfileVM) IDText() string { return strconv.FormatInt(int64(p.ID), 10) }

// ProfileFormVM is the create-profile form.
type ProfileFormVM struct {
	Action      string
	ProfileType components.Field
	ContactName components.Field
	Email       components.Field
	Phone       components.Field
	Types       []components.Option
	Errors      []components.FieldError
}

// ProfileTypes are the profile types of docs/v2-assumptions.md A8.
var profileTypes = []string{"BILLING", "SHIPPING", "TECHNICAL", "LEGAL"}

// ProfileTypes returns the profile types of docs/v2-assumptions.md A8.
func ProfileTypes() []string { return slices.Clone(profileTypes) }

// ProfileTypeLabel is a profile type (a v2 code such as "BILLING") in tr's language; an unknown
// code is shown as it comes.
func ProfileTypeLabel(tr *i18n.Translator, profileType string) string {
	switch profileType {
	case "BILLING":
		return tr.T("customer.profile_type.billing")
	case "SHIPPING":
		return tr.T("customer.profile_type.shipping")
	case "TECHNICAL":
		return tr.T("customer.profile_type.technical")
	case "LEGAL":
		return tr.T("customer.profile_type.legal")
	}
	return profileType
}

// ProfileInput is what the user typed into the profile form.
type ProfileInput struct {
	ProfileType, ContactName, Email, Phone string
}

// NewProfileForm is the create-profile form with the user's input and errors (keyed by the
// input's name: profileType, contactName, email, phone).
func NewProfileForm(tr *i18n.Translator, customerID int32, in ProfileInput, errs map[string]string) ProfileFormVM {
	types := []components.Option{{Value: "", Label: tr.T("customer.profiles.choose_type")}}
	for _, t := range profileTypes {
		types = append(types, components.Option{Value: t, Label: ProfileTypeLabel(tr, t)})
	}
	vm := ProfileFormVM{
		Action: "/customers/" + strconv.FormatInt(int64(customerID), 10) + "/profiles",
		ProfileType: components.Field{ID: "profile-type", Name: "profileType", Label: tr.T("customer.profiles.col.type"), Value: in.ProfileType,
			Error: errs["profileType"], Required: true, Attrs: templ.Attributes{"data-testid": "profile-type"}},
		ContactName: components.Field{ID: "profile-contact", Name: "contactName", Label: tr.T("customer.profiles.contact_name"), Value: in.ContactName,
			Error: errs["contactName"], Autocomplete: "off", Attrs: templ.Attributes{"data-testid": "profile-contact-name"}},
		Email: components.Field{ID: "profile-email", Name: "email", Label: tr.T("customer.profiles.col.email"), Type: "email", Value: in.Email,
			Error: errs["email"], Autocomplete: "off", Attrs: templ.Attributes{"data-testid": "profile-email"}},
		Phone: components.Field{ID: "profile-phone", Name: "phone", Label: tr.T("customer.profiles.col.phone"), Type: "tel", Value: in.Phone,
			Error: errs["phone"], Autocomplete: "off", Attrs: templ.Attributes{"data-testid": "profile-phone"}},
		Types: types,
	}
	vm.Errors = components.SummaryFrom(vm.ProfileType, vm.ContactName, vm.Email, vm.Phone)
	if msg := errs[""]; msg != "" {
		vm.Errors = append(vm.Errors, components.FieldError{Message: msg})
	}
	return vm
}

// FormVM is the create/edit form (#customer-form).
type FormVM struct {
	// Edit is false for a new customer.
	Edit       bool
	CustomerID int32
	Version    int64
	Title      string
	Action     string
	CancelHref string
	Name       components.Field
	TaxID      components.Field
	Email      components.Field
	Phone      components.Field
	Segment    components.Field
	Street     components.Field
	City       components.Field
	PostalCode components.Field
	Country    components.Field
	Attributes components.Field
	Segments   []components.Option
	// Countries are the country choices (ISO 3166-1 codes named in the reader's language).
	Countries []components.Option
	// CPQ are the configurator checkboxes; CPQShown tells the handler the group was on the form.
	CPQ      []CPQChoice
	CPQShown bool
	CPQError string
	CPQNote  string
	// Errors is the error summary (links to the fields; entries without a field are the v2
	// API's messages shown whole).
	Errors []components.FieldError
	// Duplicates are existing customers with the same name or tax id; the user confirms past
	// them with "Create anyway", which sends DuplicateKey back (the warning is not shown again
	// for the same name and tax id).
	Duplicates   []DuplicateVM
	DuplicateKey string
}

// VersionText is the version hidden input's value.
func (vm FormVM) VersionText() string { return strconv.FormatInt(vm.Version, 10) }

// DraftName names the form's draft, which app.js keeps in sessionStorage while the user types
// (so an expired session does not lose it): one for new customers, one per edited customer.
func (vm FormVM) DraftName() string {
	if vm.Edit {
		return "customer-" + strconv.FormatInt(int64(vm.CustomerID), 10)
	}
	return "customer-new"
}

// SubmitLabelKey is the catalogue key of the submit button's text.
func (vm FormVM) SubmitLabelKey() string {
	if vm.Edit {
		return "customer.form.save"
	}
	return "customer.form.create"
}

// CPQFieldID is the id of the first configurator checkbox (the error summary links to it).
const CPQFieldID = "field-cpqIds"

// CPQChoice is one configurator checkbox.
type CPQChoice struct {
	ID      int32
	Name    string
	Checked bool
}

// Value is the checkbox value.
func (c CPQChoice) Value() string { return strconv.FormatInt(int64(c.ID), 10) }

// DuplicateVM is an existing customer that looks like the one being created.
type DuplicateVM struct {
	ID    int32
	Name  string
	TaxID string
	Href  string
	// ReasonKey is the catalogue key of why it looks the same (same name, same tax id, both).
	ReasonKey string
}
