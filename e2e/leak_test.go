package e2e

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestLeakCrawl (issue 38 item 2) runs a portal whose embedded simulator restricts every user to
// the customers they own (PORTAL_DEMO_RESTRICT_TO_OWNERS), on SQLite and on PostgreSQL. Sales and
// the team lead each make quotes and contracts on customers of their own, the back office moves
// sales' contracts on (declined, signed, archived), each of them opens the other's rows (the v2
// API refuses them: the portal has sightings by others, the realistic source of leaks), and sales
// loses a customer (its owner changed) after reading its contract, whose stage the back office
// then changes. Then every GET route of the router is fetched as each of the two, with every
// filter of every list and export, and:
//   - no answer may hold the other's customer names, customer, quote or contract ids or numbers,
//     totals (and their sums, in any language's number format);
//   - a filter that could only match the other's rows (a prefix of their customer's name, their
//     customer's id, a stage only they have, a date range around them, a sort) must answer
//     exactly as a filter that matches nothing (counts, "N found", rows, "Archive all N");
//   - the pages without filters must tell exactly what they told before the other's rows, the
//     refusals and the lost customer existed.
func TestLeakCrawl(t *testing.T) {
	routes := leakGETRoutes(t)
	for _, engine := range []struct {
		name string
		env  func(t *testing.T) []string
	}{
		{"SQLite", func(*testing.T) []string { return nil }},
		{"PostgreSQL", func(t *testing.T) []string { return []string{"PORTAL_DATABASE_URL=" + statedbtest.PostgresURL(t)} }},
	} {
		t.Run(engine.name, func(t *testing.T) {
			leakCrawl(t, routes, append(engine.env(t), restrictToOwners)...)
		})
	}
}

// leakQuote and leakContract are rows a side made.
type leakQuote struct {
	cpq, customer, id, path string
	oneOff, monthly         int64 // cents, as the owner's export gives them
}

type leakContract struct {
	id, number, path, quoteID string
}

// leakSide is one person and what they own.
type leakSide struct {
	who       string
	page      playwright.Page
	client    *leakClient
	customers []testCustomer
	quotes    []*leakQuote
	contracts []leakContract
}

func (s *leakSide) quote(t *testing.T, base string, c testCustomer, label string, product int) *leakQuote {
	t.Helper()
	path, id := leakCreateQuote(t, s.page, base, c, label, product)
	q := &leakQuote{cpq: strconv.Itoa(c.CPQID), customer: strconv.Itoa(c.ID), id: id, path: path}
	s.quotes = append(s.quotes, q)
	return q
}

// openOwn opens each of the side's own quotes and contracts as they stand now, so that the
// crawl's own visits change nothing of theirs between the two crawls.
func (s *leakSide) openOwn(t *testing.T) {
	for _, q := range s.quotes {
		s.client.get(t.Context(), q.path, false)
	}
	for _, c := range s.contracts {
		s.client.get(t.Context(), c.path, false)
	}
}

