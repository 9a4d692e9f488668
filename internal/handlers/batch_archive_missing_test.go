package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestBatchNotKnownSaysWhyInEveryLanguage: a well-formed batch id the store does not know (its
// record lost, removed, or someone else's) answers 404 with a full page in the reader's language
// saying what that can mean and what to do, for the page, its progress region (which stops
// polling) and its result download; a malformed id is a 400 that says so.
func TestBatchNotKnownSaysWhyInEveryLanguage(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	unknown := "/contracts/batch-archive/" + strings.Repeat("c0", 16)
	for _, lang := range []string{"en", "de", "fr", "it", "es"} {
		tr := testTranslator(t, lang)
		header := map[string]string{"Accept-Language": lang}
		for _, path := range []string{unknown, unknown + "/result.csv"} {
			r := e.p.get(t, e.user, path, header)
			doc := parseHTML(t, r.body)
			text := func(sel string) string { return strings.Join(strings.Fields(doc.Find(sel).Text()), " ") }
			if r.StatusCode != http.StatusNotFound || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
				t.Errorf("%s %s: %d %q, want a 404 page", lang, path, r.StatusCode, r.Header.Get("Content-Type"))
			}
			if got := doc.Find("html").AttrOr("lang", ""); got != lang {
				t.Errorf("%s %s: <html lang=%q>", lang, path, got)
			}
			if got := text(`[data-testid="page-title"]`); got != tr.T("batch.missing.title") {
				t.Errorf("%s %s: title %q", lang, path, got)
			}
			if got := text(`[data-testid="batch-missing-meaning"]`); got != tr.T("batch.missing.meaning") {
				t.Errorf("%s %s: meaning %q", lang, path, got)
			}
			if got := text(`[data-testid="batch-missing-advice"]`); got != tr.T("batch.missing.advice") {
				t.Errorf("%s %s: advice %q", lang, path, got)
			}
			if doc.Find(`a[data-testid="batch-missing-contracts"][href="/contracts"]`).Length() != 1 ||
				doc.Find(`a[data-testid="batch-missing-new"][href="/contracts/batch-archive"]`).Length() != 1 {
				t.Errorf("%s %s: no way to the contracts list and to a new batch", lang, path)
			}
			if doc.Find("nav").Length() == 0 {
				t.Errorf("%s %s: not a full page (no navigation)", lang, path)
			}
		}

		// The progress region polling a batch that vanished: replaced by the same words, no
		// longer polling, never a bare error or a toast.
		progress := e.p.get(t, e.user, unknown+"/progress?after=x", map[string]string{"Accept-Language": lang, "HX-Request": "true"})
		doc := parseHTML(t, progress.body)
		region := doc.Find(`#batch-progress[data-testid="batch-progress"][data-status="missing"]`)
		if progress.StatusCode != http.StatusNotFound || region.Length() != 1 || progress.Header.Get("HX-Retarget") != "" {
			t.Errorf("%s progress: %d, region %d, retarget %q: %.300s", lang, progress.StatusCode, region.Length(), progress.Header.Get("HX-Retarget"), progress.body)
		}
		if _, polls := region.Attr("hx-get"); polls {
			t.Errorf("%s progress: the region of an unknown batch still polls", lang)
		}
		if got := strings.Join(strings.Fields(region.Find(`[data-testid="batch-missing-meaning"]`).Text()), " "); got != tr.T("batch.missing.meaning") {
			t.Errorf("%s progress: meaning %q", lang, got)
		}

		// A malformed id stays a 400 with its own message; the store is not asked.
		for _, path := range []string{"/contracts/batch-archive/not-a-batch", "/contracts/batch-archive/not-a-batch/progress",
			"/contracts/batch-archive/not-a-batch/result.csv"} {
			r := e.p.get(t, e.user, path, header)
			if r.StatusCode != http.StatusBadRequest || !strings.Contains(r.body, tr.T("batch.error.bad_id")) {
				t.Errorf("%s %s: %d, want 400 saying it is not a batch's address: %.300s", lang, path, r.StatusCode, r.body)
			}
		}
	}
}

// TestBatchWhoseRowIsGoneShowsTheMissingPage: a batch whose row is gone from the database
// (deleted by hand, or a restore from an older backup) answers with the page that says what that
// means, to its owner and to anyone else alike. (A key-value store could lose a job's record while
// the owner's index still named it, and the list showed such batches as lost; rows of a database
// are not lost one by one, so the list has none to show.)
func TestBatchWhoseRowIsGoneShowsTheMissingPage(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	_, contract := e.newContract(t)
	posted := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {contract.ContractNumber}, "include_unsent": {"1"}})
	batchPath := posted.Header.Get("Location")
	if posted.StatusCode != http.StatusSeeOther || !strings.HasPrefix(batchPath, "/contracts/batch-archive/") {
		t.Fatalf("check: %d to %q", posted.StatusCode, batchPath)
	}
	id := strings.TrimPrefix(batchPath, "/contracts/batch-archive/")
	if _, err := e.p.db.SQL.ExecContext(context.Background(), `DELETE FROM jobs WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if r := e.p.get(t, e.user, batchPath, nil); r.StatusCode != http.StatusNotFound || !strings.Contains(r.body, `data-testid="batch-missing"`) {
		t.Errorf("the gone batch's page: %d", r.StatusCode)
	}
	other := e.p.login(t, "clerk", "clerk-demo") // another clerk: a batch is its owner's only
	if r := e.p.get(t, other, batchPath, nil); r.StatusCode != http.StatusNotFound || !strings.Contains(r.body, `data-testid="batch-missing"`) {
		t.Errorf("the gone batch's page for another user: %d", r.StatusCode)
	}
}
