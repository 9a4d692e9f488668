package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Browser tests of the Quotes area. Expected prices are not hard-coded: unit prices are read
// where the page offers the products (call 9), discount percentages where it offers the
// discounts (call 11), and every amount is then computed with the pricing rules of
// docs/v2-assumptions.md A4 by qtModel below.

// qtQuoteURL is the address of a quote page.
var qtQuoteURL = regexp.MustCompile(`/quotes/(\d+)/(\d+)/(\d+)$`)

// qtCents reads an amount as the page writes it in cents: €1,234.56 and −€5.98 in English,
// 1.234,56 € in Italian, German and Spanish, 1 234,56 € in French (the decimal separator is the
// last "." or "," followed by two digits).
func qtCents(t *testing.T, s string) int64 {
	t.Helper()
	clean := strings.NewReplacer("€", "", "−", "", "-", "", " ", "", "\u00a0", "", "\u202f", "").Replace(strings.TrimSpace(s))
	if i := strings.LastIndexAny(clean, ".,"); i >= 0 && len(clean)-i == 3 {
		clean = strings.NewReplacer(".", "", ",", "").Replace(clean[:i]) + "." + clean[i+1:]
	}
	whole, frac, ok := strings.Cut(clean, ".")
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if !ok || len(frac) != 2 || err1 != nil || err2 != nil {
		t.Fatalf("%q is not an amount in euros", s)
	}
	return w*100 + f
}

