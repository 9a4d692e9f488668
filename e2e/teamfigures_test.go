package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/workindex"
)

// The team lead's figures by rep (issue 41, docs/home.md "Team figures").

// teamFiguresPortal is a portal whose follow-ups take every row at once (so the team lead's
// home has follow-ups to show), with its own simulator, or the external v2 API's signer control
// (E2E_V2_API_URL, bin/v2sim -admin); env adds settings.
func teamFiguresPortal(t *testing.T, env ...string) (base, sim string) {
	t.Helper()
	p := startExtraPortalProcess(t, append([]string{"PORTAL_FOLLOWUP_SIGNATURE_DAYS=0", "PORTAL_FOLLOWUP_DRAFT_DAYS=0"}, env...)...)
	if sim := p.simURL(); sim != "" {
		return p.url, sim
	}
	if os.Getenv("E2E_V2_API_URL") != "" {
		return p.url, signerAdminURL(t)
	}
	t.Fatal("the portal's log names no embedded simulator")
	return "", ""
}

// teamRowCount is the number shown in a figure's cell of a rep's row.
func teamFigure(t *testing.T, row playwright.Locator, id string) (int, string) {
	t.Helper()
	a := row.GetByTestId(id)
	text, err := a.TextContent()
	check(t, err, "read "+id)
	n, err := strconv.Atoi(strings.TrimSpace(text))
	check(t, err, "the figure "+id+" is a count")
	href, err := a.GetAttribute("href")
	check(t, err, "the link of "+id)
	return n, href
}

// listRows opens a list and counts its rows (a figure's list fits one page here).
func listRows(t *testing.T, page playwright.Page, href string) int {
	t.Helper()
	visit(t, page, href, `[data-testid="work-filters"]`)
	n, err := page.Locator(`[data-testid="work-row"]`).Count()
	check(t, err, "count the rows of "+href)
	return n
}

// teamDeclineReason is what Sam's signer says, markup and quotes included: shown as text.
const teamDeclineReason = `Too <b>pricey</b> & "late"`

