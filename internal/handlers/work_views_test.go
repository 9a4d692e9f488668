package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// saveViewForm posts the save form of a list as htmx does.
func saveViewForm(t *testing.T, p *testPortal, client *http.Client, form url.Values, headers map[string]string) response {
	t.Helper()
	h := map[string]string{"HX-Request": "true", "HX-Target": "work-tools", "Origin": p.URL, "Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range headers {
		h[k] = v
	}
	return p.do(t, client, http.MethodPost, "/work/views", strings.NewReader(form.Encode()), h)
}

// TestSavedViewSaveNormalisesAndListsOwnViews: the saved query is the list's own parser's
// normal form (unknown parameters, the page and the cursor dropped; stages sorted); the view is
// on the list (marked current when its filters are shown), on /work/views and in the palette, and
// only for the person who saved it.
func TestSavedViewSaveNormalisesAndListsOwnViews(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	sales := p.login(t, "sales", "sales-demo")
	resp := saveViewForm(t, p, sales, url.Values{"list": {"contracts"}, "name": {"  Late   signatures "},
		"query": {"stage=signature&stage=generated&page=4&after=1.2&refresh=1&evil=%3Cscript%3E&q=acme&dir=asc"}}, nil)
	doc := quoteMust(t, "save", resp, http.StatusOK)
	link := doc.Find(`[data-testid="work-view"]`)
	want := "/work/contracts?dir=asc&q=acme&scope=all&stage=generated&stage=signature"
	if link.Length() != 1 || link.Text() != "Late signatures" || link.AttrOr("href", "") != want || link.AttrOr("aria-current", "") != "true" {
		t.Fatalf("saved view link %q -> %q (current %q), want %q", link.Text(), link.AttrOr("href", ""), link.AttrOr("aria-current", ""), want)
	}
	if !strings.Contains(resp.Header.Get("HX-Trigger"), "Saved the view") {
		t.Errorf("no toast: %q", resp.Header.Get("HX-Trigger"))
	}
	// The list shows it, current with the same filters in another order, not current without them.
	list := quoteMust(t, "list", p.get(t, sales, "/work/contracts?stage=signature&q=acme&stage=generated&dir=asc", nil), http.StatusOK)
	if list.Find(`[data-testid="work-view"][aria-current="true"]`).Text() != "Late signatures" {
		t.Error("the list with the view's filters does not mark the view current")
	}
	if href := list.Find(`[data-testid="work-export-xlsx"]`).AttrOr("href", ""); href != "/work/contracts/export?format=xlsx&dir=asc&q=acme&scope=all&stage=generated&stage=signature" {
		t.Errorf("export link %q", href)
	}
	plain := quoteMust(t, "list", p.get(t, sales, "/work/contracts", nil), http.StatusOK)
	if plain.Find(`[data-testid="work-view"]`).Length() != 1 || plain.Find(`[data-testid="work-view"][aria-current]`).Length() != 0 {
		t.Error("the list without the filters should list the view, not as current")
	}
	// The filters' htmx answer carries the region out of band, following the filters.
	partial := p.get(t, sales, "/work/contracts?stage=signature", map[string]string{"HX-Request": "true", "HX-Target": "work-results"})
	if !strings.Contains(partial.body, `id="work-tools-actions"`) || !strings.Contains(partial.body, `hx-swap-oob="true"`) ||
		!strings.Contains(partial.body, "/work/contracts/export?format=csv&amp;scope=all&amp;stage=signature") {
		t.Errorf("the results answer does not bring the saved views and exports along: %.600s", partial.body)
	}
	// In the palette, by part of the name in any case.
	pal := parseHTML(t, p.get(t, sales, "/palette?q=LATE", htmx).body)
	if pal.Find(`[data-kind="view"]`).Length() != 1 || !strings.Contains(pal.Find(`[data-kind="view"]`).Text(), "Late signatures") {
		t.Errorf("palette: %q", pal.Text())
	}
	// Another person sees none of it.
	backoffice := p.login(t, "backoffice", "backoffice-demo")
	other := quoteMust(t, "other's list", p.get(t, backoffice, "/work/contracts", nil), http.StatusOK)
	if other.Find(`[data-testid="work-view"]`).Length() != 0 || other.Find(`[data-testid="work-views-none"]`).Length() != 1 {
		t.Error("another person's list shows the view")
	}
	if strings.Contains(p.get(t, backoffice, "/palette?q=late", htmx).body, "Late signatures") ||
		strings.Contains(p.get(t, backoffice, "/work/views", nil).body, "Late signatures") {
		t.Error("another person's palette or views page shows the view")
	}
	// Nor can they rename or delete it by its id.
	manage := quoteMust(t, "views page", p.get(t, sales, "/work/views", nil), http.StatusOK)
	action := manage.Find(`[data-testid="saved-view-rename-form"]`).AttrOr("action", "")
	id := strings.TrimSuffix(strings.TrimPrefix(action, "/work/views/"), "/rename")
	if len(id) != 16 {
		t.Fatalf("rename form action %q", action)
	}
	for _, path := range []string{"/work/views/" + id + "/rename", "/work/views/" + id + "/delete", "/work/views/nothex/delete"} {
		if r := postForm(t, p, backoffice, path, url.Values{"name": {"Mine"}}); r.StatusCode != http.StatusNotFound {
			t.Errorf("%s by another person: %d, want 404", path, r.StatusCode)
		}
	}
	// Renamed and deleted by their owner.
	if r := postForm(t, p, sales, "/work/views/"+id+"/rename", url.Values{"name": {"Two weeks out"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("rename: %d", r.StatusCode)
	}
	manage = quoteMust(t, "views page", p.get(t, sales, "/work/views", nil), http.StatusOK)
	if got := manage.Find(`[data-testid="saved-view-open"]`).Text(); got != "Two weeks out" {
		t.Errorf("after rename: %q", got)
	}
	if r := postForm(t, p, sales, "/work/views/"+id+"/delete", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", r.StatusCode)
	}
	if strings.Contains(p.get(t, sales, "/work/views", nil).body, "Two weeks out") {
		t.Error("the deleted view is still listed")
	}
}

// TestSavedViewProblemsAreTranslated4xx: a bad name, a duplicate, one view too many, a list that
// has no views and filters the list refuses answer 4xx with the person's language, never a 5xx.
func TestSavedViewProblemsAreTranslated4xx(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	sales := p.login(t, "sales", "sales-demo")
	form := func(name, query string) url.Values {
		return url.Values{"list": {"quotes"}, "name": {name}, "query": {query}}
	}
	errorOf := func(resp response) string {
		return strings.TrimSpace(parseHTML(t, resp.body).Find(`[data-testid="work-view-name-error"]`).Text())
	}
	quoteMust(t, "first save", saveViewForm(t, p, sales, form("Drafts", "stage=draft"), nil), http.StatusOK)
	for _, tc := range []struct {
		name, query string
		status      int
		want        string
	}{
		{"   ", "stage=draft", 422, "Inserisci un nome per la vista."},
		{strings.Repeat("x", 61), "stage=draft", 422, "Il nome può avere al massimo 60 caratteri."},
		{"DRAFTS", "stage=archived", 409, "Hai già una vista di questo elenco con quel nome: scegline un altro."},
	} {
		resp := saveViewForm(t, p, sales, form(tc.name, tc.query), italian)
		if resp.StatusCode != tc.status || errorOf(resp) != tc.want {
			t.Errorf("save %q: %d %q, want %d %q", tc.name, resp.StatusCode, errorOf(resp), tc.status, tc.want)
		}
		if doc := parseHTML(t, resp.body); doc.Find(`#work-view-name[aria-invalid="true"]`).AttrOr("value", "") != tc.name {
			t.Errorf("save %q: the field does not keep the name and its problem", tc.name)
		}
	}
	for _, tc := range []url.Values{
		{"list": {"audits"}, "name": {"x"}, "query": {""}},
		form("Bad stage", "stage=bogus"),
		form("Bad date", "from=2026-13-01"),
		form("Bad escape", "q=%zz"),
		form("Too long", "q="+strings.Repeat("a", 2001)),
	} {
		resp := saveViewForm(t, p, sales, tc, nil)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("save %v: %d, want 400", tc, resp.StatusCode)
		}
	}
	// A plain form (no JavaScript) goes back to the list with the view's filters.
	plain := postForm(t, p, sales, "/work/views", form("Archived", "stage=archived&page=2"))
	if plain.StatusCode != http.StatusSeeOther || plain.Header.Get("Location") != "/work/quotes?scope=mine&stage=archived" {
		t.Errorf("plain save: %d to %q", plain.StatusCode, plain.Header.Get("Location"))
	}
	for i := 3; i <= 50; i++ {
		quoteMust(t, "save", saveViewForm(t, p, sales, form(fmt.Sprintf("View %d", i), "stage=draft"), nil), http.StatusOK)
	}
	resp := saveViewForm(t, p, sales, form("One too many", "stage=draft"), nil)
	if resp.StatusCode != 422 || !strings.Contains(errorOf(resp), "You have 50 saved views") {
		t.Errorf("view 51: %d %q", resp.StatusCode, errorOf(resp))
	}
	// Renaming to a taken name re-renders the page with the problem beside the view.
	manage := quoteMust(t, "views page", p.get(t, sales, "/work/views", nil), http.StatusOK)
	var action string
	manage.Find(`[data-testid="saved-view"]`).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if s.AttrOr("data-name", "") == "View 3" {
			action = s.Find(`[data-testid="saved-view-rename-form"]`).AttrOr("action", "")
			return false
		}
		return true
	})
	renamed := postForm(t, p, sales, action, url.Values{"name": {"drafts"}})
	doc := quoteMust(t, "rename to a taken name", renamed, http.StatusConflict)
	if !strings.Contains(doc.Find(`[data-testid="saved-view-rename-error"]`).Text(), "already have a view") {
		t.Errorf("rename problem: %q", doc.Find(`[data-testid="views-error"]`).Text())
	}
}

