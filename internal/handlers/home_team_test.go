package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/workindex"
)

// TestHomeTeamFiguresByRepNamedLinkedAndRevealedOnly: the team lead's table names every rep
// whose rows their token read, each figure equal to the count of the list it opens (and the list
// names the rep); the rep picker shows one rep and their lists, refuses a malformed key with 400
// and shows nothing of a rep the lead's token was refused (issue 41, the visibility rule of
// issue 38: no count, stage or name); the person's saved views are on their home.
func TestHomeTeamFiguresByRepNamedLinkedAndRevealedOnly(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	ctx := context.Background()
	sam := workindex.Viewer{Subject: "demo-sales", Name: "Sam Sales"}
	olga := workindex.Viewer{Subject: "someone-else", Name: "Olga Other"}
	rita := workindex.Viewer{Subject: "refused-rep", Name: "Rita Refused"}
	lead := workindex.Viewer{Subject: "demo-teamlead", Name: "Giulia Bianchi", Team: true}
	for _, q := range []struct {
		v  workindex.Viewer
		id int64
	}{{sam, 101}, {olga, 102}, {olga, 103}, {rita, 104}} {
		s := workindex.QuoteSighting{QuoteID: q.id, CPQID: 1, CustomerID: 1, Customer: "Acme", OneOffCents: 100_00, MonthlyCents: 10_00}
		if err := p.h.work.ObserveQuote(ctx, q.v, s, workindex.ActCreated); err != nil {
			t.Fatal(err)
		}
		if err := p.h.work.ObserveQuote(ctx, lead, s, workindex.ActRefreshed); err != nil {
			t.Fatal(err)
		}
	}
	// Rita's one quote: the v2 API refused the lead (403), so nothing of hers may show.
	if err := p.h.work.Forget(ctx, lead, workindex.KindQuote, 104); err != nil {
		t.Fatal(err)
	}
	if _, err := p.h.views.Save(ctx, lead.Subject, "quotes", "Big drafts", "scope=all&stage=draft&sort=value"); err != nil {
		t.Fatal(err)
	}

	client := p.login(t, "teamlead", "teamlead-demo")
	page := func(path string, want int) *goquery.Document {
		t.Helper()
		resp := p.get(t, client, path, nil)
		if resp.StatusCode != want {
			t.Fatalf("%s: %d, want %d", path, resp.StatusCode, want)
		}
		return parseHTML(t, resp.body)
	}
	doc := page("/", http.StatusOK)
	rows := doc.Find(`[data-testid="home-team-row"]`)
	names := map[string]*goquery.Selection{}
	rows.Each(func(_ int, s *goquery.Selection) {
		names[strings.TrimSpace(s.Find(`[data-testid="home-team-rep"]`).Text())] = s
	})
	if len(names) != 2 || names["Sam Sales"] == nil || names["Olga Other"] == nil {
		t.Fatalf("the table names %v, want Sam Sales and Olga Other", names)
	}
	if strings.Contains(doc.Find("main").Text(), "Rita Refused") || strings.Contains(doc.Find("main").Text(), rita.Key()) {
		t.Error("the home names a rep whose rows the lead's token was refused")
	}
	want := map[string]string{"Sam Sales": "1", "Olga Other": "2"}
	for name, row := range names {
		open := row.Find(`[data-testid="home-team-open"]`)
		if got := strings.TrimSpace(open.Text()); got != want[name] {
			t.Errorf("%s's open quotes: %q, want %s", name, got, want[name])
		}
		for _, id := range []string{"home-team-open", "home-team-signed", "home-team-declined"} {
			a := row.Find(`[data-testid="` + id + `"]`)
			href := a.AttrOr("href", "")
			list := page(href, http.StatusOK)
			if got, wantCount := list.Find(`[data-testid="work-count"]`).Text(), strings.TrimSpace(a.Text())+" found"; got != wantCount &&
				!(wantCount == "0 found" && got == "") {
				t.Errorf("%s's %s: figure %q, its list %q (%s)", name, id, a.Text(), got, href)
			}
			if narrowing := list.Find(`[data-testid="work-narrowing"]`).Text(); !strings.Contains(narrowing, name) {
				t.Errorf("the list %s does not name the rep: %q", href, narrowing)
			}
		}
	}
	if got := names["Olga Other"].Find(`[data-testid="home-team-open-value"]`).Text(); got != "€440.00" {
		t.Errorf("Olga's open value %q", got)
	}

	// The picker: Sam alone, with his lists; the months chart is his.
	picked := page("/?rep="+sam.Key(), http.StatusOK)
	if n := picked.Find(`[data-testid="home-team-row"]`).Length(); n != 1 ||
		strings.TrimSpace(picked.Find(`[data-testid="home-team-rep"]`).Text()) != "Sam Sales" {
		t.Errorf("the picked rep: %d rows", n)
	}
	if sel := picked.Find(`[data-testid="home-rep-select"] option[selected]`); sel.AttrOr("value", "") != sam.Key() || sel.Text() != "Sam Sales" {
		t.Errorf("the picker's choice: %q %q", sel.AttrOr("value", ""), sel.Text())
	}
	lists := picked.Find(`[data-testid="home-rep-list"]`)
	if lists.Length() == 0 {
		t.Fatal("no lists of the picked rep")
	}
	lists.Each(func(_ int, a *goquery.Selection) {
		if href := a.AttrOr("href", ""); !strings.HasPrefix(href, "/work/") || !strings.Contains(href, "by="+sam.Key()) {
			t.Errorf("a list of the picked rep goes to %q", href)
		}
	})
	if picked.Find(`[data-testid="home-signed-months-table"] tbody tr`).Length() != 12 {
		t.Error("the signed value by month has no 12 months")
	}
	// Malformed: 400 with the message; a rep the lead may not see: nothing of them, the team shown.
	for _, bad := range []string{"https://evil.example/", "../../etc", "ABCDEF0123456789ABCDEF01"} {
		d := page("/?rep="+bad, http.StatusBadRequest)
		if d.Find(`[data-testid="home-rep-problem"]`).Length() != 1 || strings.Contains(d.Find("main").Text(), "evil") {
			t.Errorf("rep %q: no message, or the value is echoed", bad)
		}
	}
	refused := page("/?rep="+rita.Key(), http.StatusOK)
	if refused.Find(`[data-testid="home-rep-problem"]`).Length() != 1 || strings.Contains(refused.Find("main").Text(), "Rita") ||
		refused.Find(`[data-testid="home-team-row"]`).Length() != 2 {
		t.Errorf("a refused rep asked for by key: %q", refused.Find(`[data-testid="home-team-figures"]`).Text())
	}
	list := page("/work/quotes?scope=all&by="+rita.Key(), http.StatusOK)
	if strings.Contains(list.Find("main").Text(), "Rita") || list.Find(`[data-testid="work-row"]`).Length() != 0 {
		t.Error("the list by a refused rep names her or shows her row")
	}

	// Saved views on the home page, each a link to its list.
	view := doc.Find(`[data-testid="home-view"]`)
	if view.Length() != 1 || view.Text() != "Big drafts" || !strings.HasPrefix(view.AttrOr("href", ""), "/work/quotes?") {
		t.Errorf("saved views on the home: %d %q %q", view.Length(), view.Text(), view.AttrOr("href", ""))
	}
}

