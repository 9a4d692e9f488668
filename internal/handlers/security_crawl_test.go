package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gin-gonic/gin"
)

// The crawler of the security suites: it opens every GET route (with sample parameter values), then
// follows the links, htmx attributes and forms it finds, so every page and partial a user can reach
// is checked, and every form a user can submit is known with its field names and default values.

// secFormInfo is a request a page lets the user make: a form, or an element with an hx-* verb.
type secFormInfo struct {
	route     gin.RouteInfo
	method    string
	path      string     // the concrete action path (query included for GET)
	fields    url.Values // names and default values
	files     []string   // names of file inputs
	multipart bool
	htmx      bool
	source    string // the page it was found on
}

// key identifies a form for de-duplication.
func (f secFormInfo) key() string {
	names := make([]string, 0, len(f.fields))
	for k := range f.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return f.method + " " + f.route.Path + " " + strings.Join(names, ",") + " " + strings.Join(f.files, ",")
}

// secCrawlResult is what the crawler saw.
type secCrawlResult struct {
	pages []secCrawledPage
	forms []secFormInfo
	// queryNames are the query parameter names seen per route pattern (links and GET forms).
	queryNames map[string]map[string]bool
}

type secCrawledPage struct {
	url  string
	htmx bool
	resp response
}

// secMaxCrawledPages bounds the crawl (pagination could otherwise go on for long).
const secMaxCrawledPages = 250

// matchRoute finds the registered route of method and path (a path without query).
func (sp *secPortal) matchRoute(method, path string) (gin.RouteInfo, bool) {
	for _, r := range sp.routes {
		if r.Method == method && secRouteRegexp(r.Path).MatchString(path) {
			return r, true
		}
	}
	return gin.RouteInfo{}, false
}

// crawl visits every protected GET route with the world's sample values and whatever they link to.
func (sp *secPortal) crawl(t *testing.T, client *http.Client, samples map[string]string) *secCrawlResult {
	t.Helper()
	res := &secCrawlResult{queryNames: map[string]map[string]bool{}}
	type visit struct {
		url  string
		htmx bool
	}
	var queue []visit
	seen := map[visit]bool{}
	enqueue := func(v visit) {
		if !seen[v] && len(seen) < secMaxCrawledPages {
			seen[v] = true
			queue = append(queue, v)
		}
	}
	for _, r := range sp.protectedRoutes() {
		if r.Method != http.MethodGet {
			continue
		}
		path, err := secBuildPath(r.Path, samples, false)
		if err != nil {
			t.Fatal(err)
		}
		enqueue(visit{path, false})
		enqueue(visit{path, true})
	}
	formsSeen := map[string]bool{}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		var hdr map[string]string
		if v.htmx {
			hdr = map[string]string{"HX-Request": "true", "HX-Current-URL": sp.URL + v.url}
		}
		resp := sp.get(t, client, v.url, hdr)
		res.pages = append(res.pages, secCrawledPage{url: v.url, htmx: v.htmx, resp: resp})
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			continue
		}
		doc := parseHTML(t, resp.body)
		for _, f := range sp.formsOf(t, doc, v.url) {
			if f.method == http.MethodGet {
				u, _ := url.Parse(f.path)
				names := res.queryNames[f.route.Path]
				if names == nil {
					names = map[string]bool{}
					res.queryNames[f.route.Path] = names
				}
				for name := range f.fields {
					names[name] = true
				}
				for name := range u.Query() {
					names[name] = true
				}
				if secIsPublicPath(f.route.Path) {
					continue
				}
				target := u.Path
				if q := secMergeQuery(u.Query(), f.fields).Encode(); q != "" {
					target += "?" + q
				}
				enqueue(visit{target, f.htmx})
				continue
			}
			if secIsPublicPath(f.route.Path) {
				continue // sign-out and the provider's forms: submitting them would end the session
			}
			if !formsSeen[f.key()] {
				formsSeen[f.key()] = true
				res.forms = append(res.forms, f)
			}
		}
	}
	return res
}