// TestTeamFiguresTableNamesEveryRepAndEachFigureOpensItsList: sales has a draft, a declined and
// a signed contract, the team lead a draft of their own; the lead's table names both reps, each
// figure (open, signed, declined, the decline's reason) equals the rows of the list it opens and
// that list names the rep; the median days to signature (sent and signed the same day: 0) opens
// the signed list; the reason is shown as the signer wrote it, escaped; the rep picker shows Sam alone with his lists, and the signed value by month counts his
// signed contract in this month, as its list does.
func TestTeamFiguresTableNamesEveryRepAndEachFigureOpensItsList(t *testing.T) {
	base, sim := teamFiguresPortal(t)
	rep := &leakSide{who: salesUser, page: signedInPageAt(t, base, salesUser, salesPassword)}
	salesCustomer := createTestCustomerAt(t, rep.page, base, "Teamfig")
	rep.quote(t, base, salesCustomer, "Team draft", 1)
	declined := rep.contract(t, base, rep.quote(t, base, salesCustomer, "Team declined", 1))
	signed := rep.contract(t, base, rep.quote(t, base, salesCustomer, "Team signed", 2))
	leakSignature(t, rep.page, base, declined)
	saved := suite.simURL
	suite.simURL = sim // signerAnswers asks the suite's simulator; this portal has its own
	signerAnswers(t, declined.number, "DECLINED", teamDeclineReason)
	suite.simURL = saved
	leakSignature(t, rep.page, base, signed)
	leakAnswer(t, sim, signed.number, "SIGNED")
	for _, c := range []leakContract{declined, signed} {
		visit(t, rep.page, c.path, `[data-testid="contract-details"]`) // the index learns the answers
	}

	lead := signedInPageAt(t, base, teamLeadUser, teamLeadPassword)
	leadCustomer := createTestCustomerAt(t, lead, base, "Leadfig")
	createTestQuoteAt(t, lead, base, leadCustomer, "Lead draft")
	visit(t, lead, "/", `[data-testid="home-team-table"]`)

	rows := lead.GetByTestId("home-team-row")
	samRow := rows.Filter(playwright.LocatorFilterOptions{HasText: "Sam Sales"})
	leadRow := rows.Filter(playwright.LocatorFilterOptions{HasText: "Giulia Bianchi"})
	check(t, suite.expect.Locator(rows).ToHaveCount(2), "a row for each rep")
	check(t, suite.expect.Locator(samRow.GetByTestId("home-team-signed")).ToHaveText("1"), "Sam's signed contract")
	check(t, suite.expect.Locator(samRow.GetByTestId("home-team-declined")).ToHaveText("1"), "Sam's declined contract")
	check(t, suite.expect.Locator(samRow.GetByTestId("home-team-rate")).ToContainText("50"), "Sam's win rate: 1 of 2")
	check(t, suite.expect.Locator(leadRow.GetByTestId("home-team-open")).ToHaveText("1"), "the lead's own draft")
	check(t, suite.expect.Locator(samRow.GetByTestId("home-team-median")).ToHaveText("0"), "Sam's median days to signature: sent and signed today")
	check(t, suite.expect.Locator(leadRow.GetByTestId("home-team-median")).ToHaveText("–"), "no signature of the lead's: no median")
	reason := samRow.GetByTestId("home-team-reason")
	check(t, suite.expect.Locator(reason).ToHaveCount(1), "Sam's one decline reason")
	check(t, suite.expect.Locator(reason.GetByTestId("home-team-reason-text")).ToHaveText(teamDeclineReason), "the signer's reason as written")
	if n, err := reason.Locator("b").Count(); err != nil || n != 0 {
		t.Errorf("the reason's markup became HTML (%d elements, %v)", n, err)
	}
	medianHref, err := samRow.GetByTestId("home-team-median").GetAttribute("href")
	check(t, err, "the median's list")
	if signedHref, _ := samRow.GetByTestId("home-team-signed").GetAttribute("href"); medianHref != signedHref {
		t.Errorf("the median opens %q, not the signed list %q it is taken over", medianHref, signedHref)
	}
	checkAxe(t, lead, axeSource(t), "the team lead's home with the figures by rep")

	type figure struct {
		rep, id, href string
		n             int
	}
	var figures []figure
	for _, name := range []string{"Sam Sales", "Giulia Bianchi"} {
		row := rows.Filter(playwright.LocatorFilterOptions{HasText: name})
		ids := []string{"home-team-open", "home-team-signed", "home-team-declined"}
		if name == "Sam Sales" {
			ids = append(ids, "home-team-reason-count")
		}
		for _, id := range ids {
			n, href := teamFigure(t, row, id)
			figures = append(figures, figure{name, id, href, n})
		}
	}
	for _, f := range figures {
		if got := listRows(t, lead, f.href); got != f.n {
			t.Errorf("%s's %s is %d, its list %s shows %d rows", f.rep, f.id, f.n, f.href, got)
		}
		check(t, suite.expect.Locator(lead.GetByTestId("work-narrowing")).ToContainText(f.rep), "the list of "+f.id+" names "+f.rep)
		if f.id == "home-team-reason-count" {
			check(t, suite.expect.Locator(lead.GetByTestId("work-narrowing")).ToContainText(teamDeclineReason), "the reason's list names it")
			check(t, suite.expect.Locator(lead.GetByTestId("work-decline-reason")).ToContainText(teamDeclineReason), "the reason on its row")
		}
	}

	// The rep picker: Sam alone, his lists, and his signed value by month.
	visit(t, lead, "/", `[data-testid="home-rep-picker"]`)
	_, err = lead.GetByTestId("home-rep-select").SelectOption(playwright.SelectOptionValues{Labels: playwright.StringSlice("Sam Sales")})
	check(t, err, "choose Sam in the picker")
	check(t, lead.GetByTestId("home-rep-submit").Click(), "show Sam's figures")
	check(t, suite.expect.Locator(lead.GetByTestId("home-team-row")).ToHaveCount(1), "only Sam's row")
	check(t, suite.expect.Locator(lead.GetByTestId("home-team-rep")).ToHaveText("Sam Sales"), "named")
	check(t, suite.expect.Locator(lead.GetByTestId("home-rep-list").First()).ToBeVisible(), "Sam's lists")
	monthLinks := lead.GetByTestId("home-signed-months-table").GetByTestId("home-signed-months-count")
	check(t, suite.expect.Locator(monthLinks).ToHaveCount(12), "twelve months")
	thisMonth := monthLinks.Last()
	check(t, suite.expect.Locator(thisMonth).ToHaveText("1"), "Sam's contract signed this month")
	href, err := thisMonth.GetAttribute("href")
	check(t, err, "the month's list")
	if !strings.Contains(href, "by="+workindex.PersonKey("demo-sales")) {
		t.Errorf("the month's list %q is not Sam's", href)
	}
	if got := listRows(t, lead, href); got != 1 {
		t.Errorf("this month's signed list shows %d rows, the figure 1", got)
	}
}

