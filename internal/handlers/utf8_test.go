package handlers

import (
	"net/http"
	"strings"
	"testing"
)

// TestInvalidUTF8IsRefusedBeforeAnyHandler: a form or query string that is not valid UTF-8 gets a
// 400 with a message, and nothing reaches the v2 API.
func TestInvalidUTF8IsRefusedBeforeAnyHandler(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	client := p.login(t, "sales", "sales-demo")
	p.sim.ResetRequests()

	form := p.do(t, client, http.MethodPost, "/customers", strings.NewReader("name=%FF%FEbad&taxId=IT01234567890"),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": p.URL})
	if form.StatusCode != http.StatusBadRequest || !strings.Contains(form.body, "not valid text (UTF-8)") {
		t.Errorf("form with invalid UTF-8: status %d, body %.200q", form.StatusCode, form.body)
	}
	query := p.get(t, client, "/customers?q=%C3%28", nil)
	if query.StatusCode != http.StatusBadRequest || !strings.Contains(query.body, "not valid text (UTF-8)") {
		t.Errorf("query with invalid UTF-8: status %d, body %.200q", query.StatusCode, query.body)
	}
	for _, r := range p.sim.Requests() {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.EscapedPath, "/v2/cpq/list") {
			t.Errorf("the v2 API was called: %s %s", r.Method, r.EscapedPath)
		}
	}

	valid := p.get(t, client, "/customers?q=M%C3%BCller", nil)
	if valid.StatusCode != http.StatusOK {
		t.Errorf("valid UTF-8 query: status %d", valid.StatusCode)
	}
}