func secMergeQuery(a, b url.Values) url.Values {
	out := url.Values{}
	for k, v := range a {
		out[k] = append([]string(nil), v...)
	}
	for k, v := range b {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// formsOf lists the requests a page offers: links, forms and elements with hx-* verbs. Targets that
// are not registered routes are reported (a page that links nowhere is broken).
func (sp *secPortal) formsOf(t *testing.T, doc *goquery.Document, pageURL string) []secFormInfo {
	t.Helper()
	var out []secFormInfo
	add := func(method, target string, fields url.Values, files []string, multipart, htmxReq bool) {
		if target == "" {
			target = pageURL
		}
		u, err := url.Parse(secResolveRef(pageURL, target))
		if err != nil || (u.Host != "" && u.Host != strings.TrimPrefix(sp.URL, "http://")) {
			return // another site, or unparsable
		}
		if !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "/static/") || strings.HasPrefix(u.Path, "/idp/") {
			return
		}
		route, ok := sp.matchRoute(method, u.Path)
		if !ok {
			t.Errorf("page %s offers %s %s, which is no registered route", pageURL, method, u.Path)
			return
		}
		path := u.Path
		if u.RawQuery != "" {
			path += "?" + u.RawQuery
		}
		out = append(out, secFormInfo{route: route, method: method, path: path, fields: fields, files: files,
			multipart: multipart, htmx: htmxReq, source: pageURL})
	}
	doc.Find("a[href]").Each(func(_ int, s *goquery.Selection) {
		href := s.AttrOr("href", "")
		if strings.HasPrefix(href, "#") || strings.HasPrefix(href, "mailto:") || strings.HasPrefix(href, "tel:") {
			return
		}
		if _, isHX := s.Attr("hx-get"); isHX {
			return // handled below
		}
		add(http.MethodGet, href, url.Values{}, nil, false, false)
	})
	doc.Find("form").Each(func(_ int, s *goquery.Selection) {
		method, target, htmxReq := secHxVerb(s)
		if method == "" {
			method = strings.ToUpper(s.AttrOr("method", "GET"))
			target = s.AttrOr("action", "")
		}
		fields, files := secFormFields(s)
		secIncluded(doc, s, fields)
		multipart := s.AttrOr("enctype", "") == "multipart/form-data" || s.AttrOr("hx-encoding", "") == "multipart/form-data"
		add(method, target, fields, files, multipart || len(files) > 0, htmxReq)
	})
	doc.Find("[hx-get],[hx-post],[hx-put],[hx-patch],[hx-delete]").Not("form").Each(func(_ int, s *goquery.Selection) {
		method, target, _ := secHxVerb(s)
		fields, files := url.Values{}, []string(nil)
		if method != http.MethodGet {
			if form := s.Closest("form"); form.Length() > 0 {
				fields, files = secFormFields(form)
			}
		}
		if name, ok := s.Attr("name"); ok && name != "" {
			fields.Set(name, s.AttrOr("value", ""))
		}
		secIncluded(doc, s, fields)
		if vals := s.AttrOr("hx-vals", ""); vals != "" && !strings.HasPrefix(vals, "js:") && !strings.HasPrefix(vals, "javascript:") {
			var static map[string]any
			if json.Unmarshal([]byte(vals), &static) == nil {
				for k, v := range static {
					b, _ := json.Marshal(v)
					fields.Set(k, strings.Trim(string(b), `"`))
				}
			}
		}
		add(method, target, fields, files, len(files) > 0, true)
	})
	return out
}

// secIncluded adds what the element's hx-include names by id (e.g. "#quote-digest"), as htmx does.
func secIncluded(doc *goquery.Document, s *goquery.Selection, fields url.Values) {
	for sel := range strings.SplitSeq(s.AttrOr("hx-include", ""), ",") {
		sel = strings.TrimSpace(sel)
		if !strings.HasPrefix(sel, "#") {
			continue
		}
		doc.Find(sel).Each(func(_ int, in *goquery.Selection) {
			if name := in.AttrOr("name", ""); name != "" {
				fields.Set(name, in.AttrOr("value", ""))
			}
		})
	}
}

// secHxVerb returns the htmx verb and target of an element, or "" when it has none.
func secHxVerb(s *goquery.Selection) (method, target string, htmxReq bool) {
	for _, verb := range []string{"get", "post", "put", "patch", "delete"} {
		if v, ok := s.Attr("hx-" + verb); ok {
			return strings.ToUpper(verb), v, true
		}
	}
	return "", "", false
}

// secFormFields are the named controls of a form with their default values, and its file inputs.
func secFormFields(form *goquery.Selection) (url.Values, []string) {
	fields := url.Values{}
	var files []string
	form.Find("input, select, textarea, button").Each(func(_ int, s *goquery.Selection) {
		name := s.AttrOr("name", "")
		if name == "" {
			return
		}
		switch {
		case s.Is("input[type=file]"):
			files = append(files, name)
		case s.Is("select"):
			opt := s.Find("option[selected]").First()
			if opt.Length() == 0 {
				opt = s.Find("option").First()
			}
			fields.Add(name, opt.AttrOr("value", opt.Text()))
		case s.Is("textarea"):
			fields.Add(name, s.Text())
		case s.Is("input[type=checkbox], input[type=radio]"):
			if _, checked := s.Attr("checked"); checked || fields.Get(name) == "" {
				fields.Set(name, s.AttrOr("value", "on"))
			}
		default:
			fields.Add(name, s.AttrOr("value", ""))
		}
	})
	return fields, files
}

func secResolveRef(base, ref string) string {
	b, err := url.Parse("http://portal.invalid" + base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	out := b.ResolveReference(r)
	if out.Host == "portal.invalid" {
		out.Scheme, out.Host = "", ""
	}
	return out.String()
}
