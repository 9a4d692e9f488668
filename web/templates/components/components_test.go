package components

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/cpqportal/portal/internal/i18n"
)

const xss = `<script>alert(1)</script>`

// render renders a component and parses it as an HTML fragment.
func render(t *testing.T, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var b strings.Builder
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Render(i18n.WithTranslator(context.Background(), bundle.Translator(i18n.Source)), &b); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc, b.String()
}

func noScript(t *testing.T, doc *goquery.Document, html string) {
	t.Helper()
	if n := doc.Find("script").Length(); n != 0 {
		t.Errorf("found %d <script> elements: the payload was not escaped:\n%s", n, html)
	}
	if strings.Contains(html, xss) {
		t.Errorf("raw payload in output:\n%s", html)
	}
}

func TestErrorPage(t *testing.T) {
	t.Parallel()
	doc, html := render(t, ErrorPage(404, "Customer not found", "customer 17 "+xss, "req-123", Link{Href: "/customers", Label: "Back to customers"}))
	page := doc.Find(`[data-testid="error-page"]`)
	if got := page.AttrOr("data-status", ""); got != "404" {
		t.Errorf("data-status = %q", got)
	}
	if got := doc.Find(`[data-testid="error-title"]`).Text(); got != "Customer not found" {
		t.Errorf("title = %q", got)
	}
	if got := doc.Find(`[data-testid="error-message"]`).Text(); got != "customer 17 "+xss {
		t.Errorf("message = %q, want the payload as visible text", got)
	}
	if got := doc.Find(`[data-testid="error-request-id"]`).Text(); got != "req-123" {
		t.Errorf("request id = %q", got)
	}
	back := doc.Find(`[data-testid="error-back"]`)
	if back.AttrOr("href", "") != "/customers" || back.Text() != "Back to customers" {
		t.Errorf("back link = %q %q", back.AttrOr("href", ""), back.Text())
	}
	noScript(t, doc, html)
}

func TestErrorPageWithoutOptionalParts(t *testing.T) {
	t.Parallel()
	doc, _ := render(t, ErrorPage(500, "Something went wrong", "", "", Link{}))
	for _, id := range []string{"error-message", "error-request-id", "error-back"} {
		if doc.Find(`[data-testid="`+id+`"]`).Length() != 0 {
			t.Errorf("%s rendered although empty", id)
		}
	}
}

func TestToast(t *testing.T) {
	t.Parallel()
	doc, html := render(t, Toast(ToastError, "Saving failed: "+xss, "req-9"))
	wrapper := doc.Find(`[hx-swap-oob]`)
	if got := wrapper.AttrOr("hx-swap-oob", ""); got != "beforeend:#toasts" {
		t.Errorf("hx-swap-oob = %q, want beforeend:#toasts", got)
	}
	toast := wrapper.Find(`[data-testid="toast"]`)
	if toast.Length() != 1 {
		t.Fatalf("want the toast inside the out-of-band wrapper:\n%s", html)
	}
	if toast.AttrOr("role", "") != "alert" || toast.AttrOr("data-level", "") != "error" || !toast.HasClass("toast--error") {
		t.Errorf("error toast: role=%q level=%q class=%q", toast.AttrOr("role", ""), toast.AttrOr("data-level", ""), toast.AttrOr("class", ""))
	}
	if !strings.Contains(toast.Text(), "Saving failed: "+xss) || !strings.Contains(toast.Text(), "Request id: req-9") {
		t.Errorf("toast text = %q", toast.Text())
	}
	if toast.Find(`button[data-dismiss="toast"]`).Length() != 1 {
		t.Error("toast has no dismiss button")
	}
	noScript(t, doc, html)

	info, _ := render(t, ToastInline("bogus", "Saved", ""))
	if lvl := info.Find(`[data-testid="toast"]`).AttrOr("data-level", ""); lvl != "info" {
		t.Errorf("unknown level rendered as %q, want info", lvl)
	}
	if info.Find(".toast__meta").Length() != 0 {
		t.Error("request id line rendered without a request id")
	}
	if info.Find(`[data-testid="toast"]`).AttrOr("role", "") != "status" {
		t.Error("an info toast must be role=status, not alert")
	}
}

