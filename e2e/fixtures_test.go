package e2e

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/playwright-community/playwright-go"
)

// Test data that each test makes for itself through the portal, so the browser tests pass against
// any v2 deployment (make e2e V2_API_URL=...): one where other data already exists, ids are not
// predictable and nothing is seeded for the tests. No test relies on a seeded customer id, a
// fresh state or the simulator's request log.

// testCustomer is a customer a test created, with the configurator its quotes use.
type testCustomer struct {
	ID    int
	Name  string
	CPQID int
}

// createTestCustomer creates a customer through the portal's own form endpoint (POST /customers,
// with the page's cookies), with a name nobody else has, listed in every configurator the form
// offers (so any configurator's quote start offers them); CPQID is the first of those.
func createTestCustomer(t *testing.T, page playwright.Page, namePrefix string) testCustomer {
	t.Helper()
	return createTestCustomerAt(t, page, suite.portalURL, namePrefix)
}

// createTestCustomerAt is createTestCustomer on the portal at base (one a test started itself).
func createTestCustomerAt(t *testing.T, page playwright.Page, base, namePrefix string) testCustomer {
	t.Helper()
	req := page.Request()
	form, err := req.Get(base + "/customers/new")
	check(t, err, "open the new customer form")
	formHTML, _ := form.Text()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(formHTML))
	check(t, err, "parse the new customer form")
	customerForm := doc.Find(`[data-testid="customer-form"]`)
	var cpqIDs []string
	customerForm.Find(`input[name="cpqIds"]`).Each(func(_ int, box *goquery.Selection) {
		cpqIDs = append(cpqIDs, box.AttrOr("value", ""))
	})
	cpqID, err := strconv.Atoi(strings.Join(cpqIDs[:min(1, len(cpqIDs))], ""))
	if form.Status() != 200 || err != nil {
		t.Fatalf("the new customer form (%d) offers no configurator: %.500s", form.Status(), formHTML)
	}
	name := namePrefix + " " + custUnique() + " S.r.l."
	fields := url.Values{}
	for k, v := range formDefaults(customerForm) {
		fields.Set(k, fmt.Sprint(v))
	}
	for k, v := range map[string]string{
		"name": name, "taxId": custTaxID(), "email": "office@example.com", "city": "Milano", "country": "IT",
	} {
		fields.Set(k, v)
	}
	fields["cpqIds"] = cpqIDs
	if fields.Get("segment") == "" { // a required choice without a default: the first offered
		fields.Set("segment", customerForm.Find(`select[name="segment"] option[value!=""]`).First().AttrOr("value", ""))
	}
	created, err := req.Post(base+"/customers", playwright.APIRequestContextPostOptions{
		Data:    fields.Encode(),
		Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
	})
	check(t, err, "create the customer")
	m := custCustomerURL.FindStringSubmatch(created.URL())
	if created.Status() != 200 || m == nil {
		text, _ := created.Text()
		if d, err := goquery.NewDocumentFromReader(strings.NewReader(text)); err == nil {
			if msg := strings.Join(strings.Fields(d.Find(".error-summary, main").First().Text()), " "); msg != "" {
				text = msg
			}
		}
		t.Fatalf("creating customer %q ended at %s with %d: %.500s", name, created.URL(), created.Status(), text)
	}
	id, _ := strconv.Atoi(m[1])
	return testCustomer{ID: id, Name: name, CPQID: cpqID}
}

