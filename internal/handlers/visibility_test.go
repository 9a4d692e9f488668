package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/workindex"
)

// TestVisibilityTeamLeadSeesNothingTheirTokenDidNotRead: the index holds a rep's quote and
// signed, declined and out-for-signature contracts that the team lead's token never read (one it
// read before the rep's read changed it); the v2 API does not give them to the team lead (the
// simulator does not know these ids: 404). Nothing of them reaches the team lead on any page: no
// name, number, rep, stage heading, count, sum or "Archive all N" on the home page, the lists,
// the exports with any filter, the audit worklist's date range or the palette; and each is
// forgotten for the team lead by the pages' re-reads, so it is not even counted as unchecked.
func TestVisibilityTeamLeadSeesNothingTheirTokenDidNotRead(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	ctx := context.Background()
	sam := workindex.Viewer{Subject: "demo-sales", Name: "Sam Sales"}
	lead := workindex.Viewer{Subject: "demo-teamlead", Name: "Giulia Bianchi", Team: true}
	const hidden = "Hidden Laurent"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(p.h.work.ObserveQuote(ctx, sam, workindex.QuoteSighting{QuoteID: 900701, CPQID: 1, CustomerID: 4242, Customer: hidden,
		OneOffCents: 777_00}, workindex.ActCreated))
	for i, status := range [][]string{{"SIGNED"}, {"DECLINED"}, {"SENT"}} {
		id := int32(9701 + i)
		s := workindex.ContractSighting{ContractID: id, Number: "C-2026-09701" + string(rune('0'+i)), QuoteID: int64(900710 + i), CPQID: 1,
			CustomerID: 4242, Customer: hidden, OneOffCents: 555_00, Facts: workindex.ContractFacts{Status: "SIGNATURE_REQUESTED", SignatureStatuses: status}}
		if i == 0 {
			// The lead read this one; the rep's read then found it changed (renamed customer).
			before := s
			before.Customer = "Before"
			must(p.h.work.ObserveContract(ctx, sam, before, workindex.ActCreated))
			must(p.h.work.ObserveContract(ctx, lead, before, workindex.ActRefreshed))
		}
		must(p.h.work.ObserveContract(ctx, sam, s, workindex.ActOpened))
	}
	forbidden := []string{hidden, "Before", "Sam Sales", "C-2026-09701", "900701", "777.00", "555.00", "777,00", "555,00"}
	client := p.login(t, "teamlead", "teamlead-demo")
	today := time.Now().UTC().Format("2006-01-02")
	for _, path := range []string{
		"/", "/work/quotes?scope=all", "/work/quotes?scope=all&q=Hid", "/work/contracts", "/work/contracts?stage=declined",
		"/work/contracts?stage=signed&sort=value", "/work/contracts?customer=4242",
		"/work/quotes/export?format=csv&scope=all", "/work/quotes/export?format=csv&scope=all&q=Hid",
		"/work/contracts/export?format=csv&stage=declined", "/work/contracts/export?format=csv&customer=4242&sort=value",
		"/work/contracts/export?format=csv&from=2020-01-01", "/audits/worklist?changed=1&from=" + today, "/palette?q=9701",
	} {
		resp := p.get(t, client, path, nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", path, resp.StatusCode)
			continue
		}
		body := resp.body
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			body = parseHTML(t, body).Find("main").Text()
		}
		for _, f := range forbidden {
			if strings.Contains(body, f) {
				t.Errorf("%s gives the team lead %q of rows their token never read", path, f)
			}
		}
		if path == "/" {
			doc := parseHTML(t, resp.body)
			for _, id := range []string{"followup-declined-count", "followup-signature-count", "home-conversion-generated", "home-conversion-signed"} {
				if got := strings.TrimSpace(doc.Find(`[data-testid="` + id + `"]`).Text()); got != "" && got != "0" {
					t.Errorf("the team lead's home counts %s: %q", id, got)
				}
			}
			if got := doc.Find(`[data-testid="home-reps-table"] tbody tr`).Length(); got != 0 {
				t.Errorf("the team lead's home has %d reps of rows their token never read", got)
			}
		}
		if strings.Contains(body, "Archive all") {
			t.Errorf("%s offers to archive rows the team lead's token never read", path)
		}
		if strings.Contains(body, "not checked yet") {
			t.Errorf("%s counts rows the v2 API refused the team lead (its re-read should forget them)", path)
		}
	}
	var denied int
	must(p.db.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM work_denied WHERE person = $1`, lead.Key()).Scan(&denied))
	if denied != 4 {
		t.Errorf("the pages' re-reads forgot %d rows for the team lead, want the 4 the v2 API refused", denied)
	}
	// Sam's own token read them all: his home and lists still show them.
	rep := p.login(t, "sales", "sales-demo")
	if body := p.get(t, rep, "/work/quotes", nil).body; !strings.Contains(body, hidden) {
		t.Error("the rep's own quote is not shown to him")
	}
}
