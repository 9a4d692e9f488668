package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Issue 38, item 4: bidirectional controls, other format characters, NUL and other controls are
// refused in every form field and query parameter with a 400 that names the field and the
// character, before anything reaches the v2 API or the database.

// hiddenProbes are the values sent: a name ending in RIGHT-TO-LEFT OVERRIDE, an isolate, NUL, a
// zero-width space and a C1 control.
var hiddenProbes = []struct{ value, codePoint string }{
	{"ACME\u202e", "U+202E"},
	{"A\u2067B", "U+2067"},
	{"ab\x00", "U+0000"},
	{"a\u200bb", "U+200B"},
	{"a\u0085b", "U+0085"},
}

func TestHostileHiddenCharactersAreRefusedInEveryFormAndQuery(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	user := sp.login(t, "sales", "sales-demo")
	w := sp.buildWorld(t, sp.tokenOf(t, user), secPlainText("hidden"))
	samples := w.sampleValues()
	crawled := sp.crawl(t, user, samples)
	probes := 0
	check := func(what string, resp response, codePoint string) {
		t.Helper()
		probes++
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s answered %d, want 400: %.300s", what, resp.StatusCode, resp.body)
			return
		}
		if !strings.Contains(resp.body, codePoint) && !strings.Contains(resp.Header.Get("HX-Trigger"), codePoint) {
			t.Errorf("%s: the answer does not name the character %s: %.500s", what, codePoint, resp.body)
		}
		secWantStillSignedIn(t, what, resp)
	}
	sp.sim.ResetRequests()
	forms := 0
	for _, f := range crawled.forms {
		if f.multipart || f.method == http.MethodGet {
			continue // uploads check their few fields themselves; GET forms are query probes below
		}
		forms++
		for name := range f.fields {
			for _, p := range hiddenProbes {
				what := fmt.Sprintf("%s %s (from %s) with %s=%+q", f.method, f.route.Path, f.source, name, p.value)
				if f.method == http.MethodDelete {
					// htmx sends a DELETE's values in the query (Go reads no DELETE body).
					sep := "?"
					if strings.Contains(f.path, "?") {
						sep = "&"
					}
					target := f.path + sep + url.Values{name: {p.value}}.Encode()
					check(what, sp.do(t, user, f.method, target, nil, map[string]string{"Origin": sp.URL, "HX-Request": "true"}), p.codePoint)
					continue
				}
				check(what, sp.submit(t, user, f, url.Values{name: {p.value}}, nil), p.codePoint)
			}
		}
	}
	if forms == 0 {
		t.Fatal("the crawl found no form: the check above was vacuous")
	}
	if reqs := sp.sim.Requests(); len(reqs) > 0 {
		t.Errorf("refused forms reached the v2 API %d times, first %s %s", len(reqs), reqs[0].Method, reqs[0].RequestURI)
	}

	// Query parameters on every GET route, among them the work lists, their exports, the palette
	// and the searches: q=ab%00 answered 503 from the database.
	for _, r := range sp.protectedRoutes() {
		if r.Method != http.MethodGet {
			continue
		}
		path, err := secBuildPath(r.Path, samples, false)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{"q"}
		for n := range crawled.queryNames[r.Path] {
			names = append(names, n)
		}
		for _, name := range names {
			for _, p := range hiddenProbes {
				for _, hdr := range []map[string]string{nil, htmx} {
					what := fmt.Sprintf("GET %s?%s=%+q (htmx %v)", path, name, p.value, hdr != nil)
					check(what, sp.get(t, user, path+"?"+url.Values{name: {p.value}}.Encode(), hdr), p.codePoint)
				}
			}
		}
	}
	if reqs := sp.sim.Requests(); len(reqs) > 0 {
		t.Errorf("refused requests reached the v2 API %d times, first %s %s", len(reqs), reqs[0].Method, reqs[0].RequestURI)
	}
	t.Logf("%d forms, %d probes", forms, probes)
}

func TestHiddenCharacterMessageNamesTheFieldInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	msg, bad := hiddenCharacterProblem(url.Values{"lang": {"de"}, "signerName": {"Anna\u202e"}})
	if !bad {
		t.Fatal("a signer name with U+202E was accepted")
	}
	for _, lang := range []string{"en", "de", "it", "fr", "es"} {
		text := msg.In(testTranslator(t, lang))
		if !strings.Contains(text, "U+202E") || strings.Contains(text, "signerName") || strings.Contains(text, "error.") {
			t.Errorf("%s: %q does not name the field in words and the character", lang, text)
		}
	}
	if _, bad := hiddenCharacterProblem(url.Values{"message": {"Hallo\r\n\tAnna 👩\u200d💻"}}); bad {
		t.Error("a multi-line message with line breaks, a tab and a ZWJ emoji was refused")
	}
	if _, bad := hiddenCharacterProblem(url.Values{"name": {"a\nb"}}); !bad {
		t.Error("a line break in a single-line field was accepted")
	}
}