// addTestOwner gives customer c the first owner the customer page suggests (the v2 service's
// sales users it knows), through the page's own add-owner form, and returns the owner's id.
func addTestOwner(t *testing.T, page playwright.Page, c testCustomer) string {
	t.Helper()
	req := page.Request()
	customerPage, err := req.Get(portalURL("/customers/" + strconv.Itoa(c.ID)))
	check(t, err, "open the customer's page")
	pageHTML, _ := customerPage.Text()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(pageHTML))
	check(t, err, "parse the customer's page")
	ownerID := doc.Find(`[data-testid="known-owners"] option`).First().AttrOr("value", "")
	// The add-owner form is folded in "Add or replace owners", loaded when opened (its hx-get).
	manage, err := req.Get(portalURL(doc.Find(`[data-testid="owners-manage"]`).AttrOr("hx-get", "/missing")),
		playwright.APIRequestContextGetOptions{Headers: map[string]string{"HX-Request": "true"}})
	check(t, err, "open Add or replace owners")
	manageHTML, _ := manage.Text()
	manageDoc, err := goquery.NewDocumentFromReader(strings.NewReader(manageHTML))
	check(t, err, "parse Add or replace owners")
	action := manageDoc.Find(`[data-testid="owner-add-form"]`).AttrOr("action", "")
	if ownerID == "" || action == "" {
		t.Fatalf("the customer's page suggests no owner or has no add-owner form: %.500s", pageHTML)
	}
	added, err := req.Post(portalURL(action), playwright.APIRequestContextPostOptions{
		Form: map[string]any{"ownerId": ownerID}, Headers: map[string]string{"HX-Request": "true"},
	})
	check(t, err, "add the owner")
	if added.Status() != 200 {
		text, _ := added.Text()
		t.Fatalf("adding owner %s answered %d: %.500s", ownerID, added.Status(), text)
	}
	return ownerID
}

// quotePathRE matches a quote page's path for customer c: /quotes/{cpqId}/{customerId}/{quoteId}.
func (c testCustomer) quotePathRE() *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`^/quotes/%d/%d/(\d+)$`, c.CPQID, c.ID))
}

// createTestQuote starts a quote for customer c with one cart (the first main product of the first
// offer type) through the portal's own quote endpoints (POST /quotes/new, then POST
// /quotes/new/{cpq}/{customer}/tofs/{tof}), with the page's cookies. It returns the quote page's
// path /quotes/{cpq}/{customer}/{quoteId}, the quote id and the ids of every offer type offered.
func createTestQuote(t *testing.T, page playwright.Page, c testCustomer, label string) (quotePath, quoteID string, tofIDs []string) {
	t.Helper()
	return createTestQuoteAt(t, page, suite.portalURL, c, label)
}

// createTestQuoteAt is createTestQuote on the portal at base (one a test started itself).
func createTestQuoteAt(t *testing.T, page playwright.Page, base string, c testCustomer, label string) (quotePath, quoteID string, tofIDs []string) {
	t.Helper()
	req := page.Request()
	start, err := req.Post(base+"/quotes/new", playwright.APIRequestContextPostOptions{
		Form: map[string]any{"cpqId": strconv.Itoa(c.CPQID), "customerId": strconv.Itoa(c.ID)},
	})
	check(t, err, "start a configuration session")
	body, _ := start.Text()
	for _, m := range regexp.MustCompile(fmt.Sprintf(`/quotes/new/%d/%d/tofs/(\d+)/products`, c.CPQID, c.ID)).FindAllStringSubmatch(body, -1) {
		tofIDs = append(tofIDs, m[1])
	}
	if start.Status() != 200 || len(tofIDs) == 0 {
		t.Fatalf("POST /quotes/new answered %d without offer types: %.500s", start.Status(), body)
	}
	productsURL := fmt.Sprintf("/quotes/new/%d/%d/tofs/%s/products", c.CPQID, c.ID, tofIDs[0])
	products, err := req.Get(base+productsURL, playwright.APIRequestContextGetOptions{Headers: map[string]string{"HX-Request": "true"}})
	check(t, err, "list the main products")
	productsHTML, _ := products.Text()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(productsHTML))
	check(t, err, "parse the products")
	productID := doc.Find(`input[name=productId]`).First().AttrOr("value", "")
	if productID == "" {
		t.Fatalf("no main product in %s: %.500s", productsURL, productsHTML)
	}
	created, err := req.Post(base+fmt.Sprintf("/quotes/new/%d/%d/tofs/%s", c.CPQID, c.ID, tofIDs[0]),
		playwright.APIRequestContextPostOptions{Form: map[string]any{"productId": productID, "label": label}})
	check(t, err, "create the quote")
	quotePath = strings.TrimPrefix(created.URL(), base)
	m := c.quotePathRE().FindStringSubmatch(quotePath)
	if created.Status() != 200 || m == nil {
		text, _ := created.Text()
		t.Fatalf("creating the quote ended at %s with %d: %.500s", created.URL(), created.Status(), text)
	}
	return quotePath, m[1], tofIDs
}

