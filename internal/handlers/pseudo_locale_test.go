package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/cpqportal/portal/internal/countries"
	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/offer"
)

// TestPseudoLocaleLeavesNoUntranslatedText renders every page and partial a user can reach (the
// security crawler's walk, with a full world: customer, quote, cart, contract, attachment), every
// form's answer to empty input, the error pages, every confirmation the pages offer (issue 33) and
// the offer's PDF, in the pseudo-locale, where every catalogue
// message is wrapped in ⟦ ⟧. Any visible word outside the brackets must then come from the v2
// API's answers (names, products, its messages), the signed-in user, or a language's own name in
// the menu; anything else is English that did not go through the translator.
func TestPseudoLocaleLeavesNoUntranslatedText(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{pseudo: true})
	user := sp.login(t, "sales", "sales-demo")
	base, _ := url.Parse(sp.URL)
	user.Jar.SetCookies(base, []*http.Cookie{{Name: i18n.CookieName, Value: i18n.Pseudo.String(), Path: "/"}})
	w := sp.buildWorld(t, sp.tokenOf(t, user), secPlainText("pseudo"))
	samples := w.sampleValues()

	allowed := sp.upstream
	for _, u := range demoidp.DemoUsers() {
		allowed.add(u.Name + " " + u.Email)
	}
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, choice := range bundle.Choices() {
		allowed.add(choice.Name) // each language names itself, in every language
	}
	allowed.add("CPQ Portal") // the product's name
	for _, country := range countries.New().In(i18n.Pseudo) {
		allowed.add(country.Name) // CLDR's names of countries (internal/countries), not catalogue text
	}

	crawled := sp.crawl(t, user, samples)
	checked := 0
	for _, page := range crawled.pages {
		what := fmt.Sprintf("GET %s (htmx %v)", page.url, page.htmx)
		checked += pseudoCheckResponse(t, what, page.resp, allowed)
	}
	for _, f := range crawled.forms {
		resp := sp.submit(t, user, f, url.Values{}, nil)
		what := fmt.Sprintf("%s %s (from %s) with its default values", f.method, f.route.Path, f.source)
		checked += pseudoCheckResponse(t, what, resp, allowed)
	}
	for _, path := range []string{"/no-such-page", "/customers/0", "/quotes/1/1/notanumber", "/contracts/lookup?q=%00"} {
		checked += pseudoCheckResponse(t, "GET "+path, sp.get(t, user, path, nil), allowed)
		checked += pseudoCheckResponse(t, "htmx GET "+path, sp.get(t, user, path, map[string]string{"HX-Request": "true"}), allowed)
	}
	if checked < 200 {
		t.Fatalf("only %d texts checked: the crawl did not reach the pages", checked)
	}
	if n := pseudoCheckConfirmations(t, sp, user, crawled, allowed); n < 5 {
		t.Errorf("only %d confirmations checked: the crawl did not reach them", n)
	}
	// The offer (a PDF made in the reader's language when none is chosen) shows its words too.
	offerURL := fmt.Sprintf("/quotes/1/%d/%d/offer", w.customerID, w.quoteID)
	resp := sp.get(t, user, offerURL, nil)
	text, err := offer.Text([]byte(resp.body))
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("GET %s: %d %v", offerURL, resp.StatusCode, err)
	}
	// The offer draws the markers ⟦ ⟧, which no embedded font has, as [[ ]] (internal/offer).
	markers := strings.NewReplacer("[[", "⟦", "]]", "⟧")
	for _, line := range strings.Split(text, "\n") {
		line = markers.Replace(line)
		if leftover := allowed.untranslated(line); leftover != "" || strings.Contains(line, "%!") {
			t.Errorf("GET %s: untranslated %q or a format error in the offer's line %q", offerURL, leftover, strings.TrimSpace(line))
		}
	}
}

