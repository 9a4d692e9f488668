package handlers

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/v2sim"
)

// TestHandoverJourney: the owner's customers are listed, bad choices are refused with a message,
// the preview changes nothing, and the started handover changes every customer's owner once
// (one owner change call each), shows each line with a link, and its result as CSV; another
// user sees none of it. The customer pages and the list show the new owner afterwards.
func TestHandoverJourney(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "backoffice", "backoffice-demo")
	// Three customers of owner 1009 (one shared with 1002), none of 1010 yet; 1010 is named in the
	// list by a fourth customer, so it can be chosen as the new owner.
	var ids []string
	for i, owners := range []string{"1009", "1009, 1002", "1009", "1010"} {
		created := p.postForm(t, user, "/customers", validCustomerForm(uniqueName("Handover"), uniqueTaxID()), false)
		path := created.Header.Get("Location")
		if r := p.postForm(t, user, path+"/owners", url.Values{"ownerIds": {owners}}, false); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("owners of customer %d: %d", i, r.StatusCode)
		}
		if i < 3 {
			ids = append(ids, strings.TrimPrefix(path, "/customers/"))
		}
	}
	ownerChanges := func() int {
		n := 0
		for _, r := range simCalls(p.sim, http.MethodPut, "/v2/customer/") {
			if strings.HasSuffix(r.EscapedPath, "/owner/change") && r.Status == http.StatusOK {
				n++
			}
		}
		return n
	}
	ownerIDs := func(id string) []string {
		doc := parseHTML(t, p.get(t, user, "/customers/"+id, nil).body)
		return doc.Find(`[data-testid="owner"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-owner-id", "") })
	}

	page := p.get(t, user, "/customers/handover?from=1009", nil)
	doc := parseHTML(t, page.body)
	listed := doc.Find(`[data-testid="handover-customer"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-customer-id", "") })
	for _, id := range ids {
		if !slices.Contains(listed, id) {
			t.Fatalf("customer %s of owner 1009 not listed: %v", id, listed)
		}
	}
	if doc.Find(`#handover-to option[value="1010"]`).Length() != 1 || doc.Find(`#handover-to option[value="1009"]`).Length() != 0 {
		t.Fatal("the new owner's choices should name 1010 and not the current owner")
	}

	for _, bad := range []url.Values{
		{"from": {"1009"}, "to": {"1009"}},
		{"from": {"1009"}, "to": {""}},
		{"from": {"1009"}, "to": {"x1"}},
		{"from": {"4242"}, "to": {"1010"}},
		{"from": {"'; drop"}, "to": {"1010"}},
	} {
		r := p.postForm(t, user, "/customers/handover", bad, false)
		if r.StatusCode != http.StatusUnprocessableEntity || parseHTML(t, r.body).Find(`[data-testid="error-summary"]`).Length() != 1 {
			t.Errorf("%v: %d, want 422 with a message", bad, r.StatusCode)
		}
	}
	if r := p.get(t, user, "/customers/handover?from=abc", nil); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a malformed owner: %d", r.StatusCode)
	}

	posted := p.postForm(t, user, "/customers/handover", url.Values{"from": {"1009"}, "to": {"1010"}}, false)
	jobPath := posted.Header.Get("Location")
	if posted.StatusCode != http.StatusSeeOther || !strings.HasPrefix(jobPath, "/customers/handover/") {
		t.Fatalf("preview: %d to %q", posted.StatusCode, jobPath)
	}
	preview := parseHTML(t, p.get(t, user, jobPath, nil).body)
	if n := preview.Find(`[data-testid="handover-row"]`).Length(); n != len(listed) {
		t.Fatalf("preview lists %d lines, want %d", n, len(listed))
	}
	if href := preview.Find(`[data-testid="handover-row"] a`).First().AttrOr("href", ""); !strings.HasPrefix(href, "/customers/") {
		t.Errorf("a line links to %q", href)
	}
	if n := ownerChanges(); n != 0 {
		t.Fatalf("the preview sent %d owner changes", n)
	}

	other := p.login(t, "clerk", "clerk-demo") // another clerk: a handover is its owner's only
	for _, r := range []response{p.get(t, other, jobPath, nil), p.get(t, other, jobPath+"/result.csv", nil), p.postForm(t, other, jobPath+"/start", url.Values{}, false)} {
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s by someone else: %d, want 404", r.Request.Method, r.Request.URL.Path, r.StatusCode)
		}
	}
	if r := p.get(t, user, "/customers/handover/nope", nil); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a malformed handover id: %d", r.StatusCode)
	}

	if r := p.postForm(t, user, jobPath+"/start", url.Values{}, false); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", r.StatusCode)
	}
	var progress *goquery.Document
	for deadline := time.Now().Add(15 * time.Second); ; {
		progress = parseHTML(t, p.get(t, user, jobPath+"/progress", map[string]string{"HX-Request": "true"}).body)
		if progress.Find(`[data-testid="handover-progress"]`).AttrOr("data-active", "") == "false" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the handover did not finish")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if done := progress.Find(`[data-testid="handover-done"]`).Text(); done != strconv.Itoa(len(listed)) {
		t.Fatalf("done %s of %d", done, len(listed))
	}
	// The simulator records a call after answering it: the last may land just after the end.
	for deadline := time.Now().Add(2 * time.Second); ownerChanges() < len(listed) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := ownerChanges(); n != len(listed) {
		t.Errorf("%d owner change calls for %d customers", n, len(listed))
	}
	for _, id := range ids {
		if got := ownerIDs(id); !slices.Contains(got, "1010") || slices.Contains(got, "1009") {
			t.Errorf("customer %s owners %v after the handover", id, got)
		}
	}
	if got := ownerIDs(ids[1]); !slices.Contains(got, "1002") {
		t.Errorf("the other owner of customer %s was lost: %v", ids[1], got)
	}
	// The list (the user's cached copy) shows the new owner at once.
	list := parseHTML(t, p.get(t, user, "/customers/handover?from=1009", nil).body)
	if n := list.Find(`[data-testid="handover-customer"]`).Length(); n != 0 {
		t.Errorf("owner 1009 still owns %d customers", n)
	}

	res := p.get(t, user, jobPath+"/result.csv", nil)
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(res.body, "\ufeff"))).ReadAll()
	if err != nil || len(rows) != len(listed)+1 {
		t.Fatalf("result CSV: %v, %d rows", err, len(rows))
	}
	if rows[1][2] != "owner changed" {
		t.Errorf("CSV line: %v", rows[1])
	}
}

