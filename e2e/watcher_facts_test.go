package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// watcherAnswerAt answers the contract's waiting request as its signer (as watcherAnswer) and
// returns the answer's time as the v2 API records it (signedAt or declinedAt).
func watcherAnswerAt(t *testing.T, sim, number, answer, reason string) time.Time {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"contractNumber": number, "answer": answer, "reason": reason})
	resp, err := http.Post(sim+"/_sim/signatures/answer", "application/json", bytes.NewReader(body))
	check(t, err, "answer for the signer")
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("answering %s for the signer of %s: %d %s", answer, number, resp.StatusCode, data)
	}
	var doc struct {
		SignedAt   time.Time `json:"signedAt"`
		DeclinedAt time.Time `json:"declinedAt"`
	}
	check(t, json.Unmarshal(data, &doc), "read the answer")
	at := doc.SignedAt
	if answer == "DECLINED" {
		at = doc.DeclinedAt
	}
	if at.IsZero() {
		t.Fatalf("the simulator's answer has no time: %s", data)
	}
	return at
}

// rowChangedAt is the last change a work list's row shows (its first <time>, to the second).
func rowChangedAt(t *testing.T, row playwright.Locator) time.Time {
	t.Helper()
	iso, err := row.Locator("time").First().GetAttribute("datetime")
	check(t, err, "the row's last change")
	at, err := time.Parse(time.RFC3339, iso)
	check(t, err, "parse the row's last change "+iso)
	return at
}