// pseudoCheckConfirmations asks every confirmation a crawled page offers ([data-confirm-url],
// read when the person acts: app.js sends a form's fields along) and checks the question. Owner
// ids are typed into the owner forms, as a person would, so the questions are asked. It returns
// how many questions it checked.
func pseudoCheckConfirmations(t *testing.T, sp *secPortal, user *http.Client, crawled *secCrawlResult, allowed *secUpstreamWords) int {
	t.Helper()
	typed := map[string]string{"ownerIds": "1002, 1003", "newOwnerId": "1003"}
	asked := map[string]bool{}
	checked := 0
	for _, page := range crawled.pages {
		if !strings.HasPrefix(page.resp.Header.Get("Content-Type"), "text/html") {
			continue
		}
		doc := parseHTML(t, page.resp.body)
		doc.Find("[data-confirm-url]").Each(func(_ int, s *goquery.Selection) {
			target := s.AttrOr("data-confirm-url", "")
			if goquery.NodeName(s) == "form" {
				fields, _ := secFormFields(s)
				for name, value := range typed {
					if _, ok := fields[name]; ok && fields.Get(name) == "" {
						fields.Set(name, value)
					}
				}
				if q := fields.Encode(); q != "" {
					target += "?" + q
				}
			}
			if asked[target] {
				return
			}
			asked[target] = true
			resp := sp.get(t, user, target, map[string]string{"HX-Request": "true"})
			var answer confirmation
			if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(resp.body), &answer) != nil {
				t.Errorf("confirmation %s (from %s): %d %.200s", target, page.url, resp.StatusCode, resp.body)
				return
			}
			if answer.Unasked {
				return
			}
			checked++
			if leftover := allowed.untranslated(answer.Question); leftover != "" || strings.Contains(answer.Question, "%!") {
				t.Errorf("confirmation %s (from %s): untranslated %q or a format error in %q", target, page.url, leftover, answer.Question)
			}
		})
	}
	return checked
}

