package handlers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/v2sim"
)

// TestCustomerImportRunThroughTheHandlers: the preview's Run makes a job that creates the included
// lines (the new customer linked), skips the others with the dry run's reason, shows in the
// person's customer list at once, answers a second Run with 409 (never run twice), someone else
// 404, and downloads its result as CSV and XLSX.
func TestCustomerImportRunThroughTheHandlers(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	clerk := p.login(t, "backoffice", "backoffice-demo")
	csv := "Name;Tax id;Segment;City\nRun One S.r.l.;IT71717171717;Business;Roma\nRun Two S.p.A.;IT72727272727;Business;Milano\nNo tax id;;Business;Roma\n"
	posted := postImport(t, p, clerk, "run.csv", []byte(csv))
	where := posted.Header.Get("Location")
	if posted.StatusCode != http.StatusSeeOther {
		t.Fatalf("upload: %d: %.300s", posted.StatusCode, posted.body)
	}
	doc := parseHTML(t, p.get(t, clerk, where, nil).body)
	if got := strings.TrimSpace(doc.Find(`[data-testid="import-run-button"]`).Text()); got != "Import 2 customers" {
		t.Fatalf("run button %q", got)
	}
	if confirm := doc.Find(`[data-testid="import-run-form"]`).AttrOr("data-confirm", ""); !strings.Contains(confirm, "Create 2 customers") {
		t.Fatalf("confirmation %q", confirm)
	}
	run := postForm(t, p, clerk, where+"/run", nil)
	runURL := run.Header.Get("Location")
	if run.StatusCode != http.StatusSeeOther || !strings.HasPrefix(runURL, "/customers/import-runs/") {
		t.Fatalf("run: %d to %q: %.300s", run.StatusCode, runURL, run.body)
	}
	if again := postForm(t, p, clerk, where+"/run", nil); again.StatusCode != http.StatusNotFound && again.StatusCode != http.StatusConflict {
		t.Fatalf("a second run of the same import: %d", again.StatusCode)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		doc = parseHTML(t, p.get(t, clerk, runURL, nil).body)
		if doc.Find(`[data-testid="import-run-progress"]`).AttrOr("data-active", "") == "false" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not finish")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c, s, f := doc.Find(`[data-testid="import-run-created"]`).Text(), doc.Find(`[data-testid="import-run-skipped"]`).Text(),
		doc.Find(`[data-testid="import-run-failed"]`).Text(); c != "2" || s != "1" || f != "0" {
		t.Fatalf("created %s, skipped %s, failed %s", c, s, f)
	}
	ids := map[string]string{}
	doc.Find(`[data-testid="import-run-row"]`).Each(func(_ int, r *goquery.Selection) {
		ids[r.AttrOr("data-tax-id", "")] = r.AttrOr("data-customer-id", "")
	})
	for _, tax := range []string{"IT71717171717", "IT72727272727"} {
		if ids[tax] == "" {
			t.Fatalf("line %s has no new customer: %v", tax, ids)
		}
		if r := p.get(t, clerk, "/customers/"+ids[tax], nil); r.StatusCode != http.StatusOK || !strings.Contains(r.body, tax) {
			t.Errorf("the new customer %s: %d", ids[tax], r.StatusCode)
		}
	}
	// The import page lists the run in a table: its name, when, and its counts each in a cell of
	// its own (a list ran them together: "CET20 angelegt").
	imports := parseHTML(t, p.get(t, clerk, "/customers/import", nil).body)
	runRow := imports.Find(`tr[data-testid="import-runs-item"]`).First()
	if cells := runRow.Find("td"); cells.Length() != 3 || !strings.Contains(cells.Eq(2).Text(), "2 created") ||
		cells.Eq(0).Find("a").AttrOr("href", "") != runURL || imports.Find(`[data-testid="import-runs"] th`).First().Text() != "File" {
		t.Errorf("the run's row: %d cells, %q", cells.Length(), strings.Join(cells.Map(func(_ int, s *goquery.Selection) string { return s.Text() }), " | "))
	}
	if list := p.get(t, clerk, "/customers?q=IT71717171717", nil); !strings.Contains(list.body, "Run One S.r.l.") {
		t.Error("the customer list does not show the created customer")
	}
	// The run's page in the five languages: the counts, a created line and a skipped one.
	for lang, words := range map[string][]string{
		"en": {"Created", "created", "skipped", "not sent: the dry run found the line invalid"},
		"de": {"Angelegt", "angelegt", "übersprungen", "nicht gesendet: die Probe hat die Zeile als ungültig erkannt"},
		"es": {"Creados", "creado", "omitido", "no enviado: la prueba encontró la línea no válida"},
		"fr": {"Créés", "créé", "ignoré", "non envoyé : l’essai a trouvé la ligne invalide"},
		"it": {"Creati", "creato", "saltato", "non inviato: la prova ha trovato la riga non valida"},
	} {
		page := p.get(t, clerk, runURL, map[string]string{"Accept-Language": lang})
		for _, w := range words {
			if !strings.Contains(page.body, w) {
				t.Errorf("%s: the run's page lacks %q", lang, w)
			}
		}
	}
	if r := p.get(t, p.login(t, "clerk", "clerk-demo"), runURL, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("someone else's run: %d", r.StatusCode)
	}
	result := p.get(t, clerk, runURL+"/result?format=csv", nil)
	if result.StatusCode != http.StatusOK || !strings.Contains(result.body, ids["IT71717171717"]) || !strings.Contains(result.body, "skipped") {
		t.Errorf("CSV result: %d %.400s", result.StatusCode, result.body)
	}
	xlsx := p.get(t, clerk, runURL+"/result?format=xlsx", nil)
	if xlsx.StatusCode != http.StatusOK || xlsx.Header.Get("Content-Type") != export.XLSX.ContentType() || !strings.HasPrefix(xlsx.body, "PK") {
		t.Errorf("XLSX result: %d %s", xlsx.StatusCode, xlsx.Header.Get("Content-Type"))
	}
	if r := p.get(t, clerk, runURL+"/result?format=pdf", nil); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a PDF result: %d", r.StatusCode)
	}
}