// TestSavedViewRoutesRefuseCrossOrigin: every state-changing saved-view route refuses a
// cross-site request, and nothing is saved.
func TestSavedViewRoutesRefuseCrossOrigin(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	sales := p.login(t, "sales", "sales-demo")
	evil := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
	body := url.Values{"list": {"quotes"}, "name": {"Planted"}, "query": {"stage=draft"}}.Encode()
	for _, path := range []string{"/work/views", "/work/views/0123456789abcdef/rename", "/work/views/0123456789abcdef/delete"} {
		if r := p.do(t, sales, http.MethodPost, path, strings.NewReader(body), evil); r.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site POST %s: %d, want 403", path, r.StatusCode)
		}
	}
	if strings.Contains(p.get(t, sales, "/work/views", nil).body, "Planted") {
		t.Error("a cross-site request saved a view")
	}
}

// TestSavedViewOfTheCustomerList: the customer list's search is saved in the list's own normal
// form (its address without the page) and offered on the list, which follows the search.
func TestSavedViewOfTheCustomerList(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	sales := p.login(t, "sales", "sales-demo")
	resp := saveViewForm(t, p, sales, url.Values{"list": {"customers"}, "name": {"Rome"},
		"query": {"q=rome&page=3&sort=city&dir=desc&evil=1"}}, nil)
	doc := quoteMust(t, "save", resp, http.StatusOK)
	if href := doc.Find(`[data-testid="work-view"]`).AttrOr("href", ""); href != "/customers?dir=desc&q=rome&sort=city" {
		t.Fatalf("customer view link %q", href)
	}
	if doc.Find(`[data-testid="work-export"]`).Length() != 0 {
		t.Error("the customer list's saved views offer the work lists' exports")
	}
	if r := saveViewForm(t, p, sales, url.Values{"list": {"customers"}, "name": {"Bad"}, "query": {"sort=shoe"}}, nil); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a sort the list refuses: %d", r.StatusCode)
	}
	list := quoteMust(t, "customer list", p.get(t, sales, "/customers?q=rome&sort=city&dir=desc", nil), http.StatusOK)
	if list.Find(`[data-testid="work-view"][aria-current="true"]`).Text() != "Rome" {
		t.Error("the customer list does not offer the view as the search shown")
	}
	partial := p.get(t, sales, "/customers?q=milan", map[string]string{"HX-Request": "true", "HX-Target": "customer-results"})
	if !strings.Contains(partial.body, `id="work-views-list" hx-swap-oob="true"`) || strings.Contains(partial.body, `aria-current="true"`) {
		t.Errorf("the search's answer does not bring the saved views along: %.300s", partial.body)
	}
	manage := quoteMust(t, "views page", p.get(t, sales, "/work/views", nil), http.StatusOK)
	if manage.Find(`[data-testid="saved-view-open"]`).AttrOr("href", "") != "/customers?dir=desc&q=rome&sort=city" {
		t.Error("the views page does not list the customer view")
	}
}

