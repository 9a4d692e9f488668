package e2e

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Browser tests of the Customers area. Each test creates its own customers (unique names and
// tax ids) through the portal's own form.

// custCustomerURL is the address of a customer's page.
var custCustomerURL = regexp.MustCompile(`/customers/(\d+)$`)

// custUnique is a random suffix that makes names and tax ids unique.
func custUnique() string { return fmt.Sprintf("%08d", rand.IntN(1e8)) }

// custTaxID is a valid tax id (docs/v2-assumptions.md A8) nobody else has.
func custTaxID() string { return fmt.Sprintf("IT%011d", rand.Int64N(1e11)) }

// custFill types into the customer form's input named name.
func custFill(t *testing.T, page playwright.Page, name, value string) {
	t.Helper()
	check(t, page.Locator(`[data-testid="customer-form"] [name="`+name+`"]`).Fill(value), "fill "+name)
}

// custCreate creates a customer through /customers/new; onlyCPQ > 0 keeps only that
// configurator ticked. It returns the new customer's page path.
func custCreate(t *testing.T, page playwright.Page, name, taxID string, onlyCPQ int) string {
	t.Helper()
	_, err := page.Goto("/customers/new")
	check(t, err, "open the new customer form")
	custFill(t, page, "name", name)
	custFill(t, page, "taxId", taxID)
	custFill(t, page, "email", "office@example.com")
	custFill(t, page, "city", "Milano")
	_, err = page.Locator(`[data-testid="customer-form"] select[name="country"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"IT"}})
	check(t, err, "choose the country")
	if onlyCPQ > 0 {
		boxes := page.Locator(`[data-testid="customer-form"] input[name="cpqIds"]`)
		n, err := boxes.Count()
		check(t, err, "count the configurators")
		for i := range n {
			box := boxes.Nth(i)
			value, err := box.GetAttribute("value")
			check(t, err, "read a configurator")
			if value == fmt.Sprint(onlyCPQ) {
				check(t, box.Check(), "tick the configurator")
			} else {
				check(t, box.Uncheck(), "untick a configurator")
			}
		}
	}
	check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "create the customer")
	check(t, suite.expect.Page(page).ToHaveURL(custCustomerURL), "the new customer's page opens")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToHaveText(name), "the page shows the new customer")
	return strings.TrimPrefix(page.URL(), suite.portalURL)
}

// custAcceptDialogs answers "OK" to every confirmation (hx-confirm).
func custAcceptDialogs(page playwright.Page) {
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
}

// Search as you type narrows the table, the URL follows the query, and a row opens the customer.
func TestCustomersListSearchAndOpenDetail(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	suffix := custUnique()
	name := "Searchable Trattoria " + suffix + " S.r.l."
	taxID := custTaxID()
	custCreate(t, page, name, taxID, 0)

	_, err := page.Goto("/customers")
	check(t, err, "open the customer list")
	search := page.Locator(`[data-testid="customer-q"]`)
	check(t, suite.expect.Locator(search).ToBeFocused(), "the search box is focused on load")
	rows := page.Locator(`[data-testid="customer-row"]`)
	check(t, suite.expect.Locator(rows).ToHaveCount(25), "the first page shows 25 customers")

	check(t, search.Fill("trattoria "+suffix), "type the query")
	check(t, suite.expect.Locator(rows).ToHaveCount(1), "the typed query narrows the table to the one customer")
	check(t, suite.expect.Locator(rows.First()).ToContainText(name), "the row is the customer")
	check(t, suite.expect.Locator(rows.First()).ToContainText(taxID), "the row shows the tax id")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="result-count"]`)).ToHaveText("1 customer found."), "the result count")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`[?&]q=trattoria(\+|%20)`+suffix+`(&|$)`)), "the URL reflects the query")

	// The URL is shareable: opening it again shows the same result.
	_, err = page.Reload()
	check(t, err, "reload")
	check(t, suite.expect.Locator(rows).ToHaveCount(1), "the reloaded URL shows the same result")
	check(t, suite.expect.Locator(search).ToHaveValue("trattoria "+suffix), "the search box keeps the query")

	check(t, rows.First().Locator(`[data-testid="customer-link"]`).Click(), "open the customer")
	check(t, suite.expect.Page(page).ToHaveURL(custCustomerURL), "the customer's page opens")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToHaveText(name), "the detail page shows the name")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-summary"]`)).ToContainText(taxID), "the summary shows the tax id")

	// Back returns to the search.
	_, err = page.GoBack()
	check(t, err, "go back")
	check(t, suite.expect.Locator(rows).ToHaveCount(1), "back shows the search again")
}