// qtEUR writes cents as the page does.
func qtEUR(cents int64) string {
	s := strconv.FormatInt(cents/100, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return "€" + b.String() + "." + strconv.FormatInt(cents%100+100, 10)[1:]
}

// qtText is the trimmed text of the first element of l.
func qtText(t *testing.T, l playwright.Locator, what string) string {
	t.Helper()
	s, err := l.First().TextContent()
	check(t, err, what)
	return strings.TrimSpace(s)
}

// --- The pricing model of A4 ---

type qtSides struct{ activation, recurring bool }

// sidesOf reads "one-off", "monthly" or "one-off and monthly".
func qtSidesOf(t *testing.T, s string) qtSides {
	t.Helper()
	switch s {
	case "one-off":
		return qtSides{activation: true}
	case "monthly":
		return qtSides{recurring: true}
	case "one-off and monthly":
		return qtSides{true, true}
	}
	t.Fatalf("unknown discount side %q", s)
	return qtSides{}
}

type qtItem struct {
	name         string
	unitA, unitR int64 // unit prices in use (the price list's, or the reprice)
}

type qtCart struct {
	title    string
	quantity int64
	items    []*qtItem
}

type qtDiscount struct {
	bp    int64 // hundredths of a percent
	sides qtSides
}

type qtModel struct {
	carts     []*qtCart
	discounts []qtDiscount // regular, in order
	extras    []qtDiscount // extra discounts with their values
	packagesR int64
	// money writes an amount as the page does in the page's language; qtEUR (English) when nil.
	money func(cents int64) string
}

// eur writes cents as the page does in the model's language.
func (m *qtModel) eur(cents int64) string {
	if m.money == nil {
		return qtEUR(cents)
	}
	return m.money(cents)
}

// qtPercentOf takes bp hundredths of a percent of amount, rounded half-up to the cent (A4 step 5).
func qtPercentOf(amount, bp int64) int64 {
	if amount <= 0 || bp <= 0 {
		return 0
	}
	return (amount*bp + 5000) / 10000
}

// qtPrice is one priced side of a line.
type qtPrice struct{ list, discount, extra, net int64 }

// line prices one side of an item (A4 steps 2 to 5).
func (m *qtModel) line(unit, quantity int64, onSide func(qtSides) bool) qtPrice {
	p := qtPrice{list: unit * quantity}
	used := int64(0)
	for _, d := range m.discounts {
		if !onSide(d.sides) {
			continue
		}
		bp := min(d.bp, 10000-used)
		used += bp
		p.discount += min(qtPercentOf(p.list, bp), p.list-p.discount)
	}
	remain := p.list - p.discount
	for _, e := range m.extras {
		if onSide(e.sides) {
			p.extra += qtPercentOf(remain, e.bp)
		}
	}
	p.extra = min(p.extra, remain)
	p.net = remain - p.extra
	return p
}

func qtActivation(s qtSides) bool { return s.activation }
func qtRecurring(s qtSides) bool  { return s.recurring }

// itemPrice prices an item of a cart on both sides.
func (m *qtModel) itemPrice(c *qtCart, it *qtItem) (activation, recurring qtPrice) {
	return m.line(it.unitA, c.quantity, qtActivation), m.line(it.unitR, c.quantity, qtRecurring)
}

// totals sums every line; packages add to the monthly list and net (A4 totals).
func (m *qtModel) totals() (activation, recurring qtPrice) {
	for _, c := range m.carts {
		for _, it := range c.items {
			a, r := m.itemPrice(c, it)
			activation.list += a.list
			activation.discount += a.discount
			activation.extra += a.extra
			activation.net += a.net
			recurring.list += r.list
			recurring.discount += r.discount
			recurring.extra += r.extra
			recurring.net += r.net
		}
	}
	recurring.list += m.packagesR
	recurring.net += m.packagesR
	return activation, recurring
}

// --- Page helpers ---

func qtCartLocator(page playwright.Page, title string) playwright.Locator {
	return page.Locator(fmt.Sprintf(`[data-testid="cart"]:has([data-testid="cart-title"] > bdi:text-is(%q))`, title))
}

func qtLineLocator(cart playwright.Locator, name string) playwright.Locator {
	return cart.Locator(fmt.Sprintf(`[data-testid="line"]:has([data-testid="line-name"] > bdi:text-is(%q))`, name))
}

// qtCheckTotals compares the quote's summary with the model.
func qtCheckTotals(t *testing.T, page playwright.Page, m *qtModel, after string) {
	t.Helper()
	a, r := m.totals()
	summary := page.Locator(`#quote-summary`)
	for _, c := range []struct {
		testID string
		want   int64
	}{
		{"quote-list-activation", a.list}, {"quote-list-recurring", r.list},
		{"quote-net-activation", a.net}, {"quote-net-recurring", r.net},
	} {
		check(t, suite.expect.Locator(summary.GetByTestId(c.testID)).ToHaveText(m.eur(c.want)),
			fmt.Sprintf("after %s the quote's %s is %s", after, c.testID, m.eur(c.want)))
	}
	check(t, suite.expect.Locator(page.Locator(`[data-testid="cart"]`)).ToHaveCount(len(m.carts)),
		fmt.Sprintf("after %s the quote has %d carts", after, len(m.carts)))
	for _, c := range m.carts {
		cart := qtCartLocator(page, c.title)
		check(t, suite.expect.Locator(cart.Locator(`[data-testid="line"]`)).ToHaveCount(len(c.items)),
			fmt.Sprintf("after %s cart %q has %d items", after, c.title, len(c.items)))
		for _, it := range c.items {
			pa, pr := m.itemPrice(c, it)
			line := qtLineLocator(cart, it.name)
			check(t, suite.expect.Locator(line.GetByTestId("line-net-activation")).ToHaveText(m.eur(pa.net)),
				fmt.Sprintf("after %s the one-off net of %q is %s", after, it.name, m.eur(pa.net)))
			check(t, suite.expect.Locator(line.GetByTestId("line-net-recurring")).ToHaveText(m.eur(pr.net)),
				fmt.Sprintf("after %s the monthly net of %q is %s", after, it.name, m.eur(pr.net)))
			check(t, suite.expect.Locator(line.GetByTestId("line-list-recurring")).ToHaveText(m.eur(pr.list)),
				fmt.Sprintf("after %s the monthly list of %q is %s", after, it.name, m.eur(pr.list)))
		}
	}
}

// qtAnnounced checks that screen readers were told the new total.
func qtAnnounced(t *testing.T, page playwright.Page, m *qtModel, after string) {
	t.Helper()
	a, r := m.totals()
	want := fmt.Sprintf("Quote total: %s one-off, %s monthly.", qtEUR(a.net), qtEUR(r.net))
	check(t, suite.expect.Locator(page.Locator("#announcer")).ToContainText(want), "after "+after+" the announcer says "+want)
}

// qtStartQuote starts a quote through the start page for a customer of the test's own (names are
// not unique on a v2 service the tests do not control): configurator, the customer found by
// searching, session, TOF, main product. It returns the quote's path, the customer's name and
// the main product's unit prices as the page offered them.
func qtStartQuote(t *testing.T, page playwright.Page, tof, product, label string) (path, customer string, unitA, unitR int64) {
	t.Helper()
	own := createTestCustomer(t, page, "Quoting")
	addTestOwner(t, page, own) // packages are assigned to the customer's first owner
	customer = own.Name
	_, err := page.Goto("/quotes/new")
	check(t, err, "open /quotes/new")
	_, err = page.Locator("#quote-cpq").SelectOption(playwright.SelectOptionValues{Labels: playwright.StringSlice("Business Mobile")})
	check(t, err, "choose the configurator")
	options := page.GetByTestId("quote-customer-option")
	check(t, suite.expect.Locator(options.First()).ToBeVisible(), "the configurator's customers are offered")

	// Search for the customer by their name (its unique part), with the keyboard.
	search := page.GetByTestId("quote-customer-search")
	check(t, search.Fill(strings.TrimSuffix(customer, " S.r.l.")), "type in the customer search")
	check(t, search.Press("Enter"), "search")
	chosen := page.Locator(`label:has([data-testid="quote-customer-name"]:text-is(` + strconv.Quote(customer) + `))`)
	check(t, suite.expect.Locator(chosen).ToBeVisible(), "the search finds the customer")
	check(t, chosen.Click(), "choose the customer")
	check(t, suite.expect.Locator(chosen.Locator("xpath=..").Locator("input[type=radio]")).ToBeChecked(), "the customer is chosen")
	check(t, page.GetByTestId("quote-start-submit").Click(), "start the configuration")

	tofButton := page.Locator(`[data-testid="quote-tof"]:text-is(` + strconv.Quote(tof) + `)`)
	check(t, suite.expect.Locator(tofButton).ToBeVisible(), "the offer types are shown")
	check(t, suite.expect.Locator(page.GetByTestId("quote-session-started")).ToContainText(customer), "the session is for the customer")
	check(t, tofButton.Click(), "choose the offer type "+tof)

	productRow := page.Locator(`[data-testid="quote-product"]:has([data-testid="product-name"]:text-is(` + strconv.Quote(product) + `))`)
	check(t, suite.expect.Locator(productRow).ToBeVisible(), "the main products are offered")
	unitA = qtCents(t, qtText(t, productRow.GetByTestId("product-activation"), "one-off price"))
	unitR = qtCents(t, qtText(t, productRow.GetByTestId("product-recurring"), "monthly price"))
	check(t, productRow.Locator("input[type=radio]").Check(), "choose "+product)
	if label != "" {
		check(t, page.GetByTestId("quote-label").Fill(label), "label the cart")
	}
	check(t, page.GetByTestId("quote-create-submit").Click(), "create the quote")
	check(t, suite.expect.Page(page).ToHaveURL(qtQuoteURL), "the browser is on the new quote's page")
	check(t, suite.expect.Locator(page.GetByTestId("cart")).ToHaveCount(1), "the new quote has its cart")
	return strings.TrimPrefix(page.URL(), suite.portalURL), customer, unitA, unitR
}

// qtSetQuantity changes a cart's quantity with the keyboard (type, Enter).
func qtSetQuantity(t *testing.T, cart playwright.Locator, quantity int64) {
	t.Helper()
	input := cart.GetByTestId("cart-quantity")
	check(t, input.Fill(strconv.FormatInt(quantity, 10)), "type the quantity")
	check(t, input.Press("Enter"), "submit the quantity")
	check(t, suite.expect.Locator(cart.GetByTestId("cart-quantity-was")).ToBeVisible(), "the quantity change is shown")
}

// The full journey of a sales person: a quote with two carts, an add-on, a quantity, discounts
// with an extra value, a reprice, a package, a price list, and removing an item and a cart.
func TestQuoteJourney(t *testing.T) {
	page := newPage(t)
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() }) // hx-confirm of the removals
	login(t, page, salesUser, salesPassword)

	_, customer, mainA, mainR := qtStartQuote(t, page, "Mobile plans", "Business Mobile 50GB", "Head office")
	check(t, suite.expect.Locator(page.GetByTestId("quote-customer")).ToHaveText(customer), "the quote page names the customer")
	head := &qtCart{title: "Head office", quantity: 1, items: []*qtItem{{name: "Business Mobile 50GB", unitA: mainA, unitR: mainR}}}
	m := &qtModel{carts: []*qtCart{head}}
	qtCheckTotals(t, page, m, "creating the quote")
	headCart := qtCartLocator(page, "Head office")
	check(t, suite.expect.Locator(qtLineLocator(headCart, "Business Mobile 50GB").GetByTestId("line-unit-recurring")).ToHaveText(qtEUR(mainR)),
		"the cart uses the price the product was offered at")

	// A second cart, for another offer type: the default main product of that TOF (A5 #4).
	check(t, page.Locator(`[data-testid="quote-add-cart-tof"]:text-is("Mobile devices")`).Click(), "show the products of Mobile devices")
	defaultName := page.GetByTestId("add-cart-default")
	check(t, suite.expect.Locator(defaultName).ToBeVisible(), "the default main product is named")
	phoneName := qtText(t, defaultName, "default product")
	phoneRow := page.Locator(`[data-testid="add-cart-product"]:has([data-testid="product-name"]:text-is(` + strconv.Quote(phoneName) + `))`)
	phone := &qtItem{name: phoneName,
		unitA: qtCents(t, qtText(t, phoneRow.GetByTestId("product-activation"), "phone one-off")),
		unitR: qtCents(t, qtText(t, phoneRow.GetByTestId("product-recurring"), "phone monthly"))}
	check(t, page.GetByTestId("add-cart-submit").Click(), "add the cart")
	devices := &qtCart{title: phoneName, quantity: 1, items: []*qtItem{phone}}
	m.carts = append(m.carts, devices)
	qtCheckTotals(t, page, m, "adding a second cart")
	check(t, suite.expect.Locator(page.GetByTestId("quote-add-cart-panel")).ToBeEmpty(), "the add-cart panel closes")

	// An add-on under the main product: only add-ons whose parents include it are offered.
	check(t, qtLineLocator(headCart, "Business Mobile 50GB").GetByTestId("line-add-addon").Click(), "open the add-ons")
	addonPanel := headCart.GetByTestId("addon-panel")
	check(t, suite.expect.Locator(addonPanel.GetByTestId("addon-name")).ToContainText([]string{"Device insurance"}), "Device insurance is offered")
	check(t, suite.expect.Locator(addonPanel.Locator(`[data-testid="addon-name"]:text-is("Insurance abroad extension")`)).ToHaveCount(0),
		"an add-on of another add-on is not offered under the main product")
	insuranceRow := addonPanel.Locator(`[data-testid="addon-option"]:has([data-testid="addon-name"]:text-is("Device insurance"))`)
	insurance := &qtItem{name: "Device insurance",
		unitA: qtCents(t, qtText(t, insuranceRow.GetByTestId("product-activation"), "insurance one-off")),
		unitR: qtCents(t, qtText(t, insuranceRow.GetByTestId("product-recurring"), "insurance monthly"))}
	check(t, insuranceRow.Locator("input[type=radio]").Check(), "choose Device insurance")
	check(t, addonPanel.GetByTestId("addon-submit").Click(), "add the add-on")
	head.items = append(head.items, insurance)
	qtCheckTotals(t, page, m, "adding an add-on")
	check(t, suite.expect.Locator(qtLineLocator(headCart, "Device insurance")).ToHaveClass(regexp.MustCompile(`\bdepth-1\b`)),
		"the add-on sits under the main product")

	// Quantity 3: every line of the cart times 3; the changed amounts are highlighted.
	qtSetQuantity(t, headCart, 3)
	head.quantity = 3
	qtCheckTotals(t, page, m, "changing the quantity")
	qtAnnounced(t, page, m, "changing the quantity")
	check(t, suite.expect.Locator(qtLineLocator(headCart, "Business Mobile 50GB").GetByTestId("line-list-recurring")).ToHaveClass(regexp.MustCompile(`is-changed`)),
		"the changed amount is highlighted")
	check(t, suite.expect.Locator(qtLineLocator(headCart, "Business Mobile 50GB").GetByTestId("line-list-recurring-was")).ToContainText(qtEUR(mainR)),
		"the previous amount is shown")

	// Discounts: a regular one and an extra value, read from the form.
	check(t, page.GetByTestId("quote-discounts-open").Click(), "open the discounts")
	loyalty := page.Locator(`[data-testid="discount-option"]:has(label:text("Loyalty"))`)
	check(t, suite.expect.Locator(loyalty).ToBeVisible(), "the applicable discounts are listed")
	m.discounts = append(m.discounts, qtDiscountOf(t, qtText(t, loyalty.Locator("label"), "loyalty label")))
	check(t, loyalty.Locator("input").Check(), "tick the loyalty discount")
	negotiated := page.Locator(`[data-testid="extra-option"]:has(label:text("Negotiated"))`)
	extra := qtExtraOf(t, qtText(t, negotiated.Locator(".field__hint"), "negotiated hint"), 5)
	m.extras = append(m.extras, extra)
	check(t, negotiated.GetByTestId("extra-value").Fill("5"), "give the extra discount 5 %")
	check(t, page.GetByTestId("discounts-submit").Press("Enter"), "apply the discounts")
	qtCheckTotals(t, page, m, "applying discounts")
	_, rootR := m.itemPrice(head, head.items[0])
	check(t, suite.expect.Locator(qtLineLocator(headCart, "Business Mobile 50GB").GetByTestId("line-extra-recurring")).ToHaveText("−"+qtEUR(rootR.extra)),
		"the line's breakdown shows the extra discount")
	check(t, suite.expect.Locator(page.Locator(`#quote-summary [data-testid="quote-discount-recurring"]`)).ToHaveText("−"+qtEUR(m.totalsDiscountR())),
		"the quote's breakdown shows what the discount took")

	// Reprice the add-on: a lower monthly price, no one-off.
	line := qtLineLocator(headCart, "Device insurance")
	check(t, line.Locator("summary").Click(), "open the reprice form")
	check(t, line.GetByTestId("reprice-activation").Fill("0"), "one-off unit price")
	newR := insurance.unitR - 140
	check(t, line.GetByTestId("reprice-recurring").Fill(strings.TrimPrefix(qtEUR(newR), "€")), "monthly unit price")
	check(t, line.GetByTestId("reprice-submit").Click(), "save the prices")
	insurance.unitA, insurance.unitR = 0, newR
	check(t, suite.expect.Locator(line.GetByTestId("line-repriced")).ToBeVisible(), "the line is marked repriced")
	qtCheckTotals(t, page, m, "repricing")

	// A package of the first offer type, assigned to the customer's first owner by default.
	check(t, page.Locator(`[data-testid="quote-packages-tof"]:text-is("Mobile plans")`).Click(), "show the packages")
	bundle := page.Locator(`[data-testid="package-offer"]:has([data-testid="package-name"]:text-is("Business Bundle"))`)
	check(t, suite.expect.Locator(bundle).ToBeVisible(), "the package configuration is shown")
	bundleR := qtCents(t, qtText(t, bundle.GetByTestId("package-recurring"), "package price"))
	check(t, page.Locator(`#quote-package-form label:has(bdi:text-is("Business Bundle"))`).Click(), "choose the package")
	check(t, page.GetByTestId("package-submit").Click(), "add the package")
	m.packagesR += bundleR
	check(t, suite.expect.Locator(page.GetByTestId("quote-package-name")).ToHaveText("Business Bundle"), "the package is on the quote")
	qtCheckTotals(t, page, m, "adding a package")

	// The partner price list on the devices cart: its prices come down.
	devicesCart := qtCartLocator(page, phoneName)
	_, err := devicesCart.GetByTestId("cart-pricelist").SelectOption(playwright.SelectOptionValues{Labels: playwright.StringSlice("Partner 2026")})
	check(t, err, "choose the partner price list (it applies on change: no button to press)")
	check(t, suite.expect.Locator(devicesCart.GetByTestId("cart-pricelist-submit")).ToBeHidden(), "the no-script button is hidden")
	phoneLine := qtLineLocator(devicesCart, phoneName)
	check(t, suite.expect.Locator(phoneLine.GetByTestId("line-unit-activation")).Not().ToHaveText(qtEUR(phone.unitA)), "the one-off price changed")
	newPhoneA := qtCents(t, qtText(t, phoneLine.GetByTestId("line-unit-activation"), "partner one-off"))
	newPhoneR := qtCents(t, qtText(t, phoneLine.GetByTestId("line-unit-recurring"), "partner monthly"))
	if newPhoneA >= phone.unitA || newPhoneR >= phone.unitR {
		t.Errorf("partner prices %d/%d are not below the standard %d/%d", newPhoneA, newPhoneR, phone.unitA, phone.unitR)
	}
	phone.unitA, phone.unitR = newPhoneA, newPhoneR
	qtCheckTotals(t, page, m, "changing the price list")

	// Remove the add-on (keyboard, confirmed), then the devices cart.
	check(t, line.GetByTestId("line-remove").Focus(), "focus Remove")
	check(t, page.Keyboard().Press("Enter"), "remove the add-on")
	head.items = head.items[:1]
	qtCheckTotals(t, page, m, "removing an item")
	check(t, devicesCart.GetByTestId("cart-remove").Click(), "remove the cart")
	m.carts = m.carts[:1]
	qtCheckTotals(t, page, m, "removing a cart")
	qtAnnounced(t, page, m, "removing a cart")
}

