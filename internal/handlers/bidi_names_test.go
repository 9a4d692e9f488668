package handlers

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Issue 38, item 4: a name ending in U+202E RIGHT-TO-LEFT OVERRIDE reversed what followed it on
// the line (the archive confirmation's amounts). Names stored before the portal refused such
// characters, or written by another client of the v2 API, are shown isolated: inside a <bdi> or
// an element with dir="auto" holding nothing else of the line, or, in plain text (a confirmation
// question, a toast, the palette's JSON), between U+2068 FIRST STRONG ISOLATE and U+2069 POP
// DIRECTIONAL ISOLATE.

const rlo = "\u202e"

// bidiWorldText puts a right-to-left override at the end of every stored text.
func bidiWorldText() secWorldText {
	text := secPlainText("bidi")
	text.name = "Bidi Name" + rlo
	text.street = "Bidi Street" + rlo
	text.city = "Bidi City" + rlo
	text.label = "Bidi Label" + rlo
	text.contact = "Bidi Contact" + rlo
	text.signer = "Bidi Signer" + rlo
	text.fileName = "bidi" + rlo + "annex.pdf"
	return text
}

// unisolated lists the places of body (HTML, or plain text when html is false) where an override
// is not isolated.
func unisolated(body string, isHTML bool) []string {
	if !isHTML {
		return unisolatedInText(body)
	}
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		return []string{"does not parse: " + err.Error()}
	}
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "title", "textarea", "option", "script", "style":
				// Each is its own paragraph (a form control, the window's title) or no text shown;
				// script holds JSON checked as text below.
				if n.Data == "script" && n.FirstChild != nil {
					out = append(out, unisolatedInText(n.FirstChild.Data)...)
				}
				return
			}
			for _, a := range n.Attr {
				if strings.Contains(a.Val, rlo) && (a.Key == "title" || a.Key == "aria-label" || a.Key == "placeholder" || a.Key == "hx-confirm" || a.Key == "data-confirm") {
					for _, p := range unisolatedInText(a.Val) {
						out = append(out, fmt.Sprintf("<%s %s>: %s", n.Data, a.Key, p))
					}
				}
			}
		}
		if n.Type == html.TextNode && strings.Contains(n.Data, rlo) && !isolatedElement(n) {
			for _, p := range unisolatedInText(n.Data) {
				out = append(out, fmt.Sprintf("<%s>: %s", parentName(n), p))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

// isolatedElement reports whether the text node n sits in a <bdi> or dir="auto" element at most
// three levels up, below any block that holds a whole region (a table, a section, a form): an
// element around the name or the one value of the v2 API holding it.
func isolatedElement(n *html.Node) bool {
	for p, depth := n.Parent, 0; p != nil && depth < 3; p, depth = p.Parent, depth+1 {
		if p.Type != html.ElementNode {
			continue
		}
		switch p.Data {
		case "body", "main", "section", "table", "tbody", "form", "ul", "ol", "dl", "html":
			return false
		}
		isolating := p.Data == "bdi"
		for _, a := range p.Attr {
			if a.Key == "dir" && a.Val == "auto" {
				isolating = true
			}
		}
		if isolating {
			return true
		}
	}
	return false
}

func parentName(n *html.Node) string {
	if n.Parent != nil {
		return n.Parent.Data
	}
	return "?"
}

// unisolatedInText returns, for every override in s not enclosed by U+2068 … U+2069, the text
// around it.
func unisolatedInText(s string) []string {
	var out []string
	depth := 0
	for i, r := range s {
		switch r {
		case '\u2066', '\u2067', '\u2068':
			depth++
		case '\u2069':
			if depth > 0 {
				depth--
			}
		case '\u202e':
			if depth == 0 {
				from, to := max(0, i-40), min(len(s), i+40)
				out = append(out, fmt.Sprintf("%+q", strings.ToValidUTF8(s[from:to], "")))
			}
		}
	}
	return out
}

func TestHostileNamesAreIsolatedOnEveryPage(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	user := sp.login(t, "sales", "sales-demo")
	w := sp.buildWorld(t, sp.tokenOf(t, user), bidiWorldText())
	samples := w.sampleValues()
	crawled := sp.crawl(t, user, samples)
	shown := 0
	for _, page := range crawled.pages {
		if !strings.Contains(page.resp.body, rlo) {
			continue
		}
		shown++
		ct := page.resp.Header.Get("Content-Type")
		if page.resp.Header.Get("Content-Disposition") != "" || strings.Contains(page.url, "/evidence/") {
			continue // a download (the evidence's JSON, a CSV): the data as stored, not a page
		}
		if !strings.HasPrefix(ct, "text/html") && !strings.HasPrefix(ct, "application/json") {
			continue // downloads (CSV, PDF) are files, not pages
		}
		for _, p := range unisolated(page.resp.body, strings.HasPrefix(ct, "text/html")) {
			t.Errorf("GET %s (htmx %v): a name is not isolated at %s", page.url, page.htmx, p)
		}
	}
	if shown == 0 {
		t.Fatal("no page showed the stored names: the check above was vacuous")
	}
	t.Logf("%d of %d pages show a name with U+202E", shown, len(crawled.pages))
}