func TestFormFields(t *testing.T) {
	t.Parallel()
	name := Field{Name: "name", Label: "Name", Value: `Acme "S.p.A." ` + xss, Error: "Enter a name", Hint: "As on the invoice", Required: true,
		Attrs: templ.Attributes{"maxlength": "200"}}
	doc, html := render(t, TextField(name))
	input := doc.Find("input#field-name")
	if input.Length() != 1 {
		t.Fatalf("no input#field-name:\n%s", html)
	}
	checks := map[string]string{
		"name":             "name",
		"type":             "text",
		"value":            `Acme "S.p.A." ` + xss,
		"aria-invalid":     "true",
		"aria-describedby": "field-name-hint field-name-error",
		"maxlength":        "200",
	}
	for attr, want := range checks {
		if got := input.AttrOr(attr, "<missing>"); got != want {
			t.Errorf("input %s = %q, want %q", attr, got, want)
		}
	}
	if _, ok := input.Attr("required"); !ok {
		t.Error("required field without required attribute")
	}
	if got := doc.Find("label[for=field-name]").Length(); got != 1 {
		t.Errorf("want a label for the input, found %d", got)
	}
	if got := doc.Find("#field-name-error").Text(); !strings.Contains(got, "Enter a name") {
		t.Errorf("error text = %q", got)
	}
	if !doc.Find(`[data-testid="field-name"]`).HasClass("field--error") {
		t.Error("field wrapper lacks field--error")
	}
	noScript(t, doc, html)

	ok, _ := render(t, TextField(Field{ID: "tax", Name: "taxId", Label: "Tax id", Value: "IT1"}))
	okInput := ok.Find("input#tax")
	if _, has := okInput.Attr("aria-invalid"); has {
		t.Error("valid field has aria-invalid")
	}
	if _, has := okInput.Attr("aria-describedby"); has {
		t.Error("field without hint or error has aria-describedby")
	}

	sel, _ := render(t, Select(Field{Name: "segment", Label: "Segment", Value: "PUBLIC"},
		[]Option{{"BUSINESS", "Business"}, {"CONSUMER", "Consumer"}, {"PUBLIC", "Public sector"}}))
	if got := sel.Find("select#field-segment option[selected]").AttrOr("value", ""); got != "PUBLIC" {
		t.Errorf("selected option = %q, want PUBLIC", got)
	}
	if sel.Find("option[selected]").Length() != 1 {
		t.Error("exactly one option must be selected")
	}

	area, areaHTML := render(t, TextArea(Field{Name: "message", Label: "Message", Value: "</textarea>" + xss, Error: "Too long"}))
	if got := area.Find("textarea#field-message").Text(); got != "</textarea>"+xss {
		t.Errorf("textarea text = %q", got)
	}
	noScript(t, area, areaHTML)
}

func TestErrorSummary(t *testing.T) {
	t.Parallel()
	fields := []Field{
		{Name: "name", Label: "Name", Error: "Enter a name"},
		{Name: "email", Label: "E-mail"},
		{ID: "tax", Name: "taxId", Label: "Tax id", Error: "Tax id " + xss},
	}
	doc, html := render(t, ErrorSummary("There is a problem", SummaryFrom(fields...)))
	summary := doc.Find(`[data-testid="error-summary"]`)
	if summary.AttrOr("role", "") != "alert" || summary.AttrOr("tabindex", "") != "-1" {
		t.Errorf("summary role/tabindex = %q/%q", summary.AttrOr("role", ""), summary.AttrOr("tabindex", ""))
	}
	if got := summary.Find("h2").Text(); got != "There is a problem" {
		t.Errorf("title = %q", got)
	}
	links := summary.Find("li a")
	if links.Length() != 2 {
		t.Fatalf("want 2 links (fields in error only), got %d", links.Length())
	}
	if links.Eq(0).AttrOr("href", "") != "#field-name" || links.Eq(1).AttrOr("href", "") != "#tax" {
		t.Errorf("links = %q, %q; want #field-name, #tax in form order", links.Eq(0).AttrOr("href", ""), links.Eq(1).AttrOr("href", ""))
	}
	noScript(t, doc, html)

	_, empty := render(t, ErrorSummary("There is a problem", nil))
	if strings.TrimSpace(empty) != "" {
		t.Errorf("summary without errors rendered %q", empty)
	}
}