// formDefaults are the values a browser would submit for form untouched: named inputs with their
// values (checked boxes and radios only), each select's selected option (else its first), and
// textareas. A name that appears more than once keeps its first value.
func formDefaults(form *goquery.Selection) map[string]any {
	values := map[string]any{}
	set := func(name, value string) {
		if _, ok := values[name]; name != "" && !ok {
			values[name] = value
		}
	}
	form.Find("input[name]").Each(func(_ int, in *goquery.Selection) {
		switch in.AttrOr("type", "text") {
		case "checkbox", "radio":
			if _, checked := in.Attr("checked"); checked {
				set(in.AttrOr("name", ""), in.AttrOr("value", "on"))
			}
		case "submit", "button", "file":
		default:
			set(in.AttrOr("name", ""), in.AttrOr("value", ""))
		}
	})
	form.Find("select[name]").Each(func(_ int, sel *goquery.Selection) {
		option := sel.Find("option[selected]").First()
		if option.Length() == 0 {
			option = sel.Find("option").First()
		}
		set(sel.AttrOr("name", ""), option.AttrOr("value", option.Text()))
	})
	form.Find("textarea[name]").Each(func(_ int, ta *goquery.Selection) {
		set(ta.AttrOr("name", ""), ta.Text())
	})
	return values
}

// v2Actor is how the portal names user's changes in audits and notices, read from the newest
// entry of the audit of the quote at quotePath, which user has just changed. The embedded
// simulator checks the embedded provider's tokens and writes each user's login
// (preferred_username), which the portal shows as the name the user signed in with (the people
// directory, docs/v2-assumptions.md A7): there it must be user's display name. An external v2 API
// names its users its own way (a simulator that checks no token calls everyone "api-user", a real
// deployment may use an e-mail or a subject), so there the tests take the name from the audit and
// check that every other page shows that same name.
func v2Actor(t *testing.T, user, password, quotePath string) string {
	t.Helper()
	if suite.simURL != "" {
		return displayName(t, user)
	}
	page := newPage(t)
	login(t, page, user, password)
	quoteID := quotePath[strings.LastIndex(quotePath, "/")+1:]
	_, err := page.Goto("/audits/" + quoteID)
	check(t, err, "open the audit of quote "+quoteID)
	entries := page.GetByTestId("audit-entry")
	check(t, suite.expect.Locator(entries.First()).ToBeVisible(), "the audit of quote "+quoteID+" has entries")
	n, err := entries.Count()
	check(t, err, "count the audit entries")
	newest, actor := "", ""
	for i := range n {
		at, err := entries.Nth(i).Locator("time").GetAttribute("datetime")
		check(t, err, "an audit entry's time")
		who, err := entries.Nth(i).GetByTestId("audit-actor").InnerText()
		check(t, err, "an audit entry's actor")
		if at > newest { // newest first: the first of the newest second is the latest
			newest, actor = at, strings.TrimSpace(who)
		}
	}
	if actor == "" {
		t.Fatalf("the audit of quote %s names nobody for its newest entry", quoteID)
	}
	return actor
}

// displayName is the name a demo user signs in with (the embedded provider's name claim).
func displayName(t *testing.T, user string) string {
	t.Helper()
	switch user {
	case salesUser:
		return salesName
	case backofficeUser:
		return backofficeName
	}
	t.Fatalf("no display name for the demo user %q", user)
	return ""
}

// generateContract generates the contract of the quote at quoteURL (absolute) as the page does:
// it asks the confirmation (the quote as it is now, with the state it describes), then posts that
// state, so the contract is the quote confirmed. The answer is the POST's (without htmx, a
// redirect to the contract's page).
func generateContract(t *testing.T, req playwright.APIRequestContext, quoteURL string) (playwright.APIResponse, error) {
	t.Helper()
	confirmation, err := req.Get(quoteURL+"/contract/confirm", playwright.APIRequestContextGetOptions{Headers: map[string]string{"HX-Request": "true"}})
	if err != nil {
		return nil, err
	}
	var answer struct{ State string }
	if err := confirmation.JSON(&answer); err != nil || answer.State == "" {
		body, _ := confirmation.Text()
		t.Fatalf("the generate confirmation of %s answered %d: %.300s", quoteURL, confirmation.Status(), body)
	}
	return req.Post(quoteURL+"/contract", playwright.APIRequestContextPostOptions{Form: map[string]any{"confirmed": answer.State}})
}
