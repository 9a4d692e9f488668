// Package layout is the page frame of the portal: head (stylesheet, scripts, htmx configuration),
// skip link, header with navigation and the signed-in user, <main id="main">, the toast region
// (#toasts) and the screen-reader announcer (#announcer).
//
// Every full page is layout.Page(vm, content). Handlers build the LayoutVM (see
// internal/handlers: h.renderPage), pages only provide their content component.
package layout

import "github.com/cpqportal/portal/internal/i18n"

// Section names a navigation entry; the current one is marked aria-current="page".
type Section string

// The navigation sections. SectionNone marks no entry (error pages, sign-in pages).
const (
	SectionNone      Section = ""
	SectionCustomers Section = "customers"
	SectionQuotes    Section = "quotes"
	SectionContracts Section = "contracts"
	SectionAudits    Section = "audits"
	// SectionWork is the work lists (My quotes, contracts by stage; internal/workindex).
	SectionWork Section = "work"
)

// NavItem is one navigation entry; its words are catalogue keys (internal/i18n).
type NavItem struct {
	Section  Section
	LabelKey string // the entry's name
	BackKey  string // "Back to ..." on the area's error pages
	Href     string
}

// NavItems lists the main navigation in display order.
func NavItems() []NavItem {
	return []NavItem{
		{SectionWork, "work.nav", "work.nav.back", "/work"},
		{SectionCustomers, "nav.customers", "nav.back.customers", "/customers"},
		{SectionQuotes, "nav.quotes", "nav.back.quotes", "/quotes"},
		{SectionContracts, "nav.contracts", "nav.back.contracts", "/contracts"},
		{SectionAudits, "nav.audits", "nav.back.audits", "/audits"},
	}
}

// AssetURLs maps a static file name (relative to web/static) to its hashed URL.
// *web.Assets implements it; tests may pass any implementation.
type AssetURLs interface {
	URL(name string) string
}

// ProductName is shown in the header and at the end of every title.
const ProductName = "CPQ Portal"

// HTMXScript is the vendored htmx file (see web/static/vendor/VERSIONS).
const HTMXScript = "vendor/htmx-2.0.11.min.js"

// HTMXConfig is the htmx configuration, read by htmx from <meta name="htmx-config">.
//   - includeIndicatorStyles false: htmx would inject an inline <style>, which the CSP forbids;
//     app.css styles .htmx-indicator instead.
//   - allowEval / allowScriptTags false: nothing may run code from responses (CSP has no unsafe-eval).
//   - selfRequestsOnly: requests only to our own origin.
//   - historyCacheSize 0 + refreshOnHistoryMiss: no page snapshots with customer data in
//     localStorage; back/forward reloads the page from the server.
//   - historyRestoreAsHxRequest false: a history reload gets the full page, not a partial.
//   - responseHandling: 4xx/5xx responses ARE swapped (htmx 2 skips them by default). The error
//     edge (internal/handlers h.fail) answers htmx requests with the real status, a toast fragment
//     and HX-Retarget: #toasts / HX-Reswap: beforeend, and forms re-render with 422 into their own
//     target. 204 swaps nothing.
//   - defaultSettleDelay 0: htmx wires the buttons of swapped-in content (processNode) only when the
//     swap settles, 20 ms later by default; a click in that window landed on a visible, enabled
//     button that sent nothing (issue 26: "Remove the signature request" clicked right after it
//     appeared). With 0 the swap and the wiring happen in one task, so no click can fall between.
//     Nothing here animates the htmx-settling class.
const HTMXConfig = `{"includeIndicatorStyles":false,"defaultSettleDelay":0,"allowEval":false,"allowScriptTags":false,` +
	`"selfRequestsOnly":true,"historyCacheSize":0,"refreshOnHistoryMiss":true,"historyRestoreAsHxRequest":false,` +
	`"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"[45]..","swap":true,"error":true},{"code":"...","swap":false}]}`

// LayoutVM is the view model of the page frame.
type LayoutVM struct {
	// Title is the page's own title, e.g. "Customers"; the layout appends " – CPQ Portal".
	Title string
	// Section marks the current navigation entry.
	Section Section
	// Static gives the hashed URLs of app.css, app.js and htmx.
	Static AssetURLs
	// UserName is the signed-in user's display name; empty when nobody is signed in
	// (then the header shows no navigation and no logout button).
	UserName string
	// RequestID is shown in the footer, so a user can quote it to support.
	RequestID string
	// Languages are the entries of the header's language menu; CurrentPath is this page's path
	// and query, where the menu's form comes back to after the switch.
	Languages   []i18n.Choice
	CurrentPath string
	// InboxEvery is how often (ms) the header's unread count is polled; 0: no inbox link.
	InboxEvery int
}

// FullTitle is the document title: "Customers – CPQ Portal", or the product name alone.
func (vm LayoutVM) FullTitle() string {
	if vm.Title == "" {
		return ProductName
	}
	return vm.Title + " – " + ProductName
}

// SignedIn reports whether a user is signed in.
func (vm LayoutVM) SignedIn() bool { return vm.UserName != "" }

// ariaCurrent returns "page" for the current section, else "" (attribute omitted).
func (vm LayoutVM) ariaCurrent(s Section) string {
	if vm.Section == s && s != SectionNone {
		return "page"
	}
	return ""
}