// totalsDiscountR is the monthly sum the first regular discount took.
func (m *qtModel) totalsDiscountR() int64 {
	_, r := m.totals()
	return r.discount
}

// qtDiscountOf reads a regular discount's label: "Loyalty 10% (10% of the monthly list price)".
func qtDiscountOf(t *testing.T, label string) qtDiscount {
	t.Helper()
	mm := regexp.MustCompile(`\((\d+(?:\.\d+)?)% of the (one-off and monthly|one-off|monthly) list price\)`).FindStringSubmatch(label)
	if mm == nil {
		t.Fatalf("discount label %q does not say its percentage and side", label)
	}
	pct, _ := strconv.ParseFloat(mm[1], 64)
	return qtDiscount{bp: int64(pct*100 + 0.5), sides: qtSidesOf(t, mm[2])}
}

// qtExtraOf reads an extra discount's hint ("... on the one-off and monthly price.") and takes value %.
func qtExtraOf(t *testing.T, hint string, value int64) qtDiscount {
	t.Helper()
	mm := regexp.MustCompile(`on the (one-off and monthly|one-off|monthly) price`).FindStringSubmatch(hint)
	if mm == nil {
		t.Fatalf("extra discount hint %q does not say its side", hint)
	}
	return qtDiscount{bp: value * 100, sides: qtSidesOf(t, mm[1])}
}

