package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The customer page's confirmations are read when the person acts, not rendered with the page:
// owners changed and a profile deleted in another tab after the page was rendered show in the
// question (issue 33), and a profile already gone is refused with nothing sent.
func TestCustomerConfirmationsStateTheCustomerNow(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	created := p.postForm(t, user, "/customers", validCustomerForm(uniqueName("Confirm"), uniqueTaxID()), false)
	path := created.Header.Get("Location")
	if resp := p.postForm(t, user, path+"/owners/add", url.Values{"ownerId": {"1002"}}, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("add owner: %d %s", resp.StatusCode, resp.body)
	}
	if resp := p.postForm(t, user, path+"/profiles", url.Values{"profileType": {"BILLING"}, "contactName": {"Ada Lovelace"}, "email": {"ada@example.com"}}, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("add profile: %d %s", resp.StatusCode, resp.body)
	}
	page := parseHTML(t, p.get(t, user, path, nil).body)
	name := strings.TrimSpace(page.Find("main h1").First().Text())
	change := page.Find(`[data-testid="owner-change-form"]`)
	replace := parseHTML(t, p.get(t, user, path+"/owners/manage", htmx).body).Find(`[data-testid="owners-replace-form"]`)
	profileDelete := page.Find(`[data-testid="profile-row"] form`)
	for what, sel := range map[string]interface{ AttrOr(string, string) string }{"change": change, "replace": replace, "profile delete": profileDelete} {
		if sel.AttrOr("data-confirm-url", "") == "" || sel.AttrOr("hx-confirm", "") != "" || sel.AttrOr("data-confirm", "") != "" {
			t.Errorf("the %s form asks a question rendered with the page, not read when the person acts", what)
		}
	}
	ask := func(u string) confirmation {
		t.Helper()
		r := p.get(t, user, u, htmx)
		var answer confirmation
		if r.StatusCode != http.StatusOK || json.Unmarshal([]byte(r.body), &answer) != nil {
			t.Fatalf("confirmation %s: %d %s", u, r.StatusCode, r.body)
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("confirmation %s may be cached: %q", u, r.Header.Get("Cache-Control"))
		}
		return answer
	}
	changeURL := change.AttrOr("data-confirm-url", "") + "?" + url.Values{"currentOwnerId": {"1002"}, "newOwnerId": {"1004"}}.Encode()
	replaceURL := replace.AttrOr("data-confirm-url", "") + "?" + url.Values{"ownerIds": {"1004, 1005"}}.Encode()

	// As the page was rendered: 1002 owns the customer.
	if got := ask(changeURL); got.Refused || got.Unasked || !strings.Contains(got.Question, "1002") || !strings.Contains(got.Question, "1004") || !strings.Contains(got.Question, name) {
		t.Errorf("change confirmation %+v (customer %q)", got, name)
	}

	// Another tab adds 1003 and deletes the profile; the page is not rendered again.
	if resp := p.postForm(t, user, path+"/owners/add", url.Values{"ownerId": {"1003"}}, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("add owner in another tab: %d", resp.StatusCode)
	}
	got := ask(replaceURL)
	if got.Refused || got.Unasked || !strings.Contains(got.Question, "(1003)") || !strings.Contains(got.Question, "(1002)") ||
		!strings.Contains(got.Question, "1004, 1005") || !strings.Contains(got.Question, name) {
		t.Errorf("replace confirmation does not name the owners as they are now: %+v", got)
	}
	if resp := p.postForm(t, user, profileDelete.AttrOr("action", ""), url.Values{}, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("delete the profile in another tab: %d", resp.StatusCode)
	}
	if got := ask(profileDelete.AttrOr("data-confirm-url", "")); !got.Refused || !strings.Contains(got.Question, "no longer exists") {
		t.Errorf("profile confirmation after it was deleted elsewhere: %+v", got)
	}

	// Another tab replaces 1002: changing it is refused, naming the owners now.
	if resp := p.postForm(t, user, path+"/owners", url.Values{"ownerIds": {"1005"}}, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("replace owners in another tab: %d", resp.StatusCode)
	}
	if got := ask(changeURL); !got.Refused || !strings.Contains(got.Question, "no longer owns") || !strings.Contains(got.Question, "(1005)") {
		t.Errorf("change confirmation after 1002 lost the customer elsewhere: %+v", got)
	}

	// What was typed is refused by the change itself: nothing to ask, the form answers.
	for _, u := range []string{
		change.AttrOr("data-confirm-url", "") + "?currentOwnerId=1005&newOwnerId=abc",
		change.AttrOr("data-confirm-url", "") + "?currentOwnerId=1005&newOwnerId=1005",
		replace.AttrOr("data-confirm-url", "") + "?ownerIds=1004+1004",
	} {
		if got := ask(u); !got.Unasked || got.Question != "" {
			t.Errorf("%s: %+v, want unasked", u, got)
		}
	}
	// A malformed current owner (a hidden input) or profile id is a 400, sent nowhere.
	for _, u := range []string{path + "/owners/change/confirm?currentOwnerId=x&newOwnerId=1004", path + "/profiles/x/delete/confirm"} {
		if r := p.get(t, user, u, htmx); r.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", u, r.StatusCode)
		}
	}
}

// The questions are in the reader's language.
func TestCustomerConfirmationsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	created := p.postForm(t, user, "/customers", validCustomerForm(uniqueName("Conferma"), uniqueTaxID()), false)
	path := created.Header.Get("Location")
	if resp := p.postForm(t, user, path+"/owners/add", url.Values{"ownerId": {"1002"}}, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("add owner: %d", resp.StatusCode)
	}
	r := p.get(t, user, path+"/owners/confirm?ownerIds=1003", map[string]string{"HX-Request": "true", "Accept-Language": "it"})
	var answer confirmation
	if err := json.Unmarshal([]byte(r.body), &answer); err != nil || !strings.Contains(answer.Question, "Sostituire i responsabili") {
		t.Errorf("Italian confirmation: %d %s", r.StatusCode, r.body)
	}
}