// TestHomeTeamFiguresDeclineReasonEscapedAndItsList: a signer's reason with markup is shown on
// the team lead's table as text, its count opens the list of that reason (which names it and
// shows it on the row), and a reason the list cannot take answers 400.
func TestHomeTeamFiguresDeclineReasonEscapedAndItsList(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	ctx := context.Background()
	sam := workindex.Viewer{Subject: "demo-sales", Name: "Sam Sales"}
	lead := workindex.Viewer{Subject: "demo-teamlead", Name: "Giulia Bianchi", Team: true}
	const reason = `<script>alert(1)</script> "too dear"`
	for _, id := range []int32{201, 202} {
		s := workindex.ContractSighting{ContractID: id, Number: "C-" + string(rune('0'+id%10)), CPQID: 1, CustomerID: 1, Customer: "Acme",
			Facts: workindex.ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: []string{"DECLINED"}}, DeclineReason: reason}
		if id == 202 {
			s.DeclineReason = ""
		}
		if err := p.h.work.ObserveContract(ctx, sam, s, workindex.ActCreated); err != nil {
			t.Fatal(err)
		}
		if err := p.h.work.ObserveContract(ctx, lead, s, workindex.ActRefreshed); err != nil {
			t.Fatal(err)
		}
	}
	client := p.login(t, "teamlead", "teamlead-demo")
	resp := p.get(t, client, "/", nil)
	if resp.StatusCode != http.StatusOK || strings.Contains(resp.body, "<script>alert(1)") {
		t.Fatalf("the home: %d, the reason unescaped: %v", resp.StatusCode, strings.Contains(resp.body, "<script>alert(1)"))
	}
	doc := parseHTML(t, resp.body)
	row := doc.Find(`[data-testid="home-team-row"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid="home-team-declined"]`).Text()); got != "2" {
		t.Errorf("declined %q, want 2", got)
	}
	reasons := row.Find(`[data-testid="home-team-reason"]`)
	if reasons.Length() != 1 || reasons.Find(`[data-testid="home-team-reason-text"]`).Text() != reason {
		t.Fatalf("reasons: %d %q", reasons.Length(), reasons.Text())
	}
	count := reasons.Find(`[data-testid="home-team-reason-count"]`)
	href := count.AttrOr("href", "")
	if strings.TrimSpace(count.Text()) != "1" || !strings.Contains(href, "reason=") || !strings.Contains(href, "by="+sam.Key()) {
		t.Fatalf("the reason's count %q links to %q", count.Text(), href)
	}
	list := p.get(t, client, href, nil)
	if list.StatusCode != http.StatusOK || strings.Contains(list.body, "<script>alert(1)") {
		t.Fatalf("the reason's list: %d", list.StatusCode)
	}
	ld := parseHTML(t, list.body)
	if got := ld.Find(`[data-testid="work-count"]`).Text(); got != "1 found" {
		t.Errorf("the reason's list counts %q, the figure 1", got)
	}
	if !strings.Contains(ld.Find(`[data-testid="work-narrowing"]`).Text(), reason) ||
		!strings.Contains(ld.Find(`[data-testid="work-decline-reason"]`).Text(), reason) {
		t.Errorf("the reason's list does not name it: %q / %q", ld.Find(`[data-testid="work-narrowing"]`).Text(),
			ld.Find(`[data-testid="work-decline-reason"]`).Text())
	}
	if bad := p.get(t, client, "/work/contracts?reason="+strings.Repeat("x", 201), nil); bad.StatusCode != http.StatusBadRequest {
		t.Errorf("a reason of 201 characters: %d, want 400", bad.StatusCode)
	}
}
