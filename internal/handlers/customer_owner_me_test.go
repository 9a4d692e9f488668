package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// A customer a rep creates is theirs: the portal knows their owner id from their e-mail among the
// owners of their customer list and adds it (issue 41); a customer they do not own offers "Make me
// an owner", which makes them one; a person whose owner id the portal does not know is offered
// nothing.
func TestACustomerARepCreatesIsTheirs(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	// The rep (owner 1010 in the simulator's directory) owns customer 1: their customer list
	// names them as an owner, with their e-mail.
	clerk := p.login(t, "backoffice", "backoffice-demo")
	if r := p.postForm(t, clerk, "/customers/1/owners/add", map[string][]string{"ownerId": {"1010"}}, true); r.StatusCode != http.StatusOK {
		t.Fatalf("make the rep an owner of customer 1: %d", r.StatusCode)
	}
	rep := p.login(t, "sales", "sales-demo")
	if r := p.get(t, rep, "/customers", nil); r.StatusCode != http.StatusOK {
		t.Fatalf("customer list: %d", r.StatusCode)
	}
	resp := p.postForm(t, rep, "/customers", validCustomerForm(uniqueName("Mine"), uniqueTaxID()), true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create: %d %.300s", resp.StatusCode, resp.body)
	}
	doc := parseHTML(t, resp.body)
	if got := doc.Find(`[data-testid="owner"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-owner-id", "") }); len(got) != 1 || got[0] != "1010" {
		t.Fatalf("the new customer's owners: %v, want Sam Sales (1010)", got)
	}
	if doc.Find(`[data-testid="owner-add-me"]`).Length() != 0 {
		t.Error("an owner is offered to become one")
	}
	href := resp.Header.Get("HX-Push-Url")

	// The back office creates one: it has no owner, and the rep may take it.
	p.get(t, clerk, "/customers", nil)
	resp = p.postForm(t, clerk, "/customers", validCustomerForm(uniqueName("Nobody's"), uniqueTaxID()), true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create by the back office: %d", resp.StatusCode)
	}
	doc = parseHTML(t, resp.body)
	if doc.Find(`[data-testid="owner"]`).Length() != 0 || doc.Find(`[data-testid="owner-add-me"]`).Length() != 0 {
		t.Error("the back office (no owner) became an owner or is offered it")
	}
	orphan := resp.Header.Get("HX-Push-Url")
	page := parseHTML(t, p.get(t, rep, orphan, nil).body)
	form := page.Find(`[data-testid="owner-add-me-form"]`)
	if form.Length() != 1 || form.Find(`input[name="ownerId"]`).AttrOr("value", "") != "1010" {
		t.Fatalf("the rep is not offered the customer without owners: %d forms", form.Length())
	}
	taken := p.postForm(t, rep, form.AttrOr("action", ""), map[string][]string{"ownerId": {"1010"}}, true)
	if taken.StatusCode != http.StatusOK || !strings.Contains(taken.body, `data-owner-id="1010"`) {
		t.Fatalf("make me an owner: %d %.300s", taken.StatusCode, taken.body)
	}
	if mine := parseHTML(t, p.get(t, rep, href, nil).body); mine.Find(`[data-testid="owner-add-me"]`).Length() != 0 {
		t.Error("the rep's own customer offers to make them an owner")
	}
}
