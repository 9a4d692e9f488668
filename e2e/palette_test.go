package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Browser tests of the command palette (Ctrl/Cmd+K): a combobox in a modal dialog, driven by the
// keyboard alone.

// paletteActive is the palette's option that is aria-selected (the one Enter opens).
func paletteActive(page playwright.Page) playwright.Locator {
	return page.Locator(`#palette [role="option"][aria-selected="true"]`)
}

// Ctrl+K, type, arrows, Enter: a customer found by name opens; Escape closes and gives the focus
// back; "/" opens the palette where the page has no search field of its own.
func TestPaletteKeyboardFindsACustomerAndClosesWithEscape(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	visit(t, page, "/customers", `[data-testid="customer-link"]`)
	link := page.Locator(`[data-testid="customer-link"]`).Nth(1)
	name, err := link.TextContent()
	check(t, err, "read a customer's name")
	name = strings.TrimSpace(name)
	href, err := link.GetAttribute("href")
	check(t, err, "read the customer's address")

	openPaletteWithKeys(t, page)
	input := page.Locator("#palette-input")
	check(t, suite.expect.Locator(input).ToHaveAttribute("role", "combobox"), "the input is a combobox")
	check(t, page.Keyboard().Type(name), "type the name")
	first := page.Locator(`#palette [role="option"]`).First()
	check(t, suite.expect.Locator(first).ToHaveAttribute("data-href", href), "the customer is the first result")
	check(t, suite.expect.Locator(input).ToHaveAttribute("aria-expanded", "true"), "the combobox says its list is open")
	check(t, suite.expect.Locator(input).ToHaveAttribute("aria-activedescendant", "palette-option-0"), "the first result is active")
	check(t, suite.expect.Locator(first).ToHaveAttribute("aria-selected", "true"), "the first result is selected")
	check(t, suite.expect.Locator(page.Locator("#palette-status")).ToContainText("result"), "the number of results is announced")

	count, err := page.Locator(`#palette [role="option"]`).Count()
	check(t, err, "count the results")
	if count > 1 {
		check(t, page.Keyboard().Press("ArrowDown"), "ArrowDown")
		check(t, suite.expect.Locator(input).ToHaveAttribute("aria-activedescendant", "palette-option-1"), "ArrowDown moves to the second result")
		check(t, page.Keyboard().Press("ArrowUp"), "ArrowUp")
	}
	check(t, page.Keyboard().Press("ArrowUp"), "ArrowUp from the first result")
	check(t, suite.expect.Locator(input).ToHaveAttribute("aria-activedescendant", regexp.MustCompile(`^palette-option-`+strconv.Itoa(count-1)+`$`)),
		"ArrowUp on the first result wraps to the last")
	check(t, page.Keyboard().Press("ArrowDown"), "ArrowDown wraps to the first")
	check(t, suite.expect.Locator(input).ToHaveAttribute("aria-activedescendant", "palette-option-0"), "back on the first result")
	check(t, input.Press("Enter"), "Enter")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL(href)), "Enter opens the customer")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-name"]`)).ToHaveText(name), "the customer's page")

	// Opened from the header's trigger with the keyboard; Escape closes and focus goes back.
	trigger := page.Locator("#palette-trigger")
	check(t, trigger.Focus(), "focus the Go to trigger")
	check(t, page.Keyboard().Press("Enter"), "activate it")
	check(t, suite.expect.Locator(input).ToBeFocused(), "the palette opens with the input focused")
	check(t, page.Keyboard().Type("zzz"), "type")
	check(t, page.Keyboard().Press("Escape"), "Escape")
	check(t, suite.expect.Locator(page.Locator("#palette")).ToBeHidden(), "Escape closes the palette")
	check(t, suite.expect.Locator(trigger).ToBeFocused(), "the focus is back on the trigger")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL(href)), "closing stays on the page")

	// "/" opens the palette on a page without a search field; on the list it focuses the search.
	check(t, page.Locator("main#main").Focus(), "focus the main content")
	check(t, page.Keyboard().Press("/"), "press /")
	check(t, suite.expect.Locator(input).ToBeFocused(), "/ opens the palette on the customer's page")
	check(t, suite.expect.Locator(input).ToHaveValue(""), "the palette starts empty again")
	check(t, page.Keyboard().Press("Escape"), "close")
	visit(t, page, "/customers", `[data-testid="customer-link"]`)
	check(t, page.Keyboard().Press("/"), "press / on the list")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-q"]`)).ToBeFocused(), "/ focuses the list's search")
	check(t, suite.expect.Locator(page.Locator("#palette")).ToBeHidden(), "the palette stays closed")
}

// Enter pressed before the debounced results arrived opens the first result of the text typed.
func TestPaletteEnterRightAfterTypingOpensTheFirstResult(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	visit(t, page, "/customers", `[data-testid="customer-link"]`)
	href, err := page.Locator(`[data-testid="customer-link"]`).Last().GetAttribute("href")
	check(t, err, "read a listed customer's address")
	id := strings.TrimPrefix(href, "/customers/")
	openPaletteWithKeys(t, page)
	check(t, page.Keyboard().Type(id), "type the customer's id")
	check(t, page.Keyboard().Press("Enter"), "Enter at once")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL(href)), "the customer with that id opens")
}

// A contract by its number, a page, a recent quote, and a quote a colleague knows only by number.
func TestPaletteOpensContractsQuotesAndPages(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	w := buildA11yWorld(t, page)

	visit(t, page, "/customers", `[data-testid="customer-row"]`)
	openPaletteWithKeys(t, page)
	check(t, page.Keyboard().Type(w.contractNum), "type the contract number")
	check(t, suite.expect.Locator(paletteActive(page)).ToContainText("Contract "+w.contractNum), "the contract is found")
	check(t, page.Keyboard().Press("Enter"), "open it")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL(w.contractPath)), "the contract page opens")

	openPaletteWithKeys(t, page)
	check(t, suite.expect.Locator(page.Locator(`#palette [role="option"][data-href="`+w.quotePath+`"]`)).ToBeVisible(), "the recent quote is offered at once")
	check(t, page.Keyboard().Type(w.quoteID), "type the quote id")
	check(t, suite.expect.Locator(paletteActive(page)).ToHaveAttribute("data-href", w.quotePath), "the recent quote is the first result")
	check(t, page.Keyboard().Press("Enter"), "open it")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL(w.quotePath)), "the quote opens")

	openPaletteWithKeys(t, page)
	check(t, page.Keyboard().Type("audits"), "type a page name")
	check(t, suite.expect.Locator(paletteActive(page)).ToHaveAttribute("data-href", "/audits"), "the page is found")
	check(t, page.Keyboard().Press("Enter"), "open it")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL("/audits")), "the audits page opens")

	// A colleague who never opened the quote: the palette finds its address from its number.
	colleague := newPage(t)
	login(t, colleague, backofficeUser, backofficePass)
	openPaletteWithKeys(t, colleague)
	check(t, colleague.Keyboard().Type(w.quoteID), "type the quote id")
	option := paletteActive(colleague)
	check(t, suite.expect.Locator(option).ToHaveAttribute("data-href", "/palette/quotes/"+w.quoteID), "the quote is offered by number")
	check(t, suite.expect.Locator(option).ToContainText("Quote "+w.quoteID), "the option names the quote")
	check(t, colleague.Keyboard().Press("Enter"), "open it")
	check(t, suite.expect.Page(colleague).ToHaveURL(exactURL(w.quotePath)), "the quote's page opens for the colleague")
}