// A quote's address can be reloaded and opened by a colleague, who carries on working on it.
func TestQuoteReloadAndResumeFromItsAddress(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	path, _, unitA, unitR := qtStartQuote(t, page, "Mobile plans", "Business Mobile 50GB", "Resumed")
	cart := qtCartLocator(page, "Resumed")
	qtSetQuantity(t, cart, 2)

	_, err := page.Reload()
	check(t, err, "reload the quote")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL(path)), "the reload stays on the quote")
	check(t, suite.expect.Locator(cart.GetByTestId("cart-quantity")).ToHaveValue("2"), "after a reload the quantity is kept")
	check(t, suite.expect.Locator(page.GetByTestId("quote-net-activation")).ToHaveText(qtEUR(2*unitA)), "after a reload the total is kept")

	// A colleague (another browser, another user) opens the address and changes the quantity.
	colleague := newPage(t)
	_, err = colleague.Goto(path)
	check(t, err, "the colleague opens the quote's address")
	signIn(t, colleague, backofficeUser, backofficePass)
	check(t, suite.expect.Page(colleague).ToHaveURL(exactURL(path)), "after signing in the colleague is on the quote")
	theirCart := qtCartLocator(colleague, "Resumed")
	check(t, suite.expect.Locator(theirCart.GetByTestId("cart-quantity")).ToHaveValue("2"), "the colleague sees the quote")
	qtSetQuantity(t, theirCart, 5)
	check(t, suite.expect.Locator(colleague.GetByTestId("quote-net-recurring")).ToHaveText(qtEUR(5*unitR)),
		"the colleague's change is priced (a configuration session was started for them)")
	check(t, suite.expect.Locator(colleague.GetByTestId("session-expired")).ToHaveCount(0), "no session problem")

	_, err = page.Reload()
	check(t, err, "the author reloads")
	check(t, suite.expect.Locator(cart.GetByTestId("cart-quantity")).ToHaveValue("5"), "the author sees the colleague's change")
}

