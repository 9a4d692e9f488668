package quotes

import (
	"net/url"
	"strconv"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
)

// StartVM is /quotes (and /quotes/new): start a quote, open one by its reference, the user's
// recent quotes.
type StartVM struct {
	Configurators []components.Option
	CPQID         int32
	Customers     CustomerResultsVM
	Errors        []components.FieldError
	// Recent are the user's recent quotes (internal/recent), shown above the start form.
	Recent []components.RecentRow
}

// CustomerResultsVM is the customer choice of the start form (#quote-customer-results).
type CustomerResultsVM struct {
	CPQID     int32
	Query     string
	Customers []CustomerChoice
	Selected  int32
	// Message explains an empty or failed search.
	Message i18n.Message
}

// CustomerChoice is a customer offered in the start form.
type CustomerChoice struct {
	ID    int32
	Name  string
	TaxID string
	City  string
}

// StartTOFsVM is the step after the configuration session started: the offer types.
type StartTOFsVM struct {
	CPQID            int32
	CustomerID       int32
	CustomerName     string
	ConfiguratorName string
	TOFs             []TOF
}

// ProductsURL is where the products of a TOF are listed for a new quote (its name rides along
// for the heading only).
func (s StartTOFsVM) ProductsURL(t TOF) string {
	return newQuoteBase(s.CPQID, s.CustomerID) + "/tofs/" + strconv.FormatInt(int64(t.ID), 10) + "/products?" +
		url.Values{"tofName": {t.Name}}.Encode()
}

// StartProductsVM is the main-product choice that creates the quote (call 3).
type StartProductsVM struct {
	CPQID      int32
	CustomerID int32
	TOF        TOF
	Products   []Product // MAIN products
	Addons     int       // how many add-ons the TOF offers (added on the quote page)
	Selected   int32
	Label      string
	Reference  string
}

// CreateURL is where the quote is created.
func (s StartProductsVM) CreateURL() string {
	return newQuoteBase(s.CPQID, s.CustomerID) + "/tofs/" + strconv.FormatInt(int64(s.TOF.ID), 10)
}

func newQuoteBase(cpqID, customerID int32) string {
	return "/quotes/new/" + strconv.FormatInt(int64(cpqID), 10) + "/" + strconv.FormatInt(int64(customerID), 10)
}