// pseudoCheckResponse checks an HTML answer's visible text, the attributes people read
// (aria-label, title, placeholder, alt, the value of buttons) and its toasts and announcements
// (HX-Trigger). It returns how many texts it checked.
func pseudoCheckResponse(t *testing.T, what string, resp response, allowed *secUpstreamWords) int {
	t.Helper()
	checked := 0
	check := func(where, text string) {
		t.Helper()
		checked++
		if leftover := allowed.untranslated(text); leftover != "" {
			t.Errorf("%s: untranslated %q in %s %q", what, leftover, where, strings.TrimSpace(text))
		}
		if strings.Contains(text, "%!") {
			t.Errorf("%s: a format error in %s %q", what, where, strings.TrimSpace(text))
		}
	}
	if trigger := resp.Header.Get("HX-Trigger"); strings.HasPrefix(trigger, "{") {
		var events map[string]json.RawMessage
		if err := json.Unmarshal([]byte(trigger), &events); err == nil {
			for name, raw := range events {
				var toast struct{ Message string }
				var text string
				if json.Unmarshal(raw, &toast) == nil && toast.Message != "" {
					check("the toast", toast.Message)
				} else if json.Unmarshal(raw, &text) == nil && text != "" {
					check("the event "+name, text)
				}
			}
		}
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || (resp.StatusCode >= 300 && resp.StatusCode < 400) {
		return checked // a redirect's body ("See Other") is never shown: the browser follows it
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(resp.body))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	doc.Find("script, style, template, noscript").Remove()
	// A time or a zone's name inside a sentence is an element of its own (app.js may show it in
	// the browser's zone, components.TimeSentence): the sentence is checked as one text.
	doc.Find("time, [data-tz-name]").Each(func(_ int, s *goquery.Selection) {
		s.ReplaceWithNodes(&html.Node{Type: html.TextNode, Data: s.Text()})
	})
	mergeTextNodes(doc.Nodes...)
	for _, n := range doc.Nodes {
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.TextNode && strings.TrimSpace(n.Data) != "" && !inOtherLanguage(n.Parent) {
				check("the text of <"+n.Parent.Data+">", n.Data)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(n)
	}
	doc.Find("[aria-label], [title], [placeholder], [alt], [aria-description], [aria-roledescription], input[type=submit][value], input[type=button][value]").Each(func(_ int, s *goquery.Selection) {
		for _, name := range []string{"aria-label", "title", "placeholder", "alt", "aria-description", "aria-roledescription"} {
			if v, ok := s.Attr(name); ok && strings.TrimSpace(v) != "" {
				check("the "+name+" of <"+goquery.NodeName(s)+">", v)
			}
		}
		if typ := s.AttrOr("type", ""); goquery.NodeName(s) == "input" && (typ == "submit" || typ == "button") {
			check("a button's value", s.AttrOr("value", ""))
		}
	})
	return checked
}

// secUpstreamWords are the words of the v2 API's answers (and a few more allowed sources): text
// the portal shows as it comes, untranslated by design.
type secUpstreamWords struct {
	mu    sync.Mutex
	words map[string]bool
}

// wordPattern finds words: runs of letters (with inner apostrophes), as people read them.
var wordPattern = regexp.MustCompile(`\p{L}+(?:['’]\p{L}+)*`)

// pseudoBrackets matches one innermost bracketed (translated) message.
var pseudoBrackets = regexp.MustCompile(`⟦[^⟦⟧]*⟧`)

func (u *secUpstreamWords) add(text string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, w := range wordPattern.FindAllString(text, -1) {
		u.words[strings.ToLower(w)] = true
	}
}

// addJSON adds every string and every object key of a JSON document.
func (u *secUpstreamWords) addJSON(data []byte) {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		if s, ok := tok.(string); ok {
			u.add(s)
		}
	}
}

// untranslated strips the translated (bracketed) parts of text and returns the first remaining
// word that is neither from the allowed sources nor a code (all capitals, like EUR, PDF, or a
// request id), or "".
func (u *secUpstreamWords) untranslated(text string) string {
	for {
		stripped := pseudoBrackets.ReplaceAllString(text, " ")
		if stripped == text {
			break
		}
		text = stripped
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, field := range strings.Fields(text) {
		if strings.ContainsAny(field, "@/0123456789") { // e-mail addresses, paths, ids, amounts, file names with numbers
			continue
		}
		for _, w := range wordPattern.FindAllString(field, -1) {
			if u.words[strings.ToLower(w)] || isCode(w) {
				continue
			}
			return w
		}
	}
	return ""
}

// isCode reports an all-capitals word (currency and format codes, ids), which no language translates.
func isCode(w string) bool {
	for _, r := range w {
		if !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// recording wraps the portal's v2 transport: each JSON answer's words are added.
func (u *secUpstreamWords) recording(next http.RoundTripper) http.RoundTripper {
	return secRoundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
			return resp, err
		}
		body, readErr := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if readErr != nil {
			return nil, readErr
		}
		u.addJSON(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	})
}

type secRoundTripFunc func(*http.Request) (*http.Response, error)

func (f secRoundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// mergeTextNodes joins adjacent text nodes under nodes into one.
func mergeTextNodes(nodes ...*html.Node) {
	for _, n := range nodes {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			for c.Type == html.TextNode && c.NextSibling != nil && c.NextSibling.Type == html.TextNode {
				next := c.NextSibling
				c.Data += next.Data
				n.RemoveChild(next)
			}
			mergeTextNodes(c)
		}
	}
}

// inOtherLanguage reports whether n says it holds text in a language of its own (lang="it" on the
// offer mail's message, prefilled in the customer's language): not the reader's, so not checked.
func inOtherLanguage(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key == "lang" && a.Val != i18n.Pseudo.String() && n.Data != "html" {
			return true
		}
	}
	return false
}