// Two quotes in two tabs of one browser work side by side, each with its own session.
func TestQuoteTwoQuotesInTwoTabs(t *testing.T) {
	first := newPage(t)
	login(t, first, salesUser, salesPassword)
	second, err := first.Context().NewPage()
	check(t, err, "open a second tab")

	// The user switches tabs (a background tab's timers are throttled, as for a person).
	use := func(p playwright.Page) { check(t, p.BringToFront(), "switch to the tab") }
	use(first)
	firstPath, _, firstA, _ := qtStartQuote(t, first, "Mobile plans", "Business Mobile 50GB", "Tab one")
	use(second)
	secondPath, _, secondA, _ := qtStartQuote(t, second, "Mobile devices", "Smartphone Pro 256GB", "Tab two")
	if firstPath == secondPath {
		t.Fatalf("both tabs show %s", firstPath)
	}
	one, two := qtCartLocator(first, "Tab one"), qtCartLocator(second, "Tab two")
	use(first)
	qtSetQuantity(t, one, 2)
	use(second)
	qtSetQuantity(t, two, 4)
	use(first)
	qtSetQuantity(t, one, 3) // back in the first tab: its session still works
	check(t, suite.expect.Locator(first.GetByTestId("quote-net-activation")).ToHaveText(qtEUR(3*firstA)), "first tab's total")
	check(t, suite.expect.Locator(second.GetByTestId("quote-net-activation")).ToHaveText(qtEUR(4*secondA)), "second tab's total")
	for _, p := range []playwright.Page{first, second} {
		_, err := p.Reload()
		check(t, err, "reload a tab")
	}
	check(t, suite.expect.Locator(one.GetByTestId("cart-quantity")).ToHaveValue("3"), "first quote kept its quantity")
	check(t, suite.expect.Locator(two.GetByTestId("cart-quantity")).ToHaveValue("4"), "second quote kept its quantity")
	check(t, suite.expect.Locator(first.GetByTestId("session-expired")).ToHaveCount(0), "no session problem in the first tab")
}