// A validation error is shown next to the field and in the summary; once fixed, the customer is
// created and its page opens without a full reload.
func TestCustomersCreateAfterFixingValidationError(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	_, err := page.Goto("/customers/new")
	check(t, err, "open the new customer form")
	name := "Fixed Form " + custUnique() + " S.p.A."
	custFill(t, page, "name", name)
	custFill(t, page, "taxId", "12")
	check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "submit with a bad tax id")

	summary := page.Locator(`[data-testid="error-summary"]`)
	check(t, suite.expect.Locator(summary).ToBeVisible(), "the error summary appears")
	check(t, suite.expect.Locator(summary).ToBeFocused(), "the error summary gets the focus")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="field-taxId"] [data-testid="field-error"]`)).ToContainText("two letters"),
		"the tax id field says what is wrong")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-form"] [name="name"]`)).ToHaveValue(name), "the name is kept")
	check(t, summary.Locator(`a[href="#field-taxId"]`).Click(), "follow the summary link")
	check(t, suite.expect.Locator(page.Locator(`#field-taxId`)).ToBeFocused(), "the summary link focuses the field")

	taxID := custTaxID()
	check(t, page.Locator(`#field-taxId`).Fill(strings.ToLower(taxID)), "fix the tax id")
	check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "submit again")
	check(t, suite.expect.Page(page).ToHaveURL(custCustomerURL), "the new customer's page opens")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToHaveText(name), "the page shows the customer")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-summary"]`)).ToContainText(taxID), "the tax id was saved in upper case")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="toast"][data-level="success"]`)).ToContainText("created"), "a toast confirms")
	title, err := page.Title()
	check(t, err, "read the title")
	if !strings.HasPrefix(title, name) {
		t.Errorf("the title is %q, want the customer's name", title)
	}
}

// Edit: the form is filled in; the saved change shows on the customer's page.
func TestCustomersEdit(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	path := custCreate(t, page, "Before Edit "+custUnique()+" S.r.l.", custTaxID(), 0)

	check(t, page.Locator(`[data-testid="edit-customer"]`).Click(), "open the edit form")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(path)+"/edit$")), "the edit form opens")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-form"] [name="city"]`)).ToHaveValue("Milano"), "the form is filled in")
	newName := "After Edit " + custUnique() + " S.r.l."
	custFill(t, page, "name", newName)
	custFill(t, page, "city", "Torino")
	custFill(t, page, "email", "") // emptying an optional field clears it (A8)
	check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "save")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(path)+"$")), "back on the customer's page")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToHaveText(newName), "the new name is shown")
	summary := page.Locator(`[data-testid="customer-summary"]`)
	check(t, suite.expect.Locator(summary).ToContainText("Torino"), "the new city is shown")
	check(t, suite.expect.Locator(summary).Not().ToContainText("office@example.com"), "the emptied e-mail is gone")
	_, err := page.Reload()
	check(t, err, "read the customer again")
	check(t, suite.expect.Locator(summary).Not().ToContainText("office@example.com"), "the e-mail stays cleared")
}

