package customers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
)

const xss = `<script>alert(1)</script>`

// english is the catalogues' English translator.
func english(t *testing.T) *i18n.Translator { return translator(t, "en") }

// translator is the catalogues' translator of lang.
func translator(t *testing.T, lang string) *i18n.Translator {
	t.Helper()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	tag, ok := bundle.Supported(lang)
	if !ok {
		t.Fatalf("no language %q", lang)
	}
	return bundle.Translator(tag)
}

func render(t *testing.T, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var b strings.Builder
	if err := c.Render(i18n.WithTranslator(context.Background(), english(t)), &b); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc, b.String()
}

func TestResultsPartialEscapesAndMarksRows(t *testing.T) {
	t.Parallel()
	vm := ResultsVM{
		Query: xss, Sort: "name", Total: 1, From: 1, To: 1,
		Rows:    []RowVM{{ID: 7, Name: xss, TaxID: "IT01234567890", Source: "Customer list", Href: "/customers/7"}},
		Columns: []ColumnVM{{Label: "Name", Key: "name", Href: "/customers?sort=name&dir=desc", AriaSort: "ascending"}},
	}
	doc, html := render(t, ResultsPartial(vm))
	if doc.Find("script").Length() != 0 || strings.Contains(html, xss) {
		t.Fatalf("payload not escaped:\n%s", html)
	}
	row := doc.Find(`[data-testid="customer-row"]`)
	if row.AttrOr("data-customer-id", "") != "7" || row.Find(`[data-testid="customer-link"]`).Text() != xss {
		t.Errorf("row: %s", html)
	}
	if doc.Find(`input[name="sort"][form="customer-search"]`).AttrOr("value", "") != "name" ||
		doc.Find(`input[name="dir"][form="customer-search"]`).AttrOr("value", "") != "asc" {
		t.Error("the order is not carried for the search form")
	}
	if got := doc.Find(`th[aria-sort="ascending"] a`).AttrOr("hx-target", ""); got != "#customer-results" {
		t.Errorf("sort link target %q", got)
	}
}

func TestResultsPartialStates(t *testing.T) {
	t.Parallel()
	doc, _ := render(t, ResultsPartial(ResultsVM{Error: "The CPQ service is not answering.", RetryURL: "/customers?q=a"}))
	if doc.Find(`[data-testid="customer-list-error"][role="alert"]`).Length() != 1 ||
		doc.Find(`[data-testid="customer-list-retry"]`).AttrOr("hx-get", "") != "/customers?q=a" {
		t.Error("error state")
	}
	doc, _ = render(t, ResultsPartial(ResultsVM{Loading: true, LoadURL: "/customers?q=b"}))
	if l := doc.Find(`[data-testid="customer-list-loading"]`); l.AttrOr("hx-trigger", "") != "load" || l.AttrOr("hx-get", "") != "/customers?q=b" {
		t.Error("loading state")
	}
	doc, _ = render(t, ResultsPartial(ResultsVM{Query: "zz"}))
	if doc.Find(`[data-testid="empty-state"]`).Length() != 1 {
		t.Error("empty state")
	}
}

func TestCountText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vm   ResultsVM
		want string
	}{
		{ResultsVM{}, "No customers found."},
		{ResultsVM{Query: "a", Total: 1, From: 1, To: 1}, "1 customer found."},
		{ResultsVM{Total: 100000, From: 26, To: 50}, "100,000 customers in all, showing 26–50."},
		{ResultsVM{Query: "x", Total: 12, From: 1, To: 12}, "12 customers found."},
	} {
		if got := tc.vm.CountText(english(t)); got != tc.want {
			t.Errorf("CountText(%+v) = %q, want %q", tc.vm, got, tc.want)
		}
	}
	if it := (ResultsVM{Total: 100000, From: 26, To: 50}).CountText(translator(t, "it")); it != "100.000 clienti in tutto, visualizzati 26–50." {
		t.Errorf("Italian count %q", it)
	}
	// One and several in the grammatical number of the language, counts grouped its way.
	for _, tc := range []struct {
		lang string
		vm   ResultsVM
		want string
	}{
		{"fr", ResultsVM{Query: "a", Total: 1, From: 1, To: 1}, "1 client trouvé."},
		{"fr", ResultsVM{Query: "a", Total: 2, From: 1, To: 2}, "2 clients trouvés."},
		{"de", ResultsVM{Total: 1, From: 1, To: 1}, "1 Kunde insgesamt."},
		{"es", ResultsVM{Total: 12, From: 1, To: 12}, "12 clientes en total."},
	} {
		if got := tc.vm.CountText(translator(t, tc.lang)); got != tc.want {
			t.Errorf("%s: CountText(%+v) = %q, want %q", tc.lang, tc.vm, got, tc.want)
		}
	}
}