// TestCustomerImportRunRetriesAFailedLineAfterLookingItUp: a create the v2 API refused (503) fails
// its line with the reason; the retry looks the customer up by tax id (it may have been created)
// before it creates it, and each tax id ends with exactly one successful create.
func TestCustomerImportRunRetriesAFailedLineAfterLookingItUp(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	clerk := p.login(t, "backoffice", "backoffice-demo")
	csv := "Name;Tax id;Segment;City\nRetry One S.r.l.;IT81818181818;Business;Roma\nRetry Two S.p.A.;IT82828282828;Business;Milano\n"
	posted := postImport(t, p, clerk, "retry.csv", []byte(csv))
	if posted.StatusCode != http.StatusSeeOther {
		t.Fatalf("upload: %d", posted.StatusCode)
	}
	p.sim.SetFault("customers.create", v2sim.Fault{Status: http.StatusServiceUnavailable, Times: 1})
	run := postForm(t, p, clerk, posted.Header.Get("Location")+"/run", nil)
	runURL := run.Header.Get("Location")
	finished := func() *goquery.Document {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			doc := parseHTML(t, p.get(t, clerk, runURL, nil).body)
			if doc.Find(`[data-testid="import-run-progress"]`).AttrOr("data-active", "") == "false" {
				return doc
			}
		}
		t.Fatal("the run did not finish")
		return nil
	}
	doc := finished()
	if c, f := doc.Find(`[data-testid="import-run-created"]`).Text(), doc.Find(`[data-testid="import-run-failed"]`).Text(); c != "1" || f != "1" {
		t.Fatalf("created %s, failed %s", c, f)
	}
	if msg := doc.Find(`[data-testid="import-run-message"]`).Text(); !strings.Contains(msg, "503") {
		t.Errorf("the failed line says %q", msg)
	}
	if r := postForm(t, p, clerk, runURL+"/retry", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("retry: %d", r.StatusCode)
	}
	doc = finished()
	if c, f := doc.Find(`[data-testid="import-run-created"]`).Text(), doc.Find(`[data-testid="import-run-failed"]`).Text(); c != "2" || f != "0" {
		t.Fatalf("after the retry: created %s, failed %s", c, f)
	}
	creates, lookups := map[string]int{}, 0
	for _, r := range p.sim.Requests() {
		switch {
		case r.Method == http.MethodPost && strings.TrimSuffix(r.EscapedPath, "/") == "/v2/customer" && r.Status == http.StatusCreated:
			for _, tax := range []string{"IT81818181818", "IT82828282828"} {
				if strings.Contains(r.Body, tax) {
					creates[tax]++
				}
			}
		case r.Method == http.MethodGet && strings.Contains(r.EscapedPath, "/v2/customer/onlinesearch/"):
			lookups++
		}
	}
	if creates["IT81818181818"] != 1 || creates["IT82828282828"] != 1 || lookups == 0 {
		t.Fatalf("creates %v, look-ups %d", creates, lookups)
	}
}
