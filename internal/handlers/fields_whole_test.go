package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// No field of any page cuts what is typed (issue 33: "every field keeps what was typed or says
// why not"): a maxlength makes a browser drop the end of a longer paste without a word, so the
// portal sends something the person did not type (a contract number's beginning finds another
// contract, a shortened quote id opens another quote). The server checks the length and says why.
func TestNoFieldCutsWhatWasTyped(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	user := sp.login(t, "sales", "sales-demo")
	w := sp.buildWorld(t, sp.tokenOf(t, user), secPlainText("whole"))
	crawled := sp.crawl(t, user, w.sampleValues())
	fields := 0
	for _, page := range crawled.pages {
		if !strings.HasPrefix(page.resp.Header.Get("Content-Type"), "text/html") {
			continue
		}
		parseHTML(t, page.resp.body).Find("input, textarea").Each(func(_ int, s *goquery.Selection) {
			fields++
			if v, has := s.Attr("maxlength"); has {
				t.Errorf("GET %s (htmx %v): <%s name=%q> has maxlength=%s", page.url, page.htmx, goquery.NodeName(s), s.AttrOr("name", ""), v)
			}
		})
	}
	if fields < 50 {
		t.Fatalf("only %d fields seen: the crawl did not reach the forms", fields)
	}
}

// A value longer than a field takes is refused with a message in the reader's language that names
// the field (or sits next to it), and the form keeps the value whole; nothing is sent.
func TestTooLongValuesAreRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, contract := e.newContract(t)
	de := map[string]string{"Accept-Language": "de", "HX-Request": "true", "Origin": e.p.URL, "Content-Type": "application/x-www-form-urlencoded"}
	long := func(n int) string { return strings.Repeat("x", n) }

	// The signature form: every field's own message, the values kept whole.
	e.sim.ResetRequests()
	form := url.Values{"email": {long(250) + "@example.com"}, "signerName": {long(201)}, "message": {long(2001)}}
	resp := e.p.do(t, e.user, http.MethodPost, contractPath(contract.ContractID)+"/signature", strings.NewReader(form.Encode()), de)
	doc := parseHTML(t, resp.body)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("too long signature form: %d", resp.StatusCode)
	}
	for id, want := range map[string]string{
		"signature-email":   "E-Mail-Adresse darf höchstens 254 Zeichen",
		"signature-signer":  "200",
		"signature-message": "2.000 Zeichen",
	} {
		field := doc.Find("#" + id)
		described := field.AttrOr("aria-describedby", "")
		msg := ""
		for _, ref := range strings.Fields(described) {
			msg += doc.Find("#" + ref).Text()
		}
		if field.AttrOr("aria-invalid", "") != "true" || !strings.Contains(msg, want) {
			t.Errorf("%s: aria-invalid %q, message %q, want it to contain %q", id, field.AttrOr("aria-invalid", ""), msg, want)
		}
	}
	if got := doc.Find("#signature-signer").AttrOr("value", ""); got != long(201) {
		t.Errorf("the signer's name was not kept whole (%d characters)", len(got))
	}
	if n := len(e.requestsTo("signature.request")); n != 0 {
		t.Errorf("%d signature requests sent", n)
	}

	// Searches: the contract lookup, the audit's quote id, the audit worklist's filters.
	for _, tc := range []struct{ path, field, want string }{
		{"/contracts/lookup?q=" + long(201), "#contract-query", "200"},
		{"/audits?quoteId=" + strings.Repeat("9", 25), "#audit-quote-id", "Angebots-ID ist eine ganze Zahl"},
	} {
		r := e.p.get(t, e.user, tc.path, map[string]string{"Accept-Language": "de"})
		d := parseHTML(t, r.body)
		field := d.Find(tc.field)
		msg := ""
		for _, ref := range strings.Fields(field.AttrOr("aria-describedby", "")) {
			msg += d.Find("#" + ref).Text()
		}
		value, _ := url.ParseQuery(strings.SplitN(tc.path, "?", 2)[1])
		for _, v := range value {
			if field.AttrOr("value", "") != v[0] {
				t.Errorf("%s: the value was not kept whole: %q", tc.path, field.AttrOr("value", ""))
			}
		}
		if r.StatusCode != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d, message %q, want it to contain %q", tc.path, r.StatusCode, msg, tc.want)
		}
	}
	clerk := e.p.login(t, "backoffice", "backoffice-demo")
	r := e.p.get(t, clerk, "/audits/worklist?user="+long(201), map[string]string{"Accept-Language": "de"})
	wd := parseHTML(t, r.body)
	userField := wd.Find("#worklist-user")
	problem := strings.TrimSpace(wd.Find("#" + userField.AttrOr("aria-describedby", "none")).Text())
	if r.StatusCode != http.StatusBadRequest || userField.AttrOr("aria-invalid", "") != "true" || !strings.HasPrefix(problem, "Benutzer") ||
		!strings.Contains(problem, "200") || userField.AttrOr("value", "") != long(201) {
		t.Errorf("a too long user filter: %d %q", r.StatusCode, problem)
	}
	if wd.Find("#worklist-quotes").AttrOr("aria-invalid", "") == "true" {
		t.Error("the user filter's problem is shown on the quotes box")
	}
}
