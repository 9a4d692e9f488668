// Package quotes holds the pages and partials of the Quotes area: starting a quote (configurator,
// customer, offer type, main product) and the quote page with its carts, price breakdowns and the
// panels of every configuration action (add-ons, discounts, packages, price lists, reprice).
//
// Regions swapped by htmx (one source of truth each, the page includes the same component):
//   - #quote-carts: every cart (CartsPartial); one cart is #cart-<basketId> (CartPartial);
//   - #quote-summary: the quote's totals and breakdown (SummaryPartial);
//   - #quote-digest: the hidden fingerprint of the amounts on screen, sent with every action so
//     the answer can highlight what changed (see internal/handlers/quote_digest.go);
//   - #quote-session-alert: the "configuration session expired" prompt;
//   - panels (#quote-add-cart-panel, #quote-discounts-panel, #quote-packages-panel,
//     #line-<nodeId>-addons) loaded on demand.
//
// Templates only display view models; money is in euro cents (int64), numbers are numbers, and
// both are written in the reader's language here (text.go).
package quotes

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
)

// Ref names a quote by the three parts of its address: /quotes/{cpqId}/{customerId}/{quoteId}.
type Ref struct {
	CPQID      int32
	CustomerID int32
	QuoteID    int64
}

// URL is the quote page's path.
func (r Ref) URL() string {
	return "/quotes/" + strconv.FormatInt(int64(r.CPQID), 10) + "/" + strconv.FormatInt(int64(r.CustomerID), 10) +
		"/" + strconv.FormatInt(r.QuoteID, 10)
}

// Sub is the path of an action below the quote, e.g. r.Sub("/carts/%d/quantity", basketID).
func (r Ref) Sub(format string, args ...any) string {
	return r.URL() + fmt.Sprintf(format, args...)
}

// TOFURL is the path of a panel of one TOF below the quote; the TOF's name rides along for the
// panel's heading only.
func (r Ref) TOFURL(path string, t TOF) string {
	return r.URL() + path + "?" + url.Values{"tofId": {strconv.FormatInt(int64(t.ID), 10)}, "tofName": {t.Name}}.Encode()
}

// Amount is a sum of money in euro cents, with what it was before the last action when that
// differs (Changed). Templates write it in the reader's language (text.go).
type Amount struct {
	Cents   int64
	Was     int64
	Changed bool
}

// IsZero reports whether the amount is nothing (and was nothing).
func (a Amount) IsZero() bool { return a.Cents == 0 && (!a.Changed || a.Was == 0) }

// Sides are the one-off (activation) and monthly (recurring) sides of a price.
type Sides struct {
	Activation Amount
	Recurring  Amount
}

// Side picks a side by name: "activation" or "recurring".
func (s Sides) Side(name string) Amount {
	if name == SideActivation {
		return s.Activation
	}
	return s.Recurring
}

// The two sides of every price (docs/v2-assumptions.md A4).
const (
	SideActivation = "activation"
	SideRecurring  = "recurring"
)

// DiscountLine is what one applied discount took (from a line, a cart or the quote).
type DiscountLine struct {
	DiscountID int32
	Name       string
	Amount     Sides
}

// Totals is a priced amount explained: list, each discount, the extra discount, net.
type Totals struct {
	List      Sides
	Discounts []DiscountLine
	Extra     Sides
	Net       Sides
}

// Line is one item of a cart, in tree order (the main product first, its add-ons below it).
type Line struct {
	NodeID     int64
	ParentID   int64
	ProductID  int32
	Name       string
	Kind       string // MAIN or ADDON
	Depth      int    // 0 for the main product
	ParentName string
	// Unit are the unit prices in use; ListUnit the price list's (they differ when repriced).
	Unit     Sides
	ListUnit Sides
	Repriced bool
	Quantity int32
	Price    Totals
	// New marks a line that was not on screen before the last action.
	New bool
}

// IsRoot reports whether the line is the cart's main product (it cannot be removed alone).
func (l Line) IsRoot() bool { return l.ParentID == 0 }

// CartVM is one cart (basket) of the quote.
type CartVM struct {
	Ref             Ref
	BasketID        int64
	TOFID           int32
	TOFName         string
	Label           string
	Quantity        int32
	QuantityWas     int32
	QuantityChanged bool
	PricelistID     int32
	PricelistName   string
	PricelistWas    string
	Pricelists      []components.Option
	Lines           []Line
	Totals          Totals
	New             bool
	// Focus moves keyboard focus to the cart's heading after the swap (after an item was removed).
	Focus bool
}

// Title is the cart's heading: its label, else its main product; empty when it has neither (the
// page then names it by its number, in the reader's language).
func (c CartVM) Title() string {
	if c.Label != "" {
		return c.Label
	}
	if len(c.Lines) > 0 {
		return c.Lines[0].Name
	}
	return ""
}

// Carts is the #quote-carts region.
type CartsVM struct {
	Ref   Ref
	Carts []CartVM
	// Focus moves keyboard focus to the carts heading after the swap (after a cart was removed).
	Focus bool
}

// AppliedDiscount is a regular discount applied to the quote.
type AppliedDiscount struct {
	DiscountID int32
	Name       string
	Percent    float64 // 10 for 10 %
	AppliesTo  string
}

// ExtraDiscount is an extra discount of the quote with its value (a percentage).
type ExtraDiscount struct {
	DiscountID int32
	Name       string
	Value      float64 // a percentage: 7.5 for 7.5 %
}

// Package is a package assigned to the quote.
type Package struct {
	PackageID int32
	TOFName   string
	Name      string
	Recurring int64
	// AssigneeUserID is the v2 user the package is assigned to (the page says "user <id>").
	AssigneeUserID int64
}