func (s *leakSide) contract(t *testing.T, base string, q *leakQuote) leakContract {
	t.Helper()
	resp, err := generateContract(t, s.page.Request(), base+q.path)
	check(t, err, "generate a contract")
	body, _ := resp.Text()
	path := strings.TrimPrefix(resp.URL(), base)
	if resp.Status() != 200 || !regexp.MustCompile(`^/contracts/\d+$`).MatchString(path) {
		t.Fatalf("generating the contract of %s ended at %s with %d: %.300s", q.path, resp.URL(), resp.Status(), body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	check(t, err, "parse the contract page")
	number := strings.TrimSpace(strings.TrimPrefix(doc.Find(`h1[data-testid="page-title"]`).Text(), "Contract"))
	if number == "" {
		t.Fatalf("no contract number on %s", path)
	}
	c := leakContract{id: strings.TrimPrefix(path, "/contracts/"), number: number, path: path, quoteID: q.id}
	s.contracts = append(s.contracts, c)
	return c
}

// leakCreateQuote is createTestQuoteAt with the product'th main product (the two sides quote
// different products, so their totals differ and a total tells whose it is).
func leakCreateQuote(t *testing.T, page playwright.Page, base string, c testCustomer, label string, product int) (string, string) {
	t.Helper()
	req := page.Request()
	start, err := req.Post(base+"/quotes/new", playwright.APIRequestContextPostOptions{
		Form: map[string]any{"cpqId": strconv.Itoa(c.CPQID), "customerId": strconv.Itoa(c.ID)},
	})
	check(t, err, "start a configuration session")
	body, _ := start.Text()
	tofs := regexp.MustCompile(fmt.Sprintf(`/quotes/new/%d/%d/tofs/(\d+)/products`, c.CPQID, c.ID)).FindAllStringSubmatch(body, -1)
	if start.Status() != 200 || len(tofs) == 0 {
		t.Fatalf("POST /quotes/new answered %d without offer types: %.500s", start.Status(), body)
	}
	tof := tofs[0][1]
	products, err := req.Get(base+fmt.Sprintf("/quotes/new/%d/%d/tofs/%s/products", c.CPQID, c.ID, tof),
		playwright.APIRequestContextGetOptions{Headers: map[string]string{"HX-Request": "true"}})
	check(t, err, "list the main products")
	productsHTML, _ := products.Text()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(productsHTML))
	check(t, err, "parse the products")
	ids := doc.Find(`input[name=productId]`)
	if ids.Length() == 0 {
		t.Fatalf("no main product: %.500s", productsHTML)
	}
	productID := ids.Eq(product%ids.Length()).AttrOr("value", "")
	created, err := req.Post(base+fmt.Sprintf("/quotes/new/%d/%d/tofs/%s", c.CPQID, c.ID, tof),
		playwright.APIRequestContextPostOptions{Form: map[string]any{"productId": productID, "label": label}})
	check(t, err, "create the quote")
	path := strings.TrimPrefix(created.URL(), base)
	m := c.quotePathRE().FindStringSubmatch(path)
	if created.Status() != 200 || m == nil {
		text, _ := created.Text()
		t.Fatalf("creating the quote ended at %s with %d: %.500s", created.URL(), created.Status(), text)
	}
	return path, m[1]
}

// leakPost posts a form as page's person and expects a success (after redirects).
func leakPost(t *testing.T, page playwright.Page, url string, form map[string]any, what string) {
	t.Helper()
	resp, err := page.Request().Post(url, playwright.APIRequestContextPostOptions{Form: form})
	check(t, err, what)
	if resp.Status() >= 400 {
		body, _ := resp.Text()
		t.Fatalf("%s: %d %.300s", what, resp.Status(), body)
	}
}

// leakSignature sends the contract for signature as page's person.
func leakSignature(t *testing.T, page playwright.Page, base string, c leakContract) {
	t.Helper()
	leakPost(t, page, base+c.path+"/signature", map[string]any{"email": "signer@example.com", "signerName": "Signer"}, "send "+c.number+" for signature")
}

// leakDeclineReason is the reason the signer of sales' declined contract gives: a value of the
// contracts list's reason filter only that contract matches.
const leakDeclineReason = "not now"

// leakAnswer answers the contract's signature request as its signer, at the simulator sim.
func leakAnswer(t *testing.T, sim, number, answer string) {
	t.Helper()
	saved := suite.simURL
	suite.simURL = sim // signerAnswers asks the suite's simulator; this portal has its own
	defer func() { suite.simURL = saved }()
	reason := ""
	if answer == "DECLINED" {
		reason = leakDeclineReason
	}
	signerAnswers(t, number, answer, reason)
}

// leakTotals reads the owner's own quotes' totals from their export (the numbers as stored).
func leakTotals(t *testing.T, s *leakSide) {
	t.Helper()
	r := s.client.get(t.Context(), "/work/quotes/export?format=csv&scope=mine", false)
	if r.status != 200 {
		t.Fatalf("%s's export: %d %.300s", s.who, r.status, r.body)
	}
	rows := parseCSV(t, r.body)
	col := func(prefix string) int {
		for i, h := range rows[0] {
			if strings.HasPrefix(strings.ToLower(h), prefix) {
				return i
			}
		}
		t.Fatalf("no %q column in %q", prefix, rows[0])
		return -1
	}
	quoteCol, oneOffCol, monthlyCol := col("quote"), col("one-off"), col("monthly")
	cents := func(v string) int64 {
		f, err := strconv.ParseFloat(strings.ReplaceAll(v, ",", ""), 64)
		if err != nil {
			return 0
		}
		return int64(f*100 + 0.5)
	}
	for _, row := range rows[1:] {
		for _, q := range s.quotes {
			if row[quoteCol] == q.id {
				q.oneOff, q.monthly = cents(row[oneOffCol]), cents(row[monthlyCol])
				t.Logf("%s's quote %s: one-off %q, monthly %q", s.who, q.id, row[oneOffCol], row[monthlyCol])
			}
		}
	}
}

// leakSecretsOf is what viewer may never learn of other (and of lost, what viewer lost).
func leakSecretsOf(other *leakSide, own *leakSide, lostCustomers []testCustomer, lostQuotes []*leakQuote, lostContracts []leakContract) *leakSecrets {
	s := &leakSecrets{literals: map[string]string{}, customerIDs: map[string]string{}, quoteIDs: map[string]string{}, contractIDs: map[string]string{}, amounts: map[int64]string{}}
	customers := append(slices.Clone(other.customers), lostCustomers...)
	for _, c := range customers {
		s.literals[c.Name] = "customer name " + c.Name
		// The name's unique part: a cut or wrapped name still tells it.
		if f := strings.Fields(c.Name); len(f) > 1 {
			s.literals[f[1]] = "part of customer name " + c.Name
		}
		s.customerIDs[strconv.Itoa(c.ID)] = "customer id " + strconv.Itoa(c.ID) + " (" + c.Name + ")"
	}
	quotes := append(slices.Clone(other.quotes), lostQuotes...)
	for _, q := range quotes {
		s.quoteIDs[q.id] = "quote id " + q.id
		if len(q.id) >= 5 {
			s.literals[q.id] = "quote number " + q.id
		}
	}
	for _, c := range append(slices.Clone(other.contracts), lostContracts...) {
		s.contractIDs[c.id] = "contract id " + c.id + " (" + c.number + ")"
		s.literals[c.number] = "contract number " + c.number
	}
	// Totals (one-off, monthly, and the value the home counts: one-off plus twelve months) and
	// every sum of them with the viewer's own (a team figure), unless the viewer's own rows alone
	// make the same amount.
	metrics := []struct {
		name string
		of   func(q *leakQuote) int64
	}{
		{"one-off total", func(q *leakQuote) int64 { return q.oneOff }},
		{"monthly total", func(q *leakQuote) int64 { return q.monthly }},
		{"value (one-off + 12 months)", func(q *leakQuote) int64 { return q.oneOff + 12*q.monthly }},
	}
	for _, m := range metrics {
		var ownAmounts, foreign []int64
		for _, q := range own.quotes {
			ownAmounts = append(ownAmounts, m.of(q))
		}
		for _, q := range quotes {
			foreign = append(foreign, m.of(q))
		}
		ownSums := map[int64]bool{}
		for _, sum := range leakSubsetSums(ownAmounts) {
			ownSums[sum] = true
		}
		for _, f := range leakSubsetSums(foreign) {
			for _, o := range leakSubsetSums(ownAmounts) {
				if sum := f + o; f > 0 && sum >= 100 && !ownSums[sum] {
					s.amounts[sum] = fmt.Sprintf("%s of theirs, or a sum with it (%d.%02d)", m.name, sum/100, sum%100)
				}
			}
		}
	}
	return s
}

// leakSubsetSums are the sums of every subset of amounts (zero amounts left out).
func leakSubsetSums(amounts []int64) []int64 {
	sums := []int64{0}
	for _, a := range amounts {
		if a == 0 {
			continue
		}
		for _, s := range slices.Clone(sums) {
			sums = append(sums, s+a)
		}
	}
	slices.Sort(sums)
	return slices.Compact(sums)
}

func leakCrawl(t *testing.T, routes []string, env ...string) {
	started := time.Now()
	portal := startExtraPortalProcess(t, env...)
	base, sim := portal.url, portal.simURL()
	if sim == "" {
		t.Fatal("the portal's log names no embedded simulator")
	}
	signIn := func(user, password string) *leakSide {
		page := signedInPageAt(t, base, user, password)
		return &leakSide{who: user, page: page, client: leakClientOf(t, user, page, base)}
	}
	lead := signIn(teamLeadUser, teamLeadPassword)
	rep := signIn(salesUser, salesPassword)
	clerk := signIn(backofficeUser, backofficePass)

	// The team lead's own: a draft and a generated contract.
	leadCustomer := createTestCustomerAt(t, lead.page, base, "Wjzt")
	lead.customers = append(lead.customers, leadCustomer)
	lead.quote(t, base, leadCustomer, "Lead draft", 0)
	lead.contract(t, base, lead.quote(t, base, leadCustomer, "Lead contract", 0))
	leakTotals(t, lead)
	// The team lead opens each of their own quotes and contracts as they stand now, as sales does
	// below: the crawl's own visits (concurrent, in any order) then change nothing of theirs
	// between the two crawls. Without it the lead's audit worklist once gained their own contract's
	// number after the first crawl (load 15-20), which the comparison reads as the other's rows.
	lead.openOwn(t)
	today := time.Now().UTC().Format("2006-01-02")
	leadPlan := leakPlan(routes, lead, today)
	leadBefore := lead.client.fetchAll(t, leadPlan.bare)

	// Sales' own: a draft, a declined, a signed and an archived contract (the stages the team
	// lead has none of).
	salesCustomer := createTestCustomerAt(t, rep.page, base, "Vqxs")
	rep.customers = append(rep.customers, salesCustomer)
	rep.quote(t, base, salesCustomer, "Sales draft", 1)
	declined := rep.contract(t, base, rep.quote(t, base, salesCustomer, "Sales declined", 1))
	signed := rep.contract(t, base, rep.quote(t, base, salesCustomer, "Sales signed", 2))
	archived := rep.contract(t, base, rep.quote(t, base, salesCustomer, "Sales archived", 1))
	leakSignature(t, rep.page, base, declined)
	leakAnswer(t, sim, declined.number, "DECLINED")
	leakSignature(t, rep.page, base, signed)
	leakAnswer(t, sim, signed.number, "SIGNED")
	leakPost(t, clerk.page, base+archived.path+"/archive", nil, "the back office archives "+archived.number)
	leakTotals(t, rep)
	// The back office opens sales' contracts (its reads put them in the index as they are now).
	for _, c := range rep.contracts {
		clerk.client.get(t.Context(), c.path, false)
	}
	// Sales opens each of their own quotes and contracts as they stand now (the back office's
	// reads changed them in the index since sales' own): what sales' pages show before the other's
	// rows exist is then what sales' own token read, not what a later re-read would add.
	rep.openOwn(t)
	repPlan := leakPlan(routes, rep, today)
	repBefore := rep.client.fetchAll(t, repPlan.bare)

	// The customer sales loses: a quote and a contract sales reads, then the back office gives
	// the customer to another owner (Marco Rossi, 1002) and sends the contract for signature (a
	// stage set after sales lost it); sales opens them again and is refused.
	lostCustomer := createTestCustomerAt(t, rep.page, base, "Vqxl")
	lostQuotePath, lostQuoteID := leakCreateQuote(t, rep.page, base, lostCustomer, "Sales lost", 1)
	lostQuote := &leakQuote{cpq: strconv.Itoa(lostCustomer.CPQID), customer: strconv.Itoa(lostCustomer.ID), id: lostQuoteID, path: lostQuotePath}
	lostSide := &leakSide{who: salesUser, page: rep.page, client: rep.client}
	lostContract := lostSide.contract(t, base, lostQuote)
	lostSide.quotes = []*leakQuote{lostQuote}
	leakTotals(t, lostSide)
	for _, p := range []string{lostContract.path, lostQuotePath, "/work/contracts", "/work/quotes", "/"} {
		if r := rep.client.get(t.Context(), p, false); r.status != 200 {
			t.Fatalf("sales reads %s before losing the customer: %d", p, r.status)
		}
	}
	leakPost(t, clerk.page, base+"/customers/"+strconv.Itoa(lostCustomer.ID)+"/owners", map[string]any{"ownerIds": "1002"}, "the back office gives the customer to another owner")
	leakSignature(t, clerk.page, base, lostContract)
	clerk.client.get(t.Context(), lostContract.path, false)
	for _, p := range []string{lostContract.path, lostQuotePath, "/customers/" + strconv.Itoa(lostCustomer.ID)} {
		if r := rep.client.get(t.Context(), p, false); r.status != 403 {
			t.Errorf("sales opens %s after losing its customer: %d, want the v2's 403", p, r.status)
		}
	}

	// Each opens one of the other's quotes and contracts by address (refused: it must be
	// forgotten for them at once); the other rows they never try (only others' reads put them
	// in the index: they must not be revealed). The back office reads every list.
	for _, pair := range []struct{ viewer, owner *leakSide }{{lead, rep}, {rep, lead}} {
		var paths []string
		for _, q := range pair.owner.quotes[:1] {
			paths = append(paths, q.path, q.path+"/documents", "/audits/"+q.id, "/palette/quotes/"+q.id, "/quotes/open?quoteId="+q.id)
		}
		for _, c := range pair.owner.contracts[:1] {
			paths = append(paths, c.path, "/contracts/lookup?q="+url.QueryEscape(c.number))
		}
		for _, c := range pair.owner.customers {
			paths = append(paths, "/customers/"+strconv.Itoa(c.ID))
		}
		for _, p := range paths {
			pair.viewer.client.get(t.Context(), p, false)
		}
	}
	for _, p := range []string{"/work/quotes?scope=all", "/work/contracts?scope=all", "/", "/audits/worklist?changed=1&from=" + today + "&to=" + today} {
		clerk.client.get(t.Context(), p, false)
	}
	t.Logf("data made in %s", time.Since(started).Round(time.Millisecond))

	// The crawl, as each of the two.
	leakCheck(t, routes, lead, leadPlan, leadBefore, leakForeign{
		customers: append(slices.Clone(rep.customers), lostCustomer), quotes: append(slices.Clone(rep.quotes), lostQuote),
		contracts: append(slices.Clone(rep.contracts), lostContract), stages: []string{"declined", "signed", "archived", "signature"},
		reasons: []string{leakDeclineReason},
	}, leakSecretsOf(rep, lead, []testCustomer{lostCustomer}, []*leakQuote{lostQuote}, []leakContract{lostContract}), today)
	// Sales: the team lead's rows, and all of the customer sales lost; its contract's new stage
	// (out for signature) is a stage none of sales' other rows has.
	leakCheck(t, routes, rep, repPlan, repBefore, leakForeign{
		customers: append(slices.Clone(lead.customers), lostCustomer), quotes: append(slices.Clone(lead.quotes), lostQuote),
		contracts: append(slices.Clone(lead.contracts), lostContract), stages: []string{"signature"},
	}, leakSecretsOf(lead, rep, []testCustomer{lostCustomer}, []*leakQuote{lostQuote}, []leakContract{lostContract}), today)
	t.Logf("made and crawled in %s", time.Since(started).Round(time.Millisecond))
}