// TestWatcherFactsArchiveKeepsTheWinAndCreditsTheBackOffice (issue 39, "Facts, not sightings"):
// a rep sends two contracts and signs out; the signers sign one and decline the other. When the
// rep is back and the watcher has read them, the declined one's last change is the signer's time
// (not the read's), still credited to the rep who sent it, and its page gives the signer's reason.
// The team lead's "signed this month" and conversion count the signed one; the back office
// archives it with the batch archive; the team lead's figures stay as they were, and the last
// change of the archived contract names Bea Backoffice at the archive's time, in the contract list
// and in its CSV export.
func TestWatcherFactsArchiveKeepsTheWinAndCreditsTheBackOffice(t *testing.T) {
	p := startExtraPortalProcess(t, "PORTAL_WATCH_INTERVAL="+watcherInterval.String(),
		"PORTAL_FOLLOWUP_SIGNATURE_DAYS=0", "PORTAL_FOLLOWUP_DRAFT_DAYS=0")
	base, sim := p.url, p.simURL()
	if sim == "" {
		sim = signerAdminURL(t)
	}
	rep := signedInPageAt(t, base, salesUser, salesPassword)
	customer := createTestCustomerAt(t, rep, base, "Facts")
	won := watcherContractOut(t, rep, base, customer, "wendy.win@example.com", "Wendy Win")
	lost := watcherContractOut(t, rep, base, customer, "lou.lost@example.com", "Lou Lost")
	// The rep signs out: nobody holds a token that reads them until the rep is back, so the
	// answers are learnt well after the signers gave them.
	check(t, rep.GetByTestId("logout").Click(), "the rep signs out")
	check(t, suite.expect.Locator(rep.GetByTestId("logout")).ToHaveCount(0), "signed out")
	const reason = "Not this year, the budget is spent."
	signedAt := watcherAnswerAt(t, sim, won.number, "SIGNED", "")
	declinedAt := watcherAnswerAt(t, sim, lost.number, "DECLINED", reason)

	rep = signedInPageAt(t, base, salesUser, salesPassword)
	wonID, lostID := strings.TrimPrefix(won.path, "/contracts/"), strings.TrimPrefix(lost.path, "/contracts/")
	rowIn := func(page playwright.Page, id string) playwright.Locator {
		return page.Locator(`[data-testid="work-row"][data-id="` + id + `"]`)
	}
	reloadUntil(t, rep, base+"/work/contracts?stage=declined", watcherWithin, "the declined contract in the rep's declined contracts",
		func() bool { return visible(rowIn(rep, lostID)) })
	if got := rowChangedAt(t, rowIn(rep, lostID)); !got.Equal(declinedAt.Truncate(time.Second)) {
		t.Errorf("the declined contract's last change is %v, want the signer's %v", got, declinedAt)
	}
	check(t, suite.expect.Locator(rowIn(rep, lostID)).ToContainText("Sam Sales"), "credited to the rep who sent it")
	reloadUntil(t, rep, base+"/work/contracts?stage=signed", watcherWithin, "the signed contract in the rep's signed contracts",
		func() bool { return visible(rowIn(rep, wonID)) })
	if got := rowChangedAt(t, rowIn(rep, wonID)); !got.Equal(signedAt.Truncate(time.Second)) {
		t.Errorf("the signed contract's last change is %v, want the signer's %v", got, signedAt)
	}
	_, err := rep.Goto(base + lost.path)
	check(t, err, "open the declined contract")
	check(t, suite.expect.Locator(rep.GetByTestId("signature-decline-reason")).ToHaveText(reason), "the signer's reason")

	// The team lead's home: one signed this month, one signed of two generated.
	lead := signedInPageAt(t, base, teamLeadUser, teamLeadPassword)
	figures := func() []string {
		out := []string{}
		for _, id := range []string{"home-signed-count", "home-conversion-signed", "home-conversion-generated"} {
			text, err := lead.GetByTestId(id).First().TextContent()
			if err != nil {
				return nil
			}
			out = append(out, strings.TrimSpace(text))
		}
		return out
	}
	want := []string{"1", "1", "2"}
	reloadUntil(t, lead, base+"/", watcherWithin, "the team lead's home counts the signature", func() bool { return slices.Equal(figures(), want) })

	// The back office archives the signed contract with the batch archive.
	clerk := signedInPageAt(t, base, backofficeUser, backofficePass)
	batchOpenForm(t, clerk)
	batchCheck(t, clerk, []string{won.number})
	started := time.Now().Truncate(time.Second)
	check(t, clerk.GetByTestId("batch-start").Click(), "archive it")
	batchExpectCount(t, clerk, "batch-done", 1, "archived")
	ended := time.Now()

	// The team lead's figures are unchanged (the home re-reads the archived contract with the
	// lead's token and finds the win it was).
	reloadUntil(t, lead, base+"/", watcherWithin, "the team lead's home after the archive", func() bool { return slices.Equal(figures(), want) })

	// The list and the export name the back office at the archive's time.
	_, err = clerk.Goto(base + "/work/contracts?stage=archived")
	check(t, err, "the back office's archived contracts")
	archivedRow := rowIn(clerk, wonID)
	check(t, suite.expect.Locator(archivedRow).ToContainText("Bea Backoffice"), "the archive credited to the back office")
	check(t, suite.expect.Locator(archivedRow).Not().ToContainText("Sam Sales"), "not to the rep")
	archivedAt := rowChangedAt(t, archivedRow)
	if archivedAt.Before(started) || archivedAt.After(ended) {
		t.Errorf("the archive's last change %v is not the archive's time (between %v and %v)", archivedAt, started, ended)
	}
	resp, err := clerk.Request().Get(base + "/work/contracts/export?format=csv&stage=archived")
	check(t, err, "export the archived contracts")
	data, err := resp.Body()
	check(t, err, "read the export")
	rows := parseCSV(t, data)
	if len(rows) < 2 {
		t.Fatalf("export: %q", rows)
	}
	// The dates' column names their zone ("last change (UTC)").
	changedCol := slices.IndexFunc(rows[0], func(h string) bool { return strings.HasPrefix(h, "last change") })
	byCol := slices.Index(rows[0], "changed by")
	if changedCol < 0 || byCol < 0 {
		t.Fatalf("export header: %q", rows[0])
	}
	zone := time.UTC
	cookies, err := clerk.Context().Cookies()
	check(t, err, "the clerk's cookies")
	for _, c := range cookies {
		if c.Name == "portal_tz" {
			if loc, err := time.LoadLocation(c.Value); err == nil {
				zone = loc
			}
		}
	}
	found := false
	for _, r := range rows[1:] {
		if len(r) == 0 || r[0] != won.number {
			continue
		}
		found = true
		if r[byCol] != "Bea Backoffice" || r[changedCol] != archivedAt.In(zone).Format("2006-01-02 15:04:05") {
			t.Errorf("export: changed %q by %q, want %s by Bea Backoffice", r[changedCol], r[byCol], archivedAt.In(zone).Format("2006-01-02 15:04:05"))
		}
	}
	if !found {
		t.Fatalf("the archived contract %s is not in the export: %q", won.number, rows)
	}
}