// The folded sections (the owner forms, the trees of attributes and other fields) are not in the
// page: each loads its content when opened, and keeps a link to it on a page of its own for a
// browser without JavaScript or a failed load.
func TestDetailPageFoldsSectionsToLoadWhenOpened(t *testing.T) {
	t.Parallel()
	vm := DetailVM{
		ID: 3, Name: xss, Status: "ACTIVE", StartQuoteHref: "/quotes/new?customerId=3", EditHref: "/customers/3/edit",
		Summary:    []components.KV{{Key: "Tax id", Value: "IT01234567890"}},
		Attributes: json.RawMessage(`{"tier":"gold"}`),
		Other:      json.RawMessage(`{"loyalty":{"level":"gold"},"note":"` + strings.ReplaceAll(xss, `"`, `\"`) + `"}`),
		Owners:     OwnersVM{CustomerID: 3},
		Profiles:   ProfilesVM{CustomerID: 3, Form: NewProfileForm(english(t), 3, ProfileInput{}, nil)},
	}
	doc, html := render(t, DetailPage(vm))
	if doc.Find("script").Length() != 0 {
		t.Fatalf("payload not escaped:\n%s", html)
	}
	if doc.Find(`[data-testid="customer-name"]`).Text() != xss {
		t.Error("name")
	}
	for _, tc := range []struct{ section, folded, href string }{
		{"customer-other-fields", "other-fields", "/customers/3/other-fields"},
		{"customer-attributes", "attributes-fields", "/customers/3/attributes"},
		{"customer-owners", "owners-manage", "/customers/3/owners/manage"},
	} {
		d := doc.Find(`[data-testid="` + tc.section + `"] details[data-testid="` + tc.folded + `"]`)
		if d.Length() != 1 || d.AttrOr("open", "closed") != "closed" {
			t.Errorf("%s: no folded section %s: %s", tc.section, tc.folded, html)
			continue
		}
		if d.AttrOr("hx-get", "") != tc.href || d.AttrOr("hx-trigger", "") != "toggle once" {
			t.Errorf("%s: loads hx-get=%q hx-trigger=%q, want %q on toggle once", tc.folded, d.AttrOr("hx-get", ""), d.AttrOr("hx-trigger", ""), tc.href)
		}
		if target := d.AttrOr("hx-target", ""); target != "find .lazy-body" || d.Find(".lazy-body").Length() != 1 {
			t.Errorf("%s: hx-target %q has no body to fill", tc.folded, target)
		}
		if d.Find(`.lazy-body [data-testid="lazy-own-page"]`).AttrOr("href", "") != tc.href {
			t.Errorf("%s: no fallback link to %s", tc.folded, tc.href)
		}
	}
	if n := doc.Find(`[data-testid="json-tree"], [data-testid="owner-add-form"], [data-testid="owners-replace-form"]`).Length(); n != 0 {
		t.Errorf("%d folded contents rendered in the page", n)
	}
	if strings.Contains(html, "loyalty") || strings.Contains(html, "tier") {
		t.Error("the other fields or attributes are in the page")
	}
}

func TestOwnersManageIsBothForms(t *testing.T) {
	t.Parallel()
	doc, _ := render(t, OwnersManage(3))
	if doc.Find(`form[data-testid="owner-add-form"]`).AttrOr("action", "") != "/customers/3/owners/add" {
		t.Error("no add-owner form posting to /customers/3/owners/add")
	}
	if doc.Find(`form[data-testid="owners-replace-form"]`).AttrOr("action", "") != "/customers/3/owners" {
		t.Error("no replace-owners form posting to /customers/3/owners")
	}
}

func TestFormPartialDuplicateWarning(t *testing.T) {
	t.Parallel()
	vm := FormVM{Action: "/customers", CancelHref: "/customers", DuplicateKey: "acme|IT01234567890",
		Duplicates: []DuplicateVM{{ID: 4, Name: "ACME", TaxID: "IT01234567890", Href: "/customers/4", ReasonKey: "customer.form.same_name"}},
		Errors:     []components.FieldError{{Message: "The CPQ service refused the change: " + xss}}}
	doc, html := render(t, FormPartial(vm))
	if doc.Find("script").Length() != 0 {
		t.Fatalf("payload not escaped:\n%s", html)
	}
	if doc.Find(`[data-testid="create-anyway"]`).Length() != 1 || doc.Find(`[data-testid="customer-save"]`).Length() != 0 {
		t.Error("the warning does not offer Create anyway")
	}
	if doc.Find(`input[name="confirmedDuplicate"]`).AttrOr("value", "") != "acme|IT01234567890" {
		t.Error("no confirmation carried")
	}
	if li := doc.Find(`[data-testid="error-summary"] li`); li.Find("a").Length() != 0 || !strings.Contains(li.Text(), xss) {
		t.Error("a message without a field should be plain text in the summary")
	}
	if doc.Find(`form`).AttrOr("hx-target", "") != "#"+FormRegionID {
		t.Error("the form does not target its region")
	}
}