// TestTeamFiguresPhoneFirstFollowUpCountOnTheFirstScreen: on a 390x844 phone the team lead's
// home keeps its first follow-up count on the first screen, above the figures by rep.
func TestTeamFiguresPhoneFirstFollowUpCountOnTheFirstScreen(t *testing.T) {
	base, _ := teamFiguresPortal(t)
	page := newPageWith(t, pageOptions{base: base, width: 390, height: 844, touch: true})
	_, err := page.Goto("/")
	check(t, err, "open the portal")
	signInAt(t, page, base, teamLeadUser, teamLeadPassword)
	customer := createTestCustomerAt(t, page, base, "Phonefig")
	createTestQuoteAt(t, page, base, customer, "Phone lead draft")
	visit(t, page, "/", `[data-testid="home-team-table"]`)
	first := page.GetByTestId("home-followups").Locator(".home-count").First()
	check(t, suite.expect.Locator(first).ToBeVisible(), "a follow-up count")
	// Measured in one go from the top of the page (document positions), so nothing scrolls or
	// moves between the two.
	raw, err := page.Evaluate(`() => {
		window.scrollTo(0, 0);
		const count = document.querySelector('[data-testid="home-followups"] .home-count').getBoundingClientRect();
		const team = document.querySelector('[data-testid="home-team-figures"]').getBoundingClientRect();
		const picker = document.querySelector('[data-testid="home-rep-select"]').getBoundingClientRect();
		return [count.bottom + window.scrollY, team.top + window.scrollY, picker.right, window.innerWidth];
	}`)
	check(t, err, "measure the home")
	at := raw.([]any)
	num := func(i int) float64 {
		switch v := at[i].(type) {
		case float64:
			return v
		case int:
			return float64(v)
		}
		t.Fatalf("measure %d: %T", i, at[i])
		return 0
	}
	countBottom, teamTop, pickerRight, width := num(0), num(1), num(2), num(3)
	if countBottom > 844 {
		t.Errorf("the first follow-up count ends at %.0f px, below the first screen (844 px)", countBottom)
	}
	if teamTop < countBottom {
		t.Errorf("the figures by rep (%.0f px) come before the first follow-up count (%.0f px)", teamTop, countBottom)
	}
	if pickerRight > width {
		t.Errorf("the rep picker ends at %.0f px, past the screen's %.0f px", pickerRight, width)
	}
	phoneCheckTargets(t, page, "the team lead's home")
}

// TestTeamFiguresRestrictedToOwnersShowNothingOfARefusedRep: with the simulator refusing every
// customer a person does not own, the team lead's home (table, picker, months, and the home
// asked for Sam by his key) and the list by Sam show no figure, name or row of Sam's, whose
// rows the lead's token was refused (issue 38's rule).
func TestTeamFiguresRestrictedToOwnersShowNothingOfARefusedRep(t *testing.T) {
	base, _ := teamFiguresPortal(t, restrictToOwners)
	rep := &leakSide{who: salesUser, page: signedInPageAt(t, base, salesUser, salesPassword)}
	salesCustomer := createTestCustomerAt(t, rep.page, base, "Refusedfig")
	rep.quote(t, base, salesCustomer, "Refused draft", 1)
	rep.contract(t, base, rep.quote(t, base, salesCustomer, "Refused contract", 1))

	lead := signedInPageAt(t, base, teamLeadUser, teamLeadPassword)
	leadCustomer := createTestCustomerAt(t, lead, base, "Ownfig")
	createTestQuoteAt(t, lead, base, leadCustomer, "Own draft")
	samKey := workindex.PersonKey("demo-sales")
	for _, path := range []string{"/", "/", "/?rep=" + samKey} { // the second load after the re-reads' refusals
		visit(t, lead, path, `[data-testid="home-team-table"]`)
		check(t, suite.expect.Locator(lead.GetByTestId("home-team-row")).ToHaveCount(1), path+": the lead's own row only")
		check(t, suite.expect.Locator(lead.GetByTestId("home-team-rep")).ToHaveText("Giulia Bianchi"), path+": named")
		main, err := lead.Locator("main").InnerHTML()
		check(t, err, "read the home")
		for _, secret := range []string{"Sam Sales", salesCustomer.Name, samKey} {
			if strings.Contains(main, secret) {
				t.Errorf("%s shows %q of a rep whose rows the lead's token was refused", path, secret)
			}
		}
	}
	check(t, suite.expect.Locator(lead.GetByTestId("home-rep-problem")).ToBeVisible(), "asked for Sam: nothing of his, said so")
	if n := listRows(t, lead, "/work/quotes?scope=all&by="+samKey); n != 0 {
		t.Errorf("the list by Sam shows %d rows", n)
	}
	check(t, suite.expect.Locator(lead.GetByTestId("work-narrowing")).Not().ToContainText("Sam"), "the list does not name Sam")
}