func TestJSONTree(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"zeta": 1, "alpha": {"name": "` + strings.ReplaceAll(xss, "/", `\/`) + `", "ok": true, "none": null},
		"list": [10, "x", {"deep": [1.50]}], "empty": {}, "nothing": []}`)
	doc, html := render(t, JSONTree(raw))
	tree := doc.Find(`[data-testid="json-tree"]`)
	if tree.Length() != 1 {
		t.Fatalf("no json-tree:\n%s", html)
	}
	keys := tree.Children().First().ChildrenFiltered("dl").ChildrenFiltered("dt").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	if strings.Join(keys, ",") != "zeta,alpha,list,empty,nothing" {
		t.Errorf("top-level keys = %v, want document order", keys)
	}
	if got := tree.Find(`[data-type="string"]`).First().Text(); got != `"`+xss+`"` {
		t.Errorf("string scalar = %q, want the payload quoted as text", got)
	}
	if tree.Find(`[data-type="bool"]`).Text() != "true" || tree.Find(`[data-type="null"]`).Length() != 1 {
		t.Error("bool/null scalars not rendered with their types")
	}
	if got := tree.Find(`ol > li`).Length(); got != 4 { // 3 items of "list" + 1 of "deep"
		t.Errorf("array items = %d, want 4", got)
	}
	if got := tree.Find(`[data-type="number"]`).Last().Text(); got != "1.50" {
		t.Errorf("number = %q, want 1.50 exactly as sent", got)
	}
	if tree.Find(`details[data-type="object"]`).First().AttrOr("open", "<closed>") == "<closed>" {
		t.Error("top-level object is collapsed; want it open")
	}
	if tree.Find(`.json-empty`).Length() != 2 {
		t.Error("empty object and array should render as {} and []")
	}
	noScript(t, doc, html)
}

func TestJSONTreeGoValues(t *testing.T) {
	t.Parallel()
	type customer struct {
		ID   int32             `json:"id"`
		Name string            `json:"name"`
		Tags map[string]string `json:"tags"`
	}
	doc, html := render(t, JSONTree(customer{ID: 17, Name: xss, Tags: map[string]string{"b": "2", "a": "1"}}))
	dts := doc.Find("dt").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	if strings.Join(dts, ",") != "id,name,tags,a,b" {
		t.Errorf("keys = %v", dts)
	}
	noScript(t, doc, html)

	decoded := map[string]any{"b": []any{true, nil}, "a": 2.5}
	d2, _ := render(t, JSONTree(decoded))
	if got := strings.Join(d2.Find("dt").Map(func(_ int, s *goquery.Selection) string { return s.Text() }), ","); got != "a,b" {
		t.Errorf("decoded map keys = %q, want sorted", got)
	}

	bad, _ := render(t, JSONTree(json.RawMessage(`{"a": `)))
	if bad.Find(`[data-type="truncated"]`).Length() != 1 {
		t.Error("invalid JSON should render a note, not panic or print raw text")
	}
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	d3, _ := render(t, JSONTree(json.RawMessage(deep)))
	if d3.Find(`[data-type="truncated"]`).Length() != 1 {
		t.Error("too deep JSON should be cut with a note")
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("/customers?q=acme&page=1")
	doc, html := render(t, Pagination(NewPager(*base, "page", 6, 20, "#customer-list")))
	nav := doc.Find(`[data-testid="pagination"]`)
	if nav.Length() != 1 {
		t.Fatalf("no pagination:\n%s", html)
	}
	pages := nav.Find("a:not([rel])").Map(func(_ int, s *goquery.Selection) string { return strings.TrimPrefix(s.Text(), "Page ") })
	if strings.Join(pages, ",") != "1,4,5,6,7,8,20" {
		t.Errorf("page links = %v", pages)
	}
	if nav.Find("span[aria-hidden]").Length() != 2 {
		t.Error("want two gaps")
	}
	current := nav.Find(`a[aria-current="page"]`)
	if current.AttrOr("href", "") != "/customers?page=6&q=acme" {
		t.Errorf("current href = %q", current.AttrOr("href", ""))
	}
	prev := nav.Find(`a[rel="prev"]`)
	if prev.AttrOr("href", "") != "/customers?page=5&q=acme" || prev.AttrOr("hx-target", "") != "#customer-list" || prev.AttrOr("hx-get", "") != prev.AttrOr("href", "") {
		t.Errorf("prev link: href=%q hx-get=%q hx-target=%q", prev.AttrOr("href", ""), prev.AttrOr("hx-get", ""), prev.AttrOr("hx-target", ""))
	}

	_, single := render(t, Pagination(NewPager(*base, "page", 1, 1, "")))
	if strings.TrimSpace(single) != "" {
		t.Errorf("single page rendered a pager: %q", single)
	}
	clamped := NewPager(*base, "page", 99, 3, "")
	if clamped.Page != 3 || clamped.Next != "" || clamped.Prev == "" {
		t.Errorf("page beyond the end: %+v", clamped)
	}
}

func TestSmallComponents(t *testing.T) {
	t.Parallel()
	spin, _ := render(t, Spinner("save-spinner", "Saving…"))
	s := spin.Find(`[data-testid="spinner"]`)
	if !s.HasClass("htmx-indicator") || s.AttrOr("id", "") != "save-spinner" || s.Find(".visually-hidden").Text() != "Saving…" {
		t.Errorf("spinner: class=%q id=%q", s.AttrOr("class", ""), s.AttrOr("id", ""))
	}

	empty, emptyHTML := render(t, EmptyState("No customers yet", xss, Link{Href: "/customers/new", Label: "Create a customer"}))
	e := empty.Find(`[data-testid="empty-state"]`)
	if e.Find("h2").Text() != "No customers yet" || e.Find("a").AttrOr("href", "") != "/customers/new" {
		t.Errorf("empty state: %q", emptyHTML)
	}
	noScript(t, empty, emptyHTML)

	badge, _ := render(t, Badge(BadgeSuccess, "ARCHIVED"))
	if b := badge.Find(`[data-testid="badge"]`); !b.HasClass("badge--success") || b.Text() != "ARCHIVED" {
		t.Errorf("badge: class=%q text=%q", b.AttrOr("class", ""), b.Text())
	}

	kv, kvHTML := render(t, KeyValues([]KV{{Key: "Tax id", Value: "IT01234567890"}, {Key: "Name", Value: xss}}))
	if kv.Find("dt").Length() != 2 || kv.Find("dd").Last().Text() != xss {
		t.Errorf("key/values: %s", kvHTML)
	}
	noScript(t, kv, kvHTML)
}

// TestTimes: a time is a <time> whose datetime is RFC 3339 in UTC whatever zone it is shown in,
// whose data-t says the detail app.js keeps (minutes, seconds), and whose text is the instant in
// the translator's zone with the zone named; the zero time shows nothing.
func TestTimes(t *testing.T) {
	t.Parallel()
	rome, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 14, 3, 9, 500, rome) // 13:03:09 UTC
	for _, tc := range []struct {
		c          templ.Component
		detail     string
		text, zone string
	}{
		{DateTime(at), "m", "25 Nov 2026, 13:03 UTC", ""},
		{Timestamp(at), "s", "25 Nov 2026, 13:03:09 UTC", ""},
		{TimeSentence("Batch of "+TimeMark+"!", at), "m", "Batch of 25 Nov 2026, 13:03 UTC!", ""},
		{ZoneSentence("Times in "+ZoneMark+".", "Europe/Rome"), "", "Times in Europe/Rome.", "Europe/Rome"},
	} {
		doc, html := render(t, tc.c)
		if got := strings.Join(strings.Fields(doc.Text()), " "); got != tc.text {
			t.Errorf("text %q, want %q: %s", got, tc.text, html)
		}
		if tc.detail != "" {
			el := doc.Find("time")
			if el.AttrOr("datetime", "") != "2026-11-25T13:03:09Z" || el.AttrOr("data-t", "") != tc.detail {
				t.Errorf("want <time datetime=\"2026-11-25T13:03:09Z\" data-t=%q>: %s", tc.detail, html)
			}
		}
		if got := doc.Find("[data-tz-name]").Text(); got != tc.zone {
			t.Errorf("zone name %q, want %q: %s", got, tc.zone, html)
		}
	}
	for _, c := range []templ.Component{DateTime(time.Time{}), Timestamp(time.Time{})} {
		if _, html := render(t, c); html != "" {
			t.Errorf("the zero time shows %q", html)
		}
	}
	kv, html := render(t, KeyValues([]KV{{Key: "Created", Value: "—", At: at}, {Key: "Updated", Value: "—"}}))
	if kv.Find("dd time[data-t]").Length() != 1 || kv.Find("dd").Last().Text() != "—" {
		t.Errorf("key/values with times: %s", html)
	}
}
