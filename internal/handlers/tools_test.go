package handlers

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/v2sim"
)

// toolStep is one request of a back-office tool, in the order a clerk makes them: send runs it
// for a client (paths may use what earlier steps of the clerk gave), want is the clerk's status.
type toolStep struct {
	name string
	send func(client *http.Client) response
	want int
}

// callsBy counts the simulator's requests whose bearer token is login's (the portal sends each
// person's own access token, which names them in preferred_username).
func callsBy(t *testing.T, sim *v2sim.Server, login string) int {
	t.Helper()
	n := 0
	for _, r := range sim.Requests() {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		parts := strings.Split(token, ".")
		if !ok || len(parts) != 3 {
			continue
		}
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatalf("a token's payload: %v", err)
		}
		var claims struct {
			Username string `json:"preferred_username"`
		}
		if err := json.Unmarshal(payload, &claims); err != nil {
			t.Fatalf("a token's claims: %v", err)
		}
		if claims.Username == login {
			n++
		}
	}
	return n
}

// TestBackOfficeToolsOnlyForTheirRoles: every route of the batch archive, the handover and the
// customer import (pages, forms, job pages, progress, actions, results) answers a rep (role
// sales, in none of the tools' roles) 403 with a page naming the roles the tool needs, before any
// v2 call and before any job is read; the back office gets the route's own answer (200 for a
// page, 303 after a form, 409 for an action the job's state does not allow: its handler ran).
// The rep's pages offer none of the tools.
func TestBackOfficeToolsOnlyForTheirRoles(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	p, clerk := e.p, e.user
	rep := p.login(t, "sales", "sales-demo")

	// Two customers of owner 1009 and one of 1010, made by the clerk, for the handover.
	for _, owners := range []string{"1009", "1009", "1010"} {
		created := p.postForm(t, clerk, "/customers", validCustomerForm(uniqueName("Roles"), uniqueTaxID()), false)
		if r := p.postForm(t, clerk, created.Header.Get("Location")+"/owners", url.Values{"ownerIds": {owners}}, false); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("owners: %d", r.StatusCode)
		}
	}
	// A contract for the batch, opened by both (so the rep's work list shows it).
	// Another one, left as it is, for the work lists.
	_, contract := e.newContract(t)
	_, listed := e.newContract(t)
	for _, c := range []*http.Client{rep, clerk} {
		for _, id := range []int32{contract.ContractID, listed.ContractID} {
			if r := p.get(t, c, contractPath(id), nil); r.StatusCode != http.StatusOK {
				t.Fatalf("open contract %d: %d", id, r.StatusCode)
			}
		}
	}

	hx := map[string]string{"HX-Request": "true"}
	var batch, handover, imp, run string // the clerk's jobs and imports, as the steps make them
	post := func(path *string, suffix string, form url.Values) func(*http.Client) response {
		return func(c *http.Client) response { return p.postForm(t, c, *path+suffix, form, false) }
	}
	get := func(path *string, suffix string, headers map[string]string) func(*http.Client) response {
		return func(c *http.Client) response { return p.get(t, c, *path+suffix, headers) }
	}
	fixed := func(s string) *string { return &s }
	waitEnd := func(path *string, region string) {
		deadline := time.Now().Add(20 * time.Second)
		for {
			r := parseHTML(t, p.get(t, clerk, *path, nil).body).Find(`[data-testid="` + region + `"]`)
			if r.AttrOr("data-active", "") == "false" || r.AttrOr("data-status", "") == "Finished" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not end", *path)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	importFile := "Name;Tax id;Segment;City\nRoles One S.r.l.;IT61616161616;Business;Roma\n"
	steps := []toolStep{
		{"the batch form", get(fixed("/contracts/batch-archive"), "", nil), http.StatusOK},
		{"the batch check", post(fixed("/contracts/batch-archive"), "", url.Values{"numbers": {contract.ContractNumber}, "include_unsent": {"1"}}), http.StatusSeeOther},
		{"the batch page", get(&batch, "", nil), http.StatusOK},
		{"the batch progress", get(&batch, "/progress", hx), http.StatusOK},
		{"the batch start", post(&batch, "/start", nil), http.StatusSeeOther},
		{"the batch result", get(&batch, "/result.csv", nil), http.StatusOK},
		{"the batch cancel (ended)", post(&batch, "/cancel", nil), http.StatusConflict},
		{"the batch retry (none failed)", post(&batch, "/retry", nil), http.StatusConflict},
		{"the handover form", get(fixed("/customers/handover?from=1009"), "", nil), http.StatusOK},
		{"the handover preview", post(fixed("/customers/handover"), "", url.Values{"from": {"1009"}, "to": {"1010"}}), http.StatusSeeOther},
		{"the handover page", get(&handover, "", nil), http.StatusOK},
		{"the handover progress", get(&handover, "/progress", hx), http.StatusOK},
		{"the handover start", post(&handover, "/start", nil), http.StatusSeeOther},
		{"the handover result", get(&handover, "/result.csv", nil), http.StatusOK},
		{"the handover cancel (ended)", post(&handover, "/cancel", nil), http.StatusConflict},
		{"the handover retry (none failed)", post(&handover, "/retry", nil), http.StatusConflict},
		{"the import form", get(fixed("/customers/import"), "", nil), http.StatusOK},
		{"the import upload", func(c *http.Client) response { return postImport(t, p, c, "roles.csv", []byte(importFile)) }, http.StatusSeeOther},
		{"the dry run", get(&imp, "", nil), http.StatusOK},
		{"the dry run's lines", post(&imp, "/lines", url.Values{"shown": {"0"}, "include": {"0"}}), http.StatusSeeOther},
		{"the dry run's verdict", post(&imp, "/include", url.Values{"verdict": {"new"}, "include": {"1"}}), http.StatusSeeOther},
		{"the import's run", post(&imp, "/run", nil), http.StatusSeeOther},
		{"the run's page", get(&run, "", nil), http.StatusOK},
		{"the run's progress", get(&run, "/progress", hx), http.StatusOK},
		{"the run's start (running)", post(&run, "/start", nil), http.StatusConflict},
		{"the run's result", get(&run, "/result?format=csv", nil), http.StatusOK},
		{"the run's cancel (ended)", post(&run, "/cancel", nil), http.StatusConflict},
		{"the run's retry (none failed)", post(&run, "/retry", nil), http.StatusConflict},
		{"another upload", func(c *http.Client) response { return postImport(t, p, c, "again.csv", []byte(importFile)) }, http.StatusSeeOther},
		{"its delete", post(&imp, "/delete", nil), http.StatusSeeOther},
	}
	for i, s := range steps {
		before := callsBy(t, e.sim, "sales")
		refused := s.send(rep)
		if refused.StatusCode != http.StatusForbidden {
			t.Fatalf("%s: the rep got %d, want 403", s.name, refused.StatusCode)
		}
		if !strings.Contains(refused.body, "backoffice") || (refused.Request.Header.Get("HX-Request") == "" && !strings.Contains(refused.body, "Not for your role")) {
			t.Errorf("%s: the 403 does not say which role the tool needs: %.400s", s.name, refused.body)
		}
		if n := callsBy(t, e.sim, "sales") - before; n != 0 {
			t.Errorf("%s: the rep's request sent %d v2 calls", s.name, n)
		}
		got := s.send(clerk)
		if got.StatusCode != s.want {
			t.Fatalf("step %d, %s: the clerk got %d, want %d: %.300s", i, s.name, got.StatusCode, s.want, got.body)
		}
		switch loc := got.Header.Get("Location"); s.name {
		case "the batch check":
			batch = loc
		case "the batch start":
			waitEnd(&batch, "batch-progress")
		case "the handover preview":
			handover = loc
		case "the handover start":
			waitEnd(&handover, "handover-progress")
		case "the import upload", "another upload":
			imp = loc
		case "the import's run":
			run = loc
			waitEnd(&run, "import-run-progress")
		}
	}
	if batch == "" || handover == "" || imp == "" || run == "" {
		t.Fatalf("jobs: %q %q %q %q", batch, handover, imp, run)
	}

	// The refusal in the rep's language, naming the tool.
	de := p.get(t, rep, "/customers/import", map[string]string{"Accept-Language": "de"})
	if de.StatusCode != http.StatusForbidden || !strings.Contains(de.body, "Nicht für Ihre Rolle") || !strings.Contains(de.body, "Kunden importieren") {
		t.Errorf("the German refusal: %d %.400s", de.StatusCode, de.body)
	}

	// What each is offered: links, buttons, the work list's selection, the palette.
	offered := func(c *http.Client, path, selector string) bool {
		var headers map[string]string
		if strings.HasPrefix(path, "/palette") {
			headers = hx // the results the dialog shows
		}
		r := p.get(t, c, path, headers)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, r.StatusCode)
		}
		return parseHTML(t, r.body).Find(selector).Length() > 0
	}
	for _, o := range []struct{ path, selector string }{
		{"/customers", `[data-testid="handover-link"]`},
		{"/customers", `[data-testid="import-customers"]`},
		{"/contracts", `[data-testid="batch-archive-link"]`},
		{"/work/contracts", `[data-testid="work-archive-form"]`},
		{"/work/contracts", `[data-testid="work-select"]`},
		{"/palette?q=", `[data-href="/contracts/batch-archive"]`},
		{"/palette?q=", `[data-href="/customers/handover"]`},
		{"/palette?q=", `[data-href="/customers/import"]`},
	} {
		if offered(rep, o.path, o.selector) {
			t.Errorf("the rep is offered %s on %s", o.selector, o.path)
		}
		if !offered(clerk, o.path, o.selector) {
			t.Errorf("the clerk is not offered %s on %s", o.selector, o.path)
		}
	}
	if !offered(rep, "/work/contracts", `[data-testid="work-row"] a[href="`+contractPath(listed.ContractID)+`"]`) {
		t.Error("the rep's work list does not list the contract they opened (the list itself stays theirs)")
	}
}