// SummaryVM is the #quote-summary region: the quote's totals explained.
type SummaryVM struct {
	Ref      Ref
	Totals   Totals
	Applied  []AppliedDiscount
	Extras   []ExtraDiscount
	Packages []Package
	// PackagesRecurring is the monthly sum of the packages, part of the quote's list and net (A4).
	PackagesRecurring int64
	CartCount         int
	// Focus moves keyboard focus to the summary's heading after the swap.
	Focus bool
	// OOB renders the region as an out-of-band swap (it rides along with another region).
	OOB bool
}

// TOF is an offer type of the configurator.
type TOF struct {
	ID          int32
	Name        string
	Description string
}

// QuoteVM is the quote page.
type QuoteVM struct {
	// ContractBanner, when set, is shown at the top: the quote has a contract (internal/workindex);
	// ChangeConfirm is then asked before every change (app.js, [data-change-confirm]).
	ContractBanner templ.Component
	ChangeConfirm  string
	// ChangeScript is the URL of change-confirm.js, which asks ChangeConfirm (only pages with a contract load it).
	ChangeScript     string
	Ref              Ref
	CustomerName     string
	ConfiguratorName string
	// Status is the v2 quote's own status (DRAFT), shown only when StageLabel is empty.
	Status string
	// StageLabel and StageLevel are the quote's stage in the reader's language (draft, contract
	// generated, out for signature, archived: the work index's words, docs/work-index.md), so the
	// badge and the contract banner never name the stage two ways.
	StageLabel      string
	StageLevel      components.BadgeLevel
	CustomerQuoteID int64
	UpdatedAt       time.Time // zero when unknown
	Carts           CartsVM
	Summary         SummaryVM
	TOFs            []TOF
	Digest          string
	// DigestTag is the change tag of what the page shows (the live notice's ETag).
	DigestTag string
	// HasSession tells whether the user holds a configuration session for this quote; without one
	// the first action starts it.
	HasSession bool
	// Documents is the documents region (the documents area's partial) rendered from the same read
	// of the quote as the page; nil: the region loads itself (GET .../documents).
	Documents templ.Component
}

// UpdateVM is the answer of an action that changed prices: the region it targets plus the
// summary and the digest out of band.
type UpdateVM struct {
	Ref     Ref
	Cart    *CartVM  // a cart-level action: this cart is the main region
	Carts   *CartsVM // a quote-level action: every cart is the main region
	Summary SummaryVM
	Digest  string
	// DigestTag is the change tag of Digest (the live notice's ETag).
	DigestTag string
	// Conflict, when set, says the action was not applied because the quote had changed (409).
	Conflict *ConflictVM
	// SummaryOnly makes the summary the main region (packages); ClearPanel empties that panel.
	SummaryOnly bool
	ClearPanel  string
}

// Product is a product of a TOF (call 9).
type Product struct {
	ProductID    int32
	TOFProductID int32
	Name         string
	Description  string
	Kind         string
	Default      bool
	Activation   int64
	Recurring    int64
}

// AddCartVM offers a TOF's products for a new cart of the quote in hand. The v2 API adds the
// TOF's default main product (call 4 names no product: docs/v2-assumptions.md A5 #4).
type AddCartVM struct {
	Ref      Ref
	TOF      TOF
	Products []Product
	Default  *Product
}

// AddonsVM offers the add-ons that may sit under one item of a cart.
type AddonsVM struct {
	Ref        Ref
	BasketID   int64
	TOFID      int32
	ParentID   int64
	ParentName string
	Addons     []Product
}

// FormID is the id of the panel's form (its error slot is FormID + "-errors").
func (p AddonsVM) FormID() string { return fmt.Sprintf("line-%d-addon-form", p.ParentID) }

// DiscountChoice is a regular discount offered for the quote.
type DiscountChoice struct {
	DiscountID int32
	Name       string
	Percent    float64 // 10 for 10 %
	AppliesTo  string
	Checked    bool
}

// ExtraChoice is an extra discount offered for the quote: the user gives its value (a percentage).
type ExtraChoice struct {
	DiscountID int32
	Name       string
	AppliesTo  string
	// Max is the largest value; it rides along in a hidden field as a plain number ("20.5"), for
	// the portal, not for people.
	Max float64
	// Value is the value in the input: the one applied (HasValue), written in the reader's language.
	Value    float64
	HasValue bool
}

// DiscountsVM is the discount form of a quote (calls 11 and 12).
type DiscountsVM struct {
	Ref     Ref
	Regular []DiscountChoice
	Extras  []ExtraChoice
}

// PackageOffer is a package offered for a TOF (call 14).
type PackageOffer struct {
	PackageID   int32
	Name        string
	Description string
	Recurring   int64
	Assigned    bool
}

// PackagesVM shows the package configuration of the quote and a TOF and adds one (14, 15).
type PackagesVM struct {
	Ref             Ref
	TOF             TOF
	Packages        []PackageOffer
	Owners          []components.Option
	DefaultOwner    string
	CustomerQuoteID int64
}

// HasFree reports whether a package is left to add.
func (p PackagesVM) HasFree() bool {
	for _, pk := range p.Packages {
		if !pk.Assigned {
			return true
		}
	}
	return false
}

// SessionAlertVM is the prompt shown when the configuration session expired upstream.
type SessionAlertVM struct {
	// RestartURL is where "Restart session" posts; Fields are hidden values it sends.
	RestartURL string
	Fields     []components.KV
	Target     string
	Message    i18n.Message
}
