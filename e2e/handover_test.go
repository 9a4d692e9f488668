package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/i18n"
)

// Hand customers over (issue 34, docs/backoffice.md). The test runs a portal of its own (its own
// embedded simulator): a handover moves every customer of an owner, seeded ones included, which
// other tests of the shared portal must not see.

const (
	handoverFrom = "1009"
	handoverTo   = "1010"
)

// handoverSetOwners gives customer id the owners through the customer page's own form.
func handoverSetOwners(t *testing.T, page playwright.Page, base string, id int, owners string) {
	t.Helper()
	resp, err := page.Request().Post(base+"/customers/"+strconv.Itoa(id)+"/owners", playwright.APIRequestContextPostOptions{
		Form: map[string]any{"ownerIds": owners}, Headers: map[string]string{"HX-Request": "true"},
	})
	check(t, err, "set the owners of customer "+strconv.Itoa(id))
	if resp.Status() != 200 {
		text, _ := resp.Text()
		t.Fatalf("setting owners %s of customer %d answered %d: %.300s", owners, id, resp.Status(), text)
	}
}

// TestHandoverOfOneOwnersCustomersToAnother: a back-office clerk opens Customers, "Hand customers
// over", chooses the leaving owner, sees their customers, chooses the new owner, previews and
// starts; the live progress ends with every customer done, and every one of them is owned by the
// new owner on its page and in the list (the old owner on none). Then the pages in five
// languages on a phone (375 px): axe clean, nothing scrolls sideways, targets big enough.
func TestHandoverOfOneOwnersCustomersToAnother(t *testing.T) {
	base := startExtraPortal(t)
	src := axeSource(t)
	// The new owner (1010) is the demo's Sam Sales: signed in, the header's count has let the inbox
	// know their address, so the handover's end tells them (issue 40).
	newOwner := signedInPageAt(t, base, salesUser, salesPassword)
	inboxUnread(t, newOwner, 0, "the new owner's inbox before the handover")
	page := signedInPageAt(t, base, backofficeUser, backofficePass) // the handover is a back-office tool (PORTAL_HANDOVER_ROLES)
	mine := []testCustomer{createTestCustomerAt(t, page, base, "Handover"), createTestCustomerAt(t, page, base, "Handover"), createTestCustomerAt(t, page, base, "Handover")}
	handoverSetOwners(t, page, base, mine[0].ID, handoverFrom)
	handoverSetOwners(t, page, base, mine[1].ID, handoverFrom+", 1002")
	handoverSetOwners(t, page, base, mine[2].ID, handoverFrom+", "+handoverTo) // the new owner's already
	// The new owner is named in the list (the owners offered are the ones the v2 API reports).
	handoverSetOwners(t, page, base, createTestCustomerAt(t, page, base, "Handover").ID, handoverTo)

	_, err := page.Goto("/customers")
	check(t, err, "open Customers")
	check(t, page.GetByTestId("handover-link").Click(), "click Hand customers over")
	check(t, suite.expect.Locator(page.GetByTestId("handover-from-form")).ToBeVisible(), "the handover form is shown")
	checkAxe(t, page, src, "the handover form")
	_, err = page.GetByTestId("handover-from").SelectOption(playwright.SelectOptionValues{Values: &[]string{handoverFrom}})
	check(t, err, "choose the leaving owner")
	check(t, page.GetByTestId("handover-show").Click(), "show their customers")
	rows := page.GetByTestId("handover-customer")
	check(t, suite.expect.Locator(page.GetByTestId("handover-to-form")).ToBeVisible(), "the owner's customers are listed")
	var ids []string
	n, err := rows.Count()
	check(t, err, "count the owner's customers")
	for i := range n {
		id, err := rows.Nth(i).GetAttribute("data-customer-id")
		check(t, err, "a listed customer's id")
		ids = append(ids, id)
	}
	for _, c := range mine {
		if !slices.Contains(ids, strconv.Itoa(c.ID)) {
			t.Fatalf("customer %d of owner %s is not listed (%v)", c.ID, handoverFrom, ids)
		}
	}
	checkAxe(t, page, src, "the owner's customers")
	_, err = page.GetByTestId("handover-to").SelectOption(playwright.SelectOptionValues{Values: &[]string{handoverTo}})
	check(t, err, "choose the new owner")
	check(t, page.GetByTestId("handover-preview").Click(), "preview the handover")
	check(t, suite.expect.Locator(page.GetByTestId("handover-row")).ToHaveCount(len(ids)), "the preview lists every customer")
	// A customer the new owner owns already (with the old one) loses the old owner instead, as its
	// line says: the owner change cannot name an owner the customer has. Only seeded customers can
	// be such.
	nLeft, err := page.Locator(`[data-testid="handover-row"]:has(.badge--warning)`).Count()
	check(t, err, "count the lines left out")
	if nLeft != 0 {
		t.Fatalf("%d lines left out of the handover, want none", nLeft)
	}
	coOwned := page.Locator(`[data-testid="handover-row"][data-customer-id="` + strconv.Itoa(mine[2].ID) + `"] [data-testid="handover-row-message"]`)
	check(t, suite.expect.Locator(coOwned).ToContainText("already owns this customer too: the current owner will be removed"), "the co-owned customer's line says what happens")
	checkAxe(t, page, src, "the preview")
	check(t, page.GetByTestId("handover-start").Click(), "start the handover")
	check(t, suite.expect.Locator(page.GetByTestId("handover-progress")).ToHaveAttribute("data-active", "false",
		playwright.LocatorAssertionsToHaveAttributeOptions{Timeout: playwright.Float(60_000)}), "the handover ends")
	check(t, suite.expect.Locator(page.GetByTestId("handover-done")).ToHaveText(strconv.Itoa(len(ids))), "every customer is done")
	check(t, suite.expect.Locator(page.GetByTestId("handover-rejected")).ToHaveText("0"), "no line is left out")
	check(t, suite.expect.Locator(page.GetByTestId("handover-failed")).ToHaveText("0"), "none failed")
	check(t, suite.expect.Locator(coOwned).ToContainText("the old owner was removed"), "the co-owned customer's line says what was done")
	check(t, suite.expect.Locator(page.GetByTestId("handover-download")).ToBeVisible(), "the result can be downloaded")
	checkAxe(t, page, src, "the finished handover")
	jobPath := strings.TrimPrefix(page.URL(), base)

	// The new owner's open page counts the item without a reload; it says who handed how many
	// customers over and opens their customer list.
	inboxUnread(t, newOwner, 1, "the new owner is told")
	_, err = newOwner.Goto("/inbox")
	check(t, err, "the new owner opens the inbox")
	item := newOwner.GetByTestId("inbox-item").First()
	check(t, suite.expect.Locator(item).ToContainText("Bea Backoffice handed customers over to you: you are now the owner of "+strconv.Itoa(len(ids))+" customers."),
		"the item names who ran the handover and how many customers")
	check(t, item.GetByTestId("inbox-item-open").Click(), "open the item")
	check(t, newOwner.WaitForURL("**/customers"), "the item opens the customer list")

	// Every customer's page names the new owner and not the old one.
	for _, id := range ids {
		_, err := page.Goto("/customers/" + id)
		check(t, err, "open customer "+id)
		check(t, suite.expect.Locator(page.Locator(`[data-testid="owner"][data-owner-id="`+handoverTo+`"]`)).ToHaveCount(1), "customer "+id+" is owned by the new owner")
		check(t, suite.expect.Locator(page.Locator(`[data-testid="owner"][data-owner-id="`+handoverFrom+`"]`)).ToHaveCount(0), "customer "+id+" is no longer the old owner's")
	}
	_, err = page.Goto("/customers/" + strconv.Itoa(mine[1].ID))
	check(t, err, "open the customer with two owners")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="owner"][data-owner-id="1002"]`)).ToHaveCount(1), "its other owner stays")
	// The list: the customer's row names the new owner (as the owner's choice labels them).
	_, err = page.Goto("/customers/handover?from=" + handoverTo)
	check(t, err, "open the new owner's customers")
	for _, c := range mine {
		check(t, suite.expect.Locator(page.Locator(`[data-testid="handover-customer"][data-customer-id="`+strconv.Itoa(c.ID)+`"]`)).ToHaveCount(1),
			fmt.Sprintf("customer %d is listed among the new owner's", c.ID))
	}
	label, err := page.Locator(`#handover-from option[value="` + handoverTo + `"]`).TextContent()
	check(t, err, "the new owner's name")
	name := strings.TrimSpace(label[:strings.LastIndex(label, " (")])
	_, err = page.Goto("/customers?q=" + strings.ReplaceAll(mine[0].Name, " ", "+"))
	check(t, err, "search the customer list")
	check(t, suite.expect.Locator(page.GetByTestId("customer-row")).ToContainText(name), "the list names the new owner")

	// Five languages on a phone.
	check(t, page.SetViewportSize(375, 800), "a 375 px phone")
	for _, lang := range i18n.Languages {
		tr := i18nTranslator(t, lang)
		check(t, page.Context().AddCookies([]playwright.OptionalCookie{{Name: i18n.CookieName, Value: lang.String(), URL: playwright.String(base)}}), "choose "+lang.String())
		for _, p := range []struct{ path, ready string }{
			{"/customers/handover?from=" + handoverTo, `[data-testid="handover-customer"]`},
			{jobPath, `[data-testid="handover-row"]`},
		} {
			what := fmt.Sprintf("%s in %s on a phone", p.path, lang)
			visit(t, page, p.path, p.ready)
			i18nExpectLang(t, page, tr, what)
			checkAxe(t, page, src, what)
			if problem, err := page.Evaluate(overflowJS); err != nil || problem != "" {
				t.Errorf("%s scrolls sideways: %v %v", what, problem, err)
			}
			phoneCheckTargets(t, page, what)
		}
	}
}
