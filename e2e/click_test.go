package e2e

import (
	"regexp"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// A click that always counts (issue 26): a colleague's change announced by the live-notice poll
// arrives exactly while the person presses "Remove the signature request". The poll is held by the
// test and answered between the press and the release, so the condition is forced, not timed.

// clickPollHeld is how long the test waits for the page's next live poll (it polls every few
// seconds while visible); a bound on a wait, not a sleep.
const clickPollHeld = 20 * time.Second

// clickFakeNotice is a live notice as the portal renders it (contracts.LiveNotice).
const clickFakeNotice = `<div class="live-notice" data-testid="live-notice">` +
	`<span data-testid="live-notice-text">This contract was changed by a colleague <time data-ago="1">1 s ago</time>.</span></div>`

func TestContractClickUnderLiveNotice(t *testing.T) {
	page := newPage(t)
	// The page's clock runs as usual until the test moves it on (the notice's "… ago").
	check(t, page.Clock().Install(), "control the page's clock")
	login(t, page, salesUser, salesPassword)
	docsAcceptDialogs(page)
	_, quotePath := docsCreateQuote(t, page, "Click")
	region := docsOpenDocuments(t, page, quotePath)
	check(t, region.Locator(`[data-testid="generate-contract"]`).Click(), "click Generate contract")
	check(t, page.Locator(`[data-testid="contract-link"]`).Click(), "open the contract")
	check(t, suite.expect.Locator(page.GetByTestId("signature-form")).ToBeVisible(), "the contract page offers a signature request")

	sig := page.GetByTestId("signature-section")
	check(t, sig.GetByTestId("signature-email").Fill("click@example.com"), "fill the e-mail")
	check(t, sig.GetByTestId("signature-signer").Fill("Click Signer"), "fill the name")
	check(t, sig.GetByTestId("signature-send").Click(), "send the signature request")
	remove := page.GetByTestId("signature-remove")
	check(t, suite.expect.Locator(remove).ToBeVisible(), "the request can be removed")

	// From now on the live polls are held: the test answers the next one itself.
	polls := make(chan playwright.Route, 1)
	check(t, page.Route(regexp.MustCompile(`/contracts/\d+/changes`), func(r playwright.Route) {
		select {
		case polls <- r:
		default:
			_ = r.Continue()
		}
	}), "hold the live polls")

	check(t, remove.ScrollIntoViewIfNeeded(), "scroll to the remove button")
	_, err := page.Evaluate(`() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))`)
	check(t, err, "let the page draw")
	box, err := remove.BoundingBox()
	check(t, err, "where the remove button is")
	details := page.GetByTestId("contract-details")
	detailsBefore, err := details.BoundingBox()
	check(t, err, "where the contract's details are")

	var held playwright.Route
	select {
	case held = <-polls:
	case <-time.After(clickPollHeld):
		t.Fatal("the contract page sent no live poll")
	}
	mouse := page.Mouse()
	check(t, mouse.Move(box.X+box.Width/2, box.Y+box.Height/2), "point at Remove the signature request")
	check(t, mouse.Down(), "press")
	check(t, held.Fulfill(playwright.RouteFulfillOptions{
		Status:  playwright.Int(200),
		Headers: map[string]string{"ETag": `"e2e-colleague"`, "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"},
		Body:    clickFakeNotice,
	}), "a colleague's change arrives under the press")
	check(t, suite.expect.Locator(page.Locator(`[data-live-waiting]`)).ToHaveCount(1), "the notice waits for the press to end")
	check(t, suite.expect.Locator(page.GetByTestId("live-notice")).ToHaveCount(0), "nothing moves under the press")
	check(t, mouse.Up(), "release")

	check(t, suite.expect.Locator(page.GetByTestId("signature-form")).ToBeVisible(), "the click counted: the form is offered again")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="signature-request"][data-status="REMOVED"]`)).ToHaveCount(1), "the request is removed")
	notice := page.GetByTestId("live-notice")
	check(t, suite.expect.Locator(notice).ToBeVisible(), "the colleague's change is shown after the click")
	detailsAfter, err := details.BoundingBox()
	check(t, err, "where the contract's details are now")
	if detailsAfter.Y != detailsBefore.Y {
		t.Errorf("the notice moved the page: the details went from y=%v to y=%v", detailsBefore.Y, detailsAfter.Y)
	}
	check(t, page.Unroute(regexp.MustCompile(`/contracts/\d+/changes`)), "stop holding the polls")

	// Its "… ago" follows the clock.
	check(t, page.Clock().FastForward("01:05"), "a minute goes by")
	check(t, suite.expect.Locator(notice.Locator("time")).ToHaveText("1 min ago"), "the notice says how long ago, as time goes by")

	// The notice stays in sight wherever the person scrolls.
	_, err = page.Evaluate(`() => window.scrollTo(0, document.documentElement.scrollHeight)`)
	check(t, err, "scroll to the bottom")
	check(t, suite.expect.Locator(notice).ToBeInViewport(), "the notice is visible at the bottom of the page")
	_, err = page.Evaluate(`() => window.scrollTo(0, 0)`)
	check(t, err, "scroll to the top")
	check(t, suite.expect.Locator(notice).ToBeInViewport(), "and at the top")
}