// TestHandoverRetryChecksBeforeResending: two owner changes fail on the v2 side; "retry" runs only
// those, each after reading the customer back (the lines may have been sent), and every customer
// ends with one successful change. A customer the new owner owns already loses the old owner
// (its owners set without them), with no owner change.
func TestHandoverRetryChecksBeforeResending(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "backoffice", "backoffice-demo")
	ids := map[string]string{} // id → owners set
	for _, owners := range []string{"1008", "1008", "1008", "1008, 1007", "1007"} {
		created := p.postForm(t, user, "/customers", validCustomerForm(uniqueName("Retry"), uniqueTaxID()), false)
		path := created.Header.Get("Location")
		if r := p.postForm(t, user, path+"/owners", url.Values{"ownerIds": {owners}}, false); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("owners: %d", r.StatusCode)
		}
		ids[strings.TrimPrefix(path, "/customers/")] = owners
	}
	// Seeded customers may be 1008's too: the handover takes what the page lists.
	page := parseHTML(t, p.get(t, user, "/customers/handover?from=1008", nil).body)
	listed := page.Find(`[data-testid="handover-customer"]`).Length()
	posted := p.postForm(t, user, "/customers/handover", url.Values{"from": {"1008"}, "to": {"1007"}}, false)
	jobPath := posted.Header.Get("Location")
	if posted.StatusCode != http.StatusSeeOther {
		t.Fatalf("preview: %d", posted.StatusCode)
	}
	preview := parseHTML(t, p.get(t, user, jobPath, nil).body)
	var both string
	for id, owners := range ids {
		if owners == "1008, 1007" {
			both = id
		}
	}
	if msg := preview.Find(`[data-testid="handover-row"][data-customer-id="` + both + `"] [data-testid="handover-row-message"]`).Text(); !strings.Contains(msg, "already owns this customer too: the current owner will be removed") {
		t.Fatalf("the customer the new owner owns already: %q", msg)
	}
	leftOut := preview.Find(`[data-testid="handover-row"]:has(.badge--warning)`).Length()

	ownersSetBefore := ownerListsSet(p)
	p.sim.SetFault("customers.owner.change", v2sim.Fault{Status: http.StatusInternalServerError, Times: 2})
	if r := p.postForm(t, user, jobPath+"/start", url.Values{}, false); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", r.StatusCode)
	}
	progress := awaitHandoverEnd(t, p, user, jobPath)
	if failed := progress.Find(`[data-testid="handover-failed"]`).Text(); failed != "2" {
		t.Fatalf("failed %s, want 2", failed)
	}
	if progress.Find(`[data-testid="handover-retry"]`).Length() != 1 {
		t.Fatal("no retry for the failed lines")
	}
	getsBefore := len(simCalls(p.sim, http.MethodGet, "/v2/customer/"))
	if r := p.postForm(t, user, jobPath+"/retry", url.Values{}, false); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("retry: %d", r.StatusCode)
	}
	progress = awaitHandoverEnd(t, p, user, jobPath)
	if done, failed := progress.Find(`[data-testid="handover-done"]`).Text(), progress.Find(`[data-testid="handover-failed"]`).Text(); done != strconv.Itoa(listed-leftOut) || failed != "0" {
		t.Fatalf("after the retry: done %s failed %s, want %d and 0", done, failed, listed-leftOut)
	}
	if reads := len(simCalls(p.sim, http.MethodGet, "/v2/customer/")) - getsBefore; reads < 2 {
		t.Errorf("the retried lines were sent again after %d customer reads, want a read each", reads)
	}
	ok := map[string]int{}
	for _, r := range simCalls(p.sim, http.MethodPut, "/v2/customer/") {
		if strings.HasSuffix(r.EscapedPath, "/owner/change") && r.Status == http.StatusOK {
			ok[strings.Split(r.EscapedPath, "/")[3]]++
		}
	}
	released := ownerListsSet(p) // the test's own setting of the owners above counted off
	for id, n := range ownersSetBefore {
		released[id] -= n
	}
	for id, owners := range ids {
		wantChanges, wantReleases := 0, 0
		switch owners {
		case "1008":
			wantChanges = 1
		case "1008, 1007":
			wantReleases = 1
		}
		if ok[id] != wantChanges || released[id] != wantReleases {
			t.Errorf("customer %s (owners %s): %d owner changes and %d owner lists set, want %d and %d", id, owners, ok[id], released[id], wantChanges, wantReleases)
		}
	}
	if row := progress.Find(`[data-testid="handover-row"][data-customer-id="` + both + `"]`); !strings.Contains(row.Text(), "the old owner was removed") {
		t.Errorf("the released customer's line: %q", row.Text())
	}
	owners := parseHTML(t, p.get(t, user, "/customers/"+both, nil).body).Find(`[data-testid="owner"]`).
		Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-owner-id", "") })
	if !slices.Equal(owners, []string{"1007"}) {
		t.Errorf("the customer 1007 owned already is owned by %v, want only 1007", owners)
	}
}

// ownerListsSet counts, by customer id, the answered PUT /v2/customer/{id}/owners calls.
func ownerListsSet(p *testPortal) map[string]int {
	n := map[string]int{}
	for _, r := range simCalls(p.sim, http.MethodPut, "/v2/customer/") {
		if strings.HasSuffix(r.EscapedPath, "/owners") && r.Status == http.StatusOK {
			n[strings.Split(r.EscapedPath, "/")[3]]++
		}
	}
	return n
}

// awaitHandoverEnd polls the progress region until the handover is no longer active.
func awaitHandoverEnd(t *testing.T, p *testPortal, user *http.Client, jobPath string) *goquery.Document {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		doc := parseHTML(t, p.get(t, user, jobPath+"/progress", map[string]string{"HX-Request": "true"}).body)
		if doc.Find(`[data-testid="handover-progress"]`).AttrOr("data-active", "") == "false" {
			return doc
		}
		if time.Now().After(deadline) {
			t.Fatal("the handover did not end")
		}
	}
}
