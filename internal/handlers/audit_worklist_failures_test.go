package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/v2sim"
)

// TestWorklistRowFailuresSayWhatHappened: a quote whose audit the v2 API refuses (403), does not
// know (404) or fails (503) gets a line in the reader's words, in every language, and no page
// shows a Go error chain.
func TestWorklistRowFailuresSayWhatHappened(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status int
		words  map[string]string
	}{
		{http.StatusForbidden, map[string]string{"en": "you may not read this quote’s audit", "de": "Sie dürfen die Prüfung dieses Angebots nicht lesen",
			"it": "non puoi leggere l’audit di questa offerta", "fr": "vous n’avez pas le droit de lire l’audit de ce devis", "es": "no puede leer la auditoría de esta oferta"}},
		{http.StatusServiceUnavailable, map[string]string{"en": "the CPQ service could not give the audit just now"}},
	} {
		e := newDocsEnv(t, docsOptions{login: "backoffice"})
		ref := e.newQuote(t)
		for lang, want := range c.words {
			e.sim.SetFault("contracts.audit", v2sim.Fault{Status: c.status, Times: 1})
			r := e.p.get(t, e.user, "/audits/worklist?quotes="+strconv.FormatInt(ref.QuoteID, 10), map[string]string{"Accept-Language": lang})
			body := strings.ReplaceAll(r.body, "&#39;", "'")
			if r.StatusCode != http.StatusOK || !strings.Contains(body, want) {
				t.Errorf("%d in %s: %d, want the line %q", c.status, lang, r.StatusCode, want)
			}
			for _, leak := range []string{"apiclient:", ": GET /v2", "%!", "worklist:"} {
				if strings.Contains(body, leak) {
					t.Errorf("%d in %s: the page shows %q", c.status, lang, leak)
				}
			}
		}
	}
}