// Owners: add one, change it for another (after confirming), then replace them all at once. The
// back office creates the customer: it is no owner, so the customer starts without one (a rep who
// creates one becomes its owner: TestACustomerARepCreatesIsTheirs).
func TestCustomersAddAndChangeOwner(t *testing.T) {
	page := newPage(t)
	custAcceptDialogs(page)
	login(t, page, backofficeUser, backofficePass)
	custCreate(t, page, "Owned "+custUnique()+" S.r.l.", custTaxID(), 0)
	owners := page.Locator(`[data-testid="owner"]`)
	check(t, suite.expect.Locator(page.Locator(`[data-testid="owners-empty"]`)).ToBeVisible(), "no owner yet")

	custOpenOwnerForms(t, page)
	check(t, page.Locator(`[data-testid="owner-add-id"]`).Fill("abc"), "type a bad owner id")
	check(t, page.Locator(`[data-testid="owner-add-submit"]`).Click(), "add")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="owner-add-form"] [data-testid="field-error"]`)).ToContainText("whole number"),
		"a bad owner id is refused next to the field")

	check(t, page.Locator(`[data-testid="owner-add-id"]`).Fill("1002"), "type owner 1002")
	check(t, page.Locator(`[data-testid="owner-add-submit"]`).Click(), "add owner 1002")
	check(t, suite.expect.Locator(owners).ToHaveCount(1), "one owner")
	check(t, suite.expect.Locator(owners.First()).ToHaveAttribute("data-owner-id", "1002"), "owner 1002 is shown")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="toast"][data-level="success"]`).Last()).ToContainText("Owner 1002 added"), "a toast confirms")

	change := owners.First().Locator(`[data-testid="owner-change-form"]`)
	check(t, change.Locator(`[data-testid="owner-change-new"]`).Fill("1003"), "type owner 1003")
	check(t, change.Locator(`[data-testid="owner-change-submit"]`).Click(), "change the owner (and confirm)")
	check(t, suite.expect.Locator(owners).ToHaveCount(1), "still one owner")
	check(t, suite.expect.Locator(owners.First()).ToHaveAttribute("data-owner-id", "1003"), "owner 1003 replaced owner 1002")
	check(t, suite.expect.Locator(owners.First().Locator(`[data-testid="owner-name"]`)).Not().ToBeEmpty(), "the owner's name is shown")

	// Replace all owners at once (PUT /v2/customer/{id}/owners): two owners become the one kept.
	custOpenOwnerForms(t, page)
	check(t, page.Locator(`[data-testid="owner-add-id"]`).Fill("1002"), "type owner 1002 again")
	check(t, page.Locator(`[data-testid="owner-add-submit"]`).Click(), "add owner 1002")
	check(t, suite.expect.Locator(owners).ToHaveCount(2), "two owners")
	custOpenOwnerForms(t, page)
	replace := page.Locator(`[data-testid="owners-replace-form"]`)
	check(t, replace.Locator("input").Fill("1002 1002"), "list an owner twice")
	check(t, replace.Locator(`[data-testid="owners-replace-submit"]`).Click(), "replace (and confirm)")
	check(t, suite.expect.Locator(replace.Locator(`[data-testid="field-error"]`)).ToContainText("listed twice"), "a repeated owner is refused next to the field")
	check(t, suite.expect.Locator(owners).ToHaveCount(2), "nothing changed")
	check(t, replace.Locator("input").Fill("1002"), "keep only owner 1002")
	check(t, replace.Locator(`[data-testid="owners-replace-submit"]`).Click(), "replace all owners (and confirm)")
	check(t, suite.expect.Locator(owners).ToHaveCount(1), "one owner is left")
	check(t, suite.expect.Locator(owners.First()).ToHaveAttribute("data-owner-id", "1002"), "owner 1002 is the one kept; 1003 is removed")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="toast"][data-level="success"]`).Last()).ToContainText("Owners replaced"), "a toast confirms")
	_, err := page.Reload()
	check(t, err, "read the customer again")
	check(t, suite.expect.Locator(owners).ToHaveCount(1), "after a reload, still one owner")
	check(t, suite.expect.Locator(owners.First()).ToHaveAttribute("data-owner-id", "1002"), "after a reload, owner 1002")
}

// Profiles: create one, then delete it (after confirming).
func TestCustomersCreateAndDeleteProfile(t *testing.T) {
	page := newPage(t)
	custAcceptDialogs(page)
	login(t, page, salesUser, salesPassword)
	custCreate(t, page, "Profiled "+custUnique()+" S.r.l.", custTaxID(), 0)
	rows := page.Locator(`[data-testid="profile-row"]`)
	check(t, suite.expect.Locator(rows).ToHaveCount(0), "no profile yet")

	contact := "Ada " + custUnique()
	_, err := page.Locator(`[data-testid="profile-type"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"BILLING"}})
	check(t, err, "choose the profile type")
	check(t, page.Locator(`[data-testid="profile-contact-name"]`).Fill(contact), "type the contact")
	check(t, page.Locator(`[data-testid="profile-email"]`).Fill("ada@example.com"), "type the e-mail")
	check(t, page.Locator(`[data-testid="profile-submit"]`).Click(), "add the profile")
	check(t, suite.expect.Locator(rows).ToHaveCount(1), "the profile is listed")
	check(t, suite.expect.Locator(rows.First()).ToContainText(contact), "with its contact")

	check(t, rows.First().Locator(`[data-testid="profile-delete"]`).Click(), "delete it (and confirm)")
	check(t, suite.expect.Locator(rows).ToHaveCount(0), "the profile is gone")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="profiles-empty"]`)).ToBeVisible(), "the region says there is none")
}

// "Start a quote for this customer" opens the quote builder for them.
func TestCustomersStartQuote(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	path := custCreate(t, page, "Quoted "+custUnique()+" S.r.l.", custTaxID(), 1)
	id := custCustomerURL.FindStringSubmatch(path)[1]
	check(t, page.Locator(`[data-testid="start-quote"]`).Click(), "start a quote")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/quotes/new\?customerId=`+id+`&cpqId=1$`)),
		"the quote builder opens for the customer and its one configurator")
}