// TestSavedViewOfTheAuditWorklist: the worklist's quotes and filters are saved in the worklist's
// own normal form (the ids in one sorted list); a worklist without quotes or with a filter it
// refuses cannot be saved.
func TestSavedViewOfTheAuditWorklist(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	clerk := p.login(t, "backoffice", "backoffice-demo")
	doc := quoteMust(t, "save", saveViewForm(t, p, clerk, url.Values{"list": {"audits"}, "name": {"Month end"},
		"query": {"quotes=14%0A12&quotes=13&quotes=12&user=ann&page=2&bogus=1"}}, nil), http.StatusOK)
	if href := doc.Find(`[data-testid="work-view"]`).AttrOr("href", ""); href != "/audits/worklist?quotes=12%2C13%2C14&user=ann" {
		t.Fatalf("worklist view link %q", href)
	}
	for _, query := range []string{"user=ann", "quotes=12&action=NOPE", "quotes=abc"} {
		if r := saveViewForm(t, p, clerk, url.Values{"list": {"audits"}, "name": {"Bad " + query}, "query": {query}}, nil); r.StatusCode != http.StatusBadRequest {
			t.Errorf("worklist view %q: %d, want 400", query, r.StatusCode)
		}
	}
	empty := quoteMust(t, "worklist", p.get(t, clerk, "/audits/worklist", nil), http.StatusOK)
	if empty.Find(`[data-testid="work-view"]`).Text() != "Month end" || empty.Find(`[data-testid="work-view-save-form"]`).Length() != 0 ||
		empty.Find(`[data-testid="work-tools-invalid"]`).Length() != 1 {
		t.Error("the empty worklist should offer the view, and no save form before quotes were asked for")
	}
}

// A list opened from a home page's figure (when rows entered their stage) saves with that
// narrowing: the view opens the same rows, not the wider list.
func TestSavedViewKeepsTheHomePagesNarrowing(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	sales := p.login(t, "sales", "sales-demo")
	resp := saveViewForm(t, p, sales, url.Values{"list": {"contracts"}, "name": {"Out since May"},
		"query": {"stage=signature&entered_to=2026-05-01&entered_from=2026-04-01"}}, nil)
	doc := quoteMust(t, "save", resp, http.StatusOK)
	want := "/work/contracts?entered_from=2026-04-01&entered_to=2026-05-01&scope=all&stage=signature"
	if href := doc.Find(`[data-testid="work-view"]`).AttrOr("href", ""); href != want {
		t.Fatalf("saved view link %q, want %q", href, want)
	}
}