// The folded trees of a customer (attributes, issue 43) are not in the page: opening "Show the
// fields" loads the tree in place of the fallback link, and closing and reopening keeps it (loaded
// once). The link leads to the same tree on a page of its own (a browser without JavaScript).
func TestCustomersFoldedFieldsLoadWhenOpened(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	visit(t, page, "/customers", `[data-testid="customer-row"]`)
	// The first listed customer with attributes: other tests create customers without them, and
	// the list shows the newest first.
	hrefs, err := page.Locator(`[data-testid="customer-row"] [data-testid="customer-link"]`).EvaluateAll(`links => links.map(a => a.getAttribute("href"))`)
	check(t, err, "the listed customers' links")
	section := page.GetByTestId("customer-attributes")
	found := false
	for _, href := range hrefs.([]any) {
		visit(t, page, href.(string), `[data-testid="customer-summary"]`)
		if n, err := section.Count(); err == nil && n == 1 {
			found = true
			break
		}
	}
	if !found {
		t.Fatalf("none of the %d listed customers has attributes", len(hrefs.([]any)))
	}
	check(t, suite.expect.Locator(section).ToBeVisible(), "the customer has attributes")
	tree := section.Locator(`[data-testid="json-tree"]`)
	check(t, suite.expect.Locator(tree).ToHaveCount(0), "the tree is not in the page before it is opened")
	folded := section.GetByTestId("attributes-fields")
	check(t, folded.Locator(":scope > summary").Click(), "open Show the fields")
	check(t, suite.expect.Locator(tree).ToBeVisible(), "the tree is loaded when opened")
	check(t, suite.expect.Locator(section.GetByTestId("lazy-fallback")).ToHaveCount(0), "the fallback link gave way to the tree")
	check(t, folded.Locator(":scope > summary").Click(), "close it")
	check(t, suite.expect.Locator(tree).ToBeHidden(), "closed")
	check(t, folded.Locator(":scope > summary").Click(), "open it again")
	check(t, suite.expect.Locator(tree).ToHaveCount(1), "the tree once, as loaded the first time")
	check(t, suite.expect.Locator(tree).ToBeVisible(), "shown again")

	href, err := folded.GetAttribute("hx-get")
	check(t, err, "where the tree comes from")
	visit(t, page, href, `main [data-testid="json-tree"]`)
}

// custOpenOwnerForms unfolds "Add or replace owners" (folded below the customer's facts, issue 26).
func custOpenOwnerForms(t *testing.T, page playwright.Page) {
	t.Helper()
	details := page.GetByTestId("owners-manage")
	open, err := details.Evaluate(`d => d.open`, nil)
	check(t, err, "is Add or replace owners open")
	if open != true {
		check(t, details.Locator("summary").Click(), "open Add or replace owners")
	}
	check(t, suite.expect.Locator(page.GetByTestId("owner-add-form")).ToBeVisible(), "the owner forms are shown")
}
