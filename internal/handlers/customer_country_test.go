package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/i18n"
)

// The country is chosen from the ISO 3166-1 codes, named and sorted in the reader's language; a
// value the list does not have is refused with a message naming the field, never cut to two
// letters (issue 33: "Germany" saved as "GE", Georgia); a name too long is refused, not cut.
func TestCustomerCountryFromTheListAndNothingCut(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	user := p.login(t, "sales", "sales-demo")
	base, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	user.Jar.SetCookies(base, []*http.Cookie{{Name: i18n.CookieName, Value: "it", Path: "/"}})

	doc := parseHTML(t, p.get(t, user, "/customers/new", nil).body)
	country := doc.Find(`[data-testid="customer-form"] select[name="country"]`)
	options := country.Find("option")
	if options.Length() != 250 {
		t.Fatalf("the country list has %d options, want 249 countries and none", options.Length())
	}
	if first := options.First(); first.AttrOr("value", "x") != "" || first.Text() != "Nessun paese" {
		t.Errorf("the first option is %q %q, want none", first.AttrOr("value", "x"), first.Text())
	}
	position := map[string]int{}
	options.Each(func(i int, o *goquery.Selection) { position[o.AttrOr("value", "")] = i })
	if options.Eq(position["DE"]).Text() != "Germania" || options.Eq(position["GE"]).Text() != "Georgia" {
		t.Errorf("DE is %q, GE %q", options.Eq(position["DE"]).Text(), options.Eq(position["GE"]).Text())
	}
	if !(position["AT"] < position["DE"] && position["DE"] < position["IT"] && position["IT"] < position["CH"]) {
		t.Errorf("not in Italian order (Austria, Germania, Italia, Svizzera): %v %v %v %v", position["AT"], position["DE"], position["IT"], position["CH"])
	}
	if _, has := doc.Find(`[data-testid="customer-name"]`).Attr("maxlength"); has {
		t.Error("the name has a maxlength: a browser would cut a longer paste without a word")
	}

	p.sim.ResetRequests()
	germany := validCustomerForm(uniqueName("Land"), uniqueTaxID())
	germany.Set("country", "Germany")
	long := validCustomerForm(strings.Repeat("N", 201), uniqueTaxID())
	long.Set("city", strings.Repeat("c", 201))
	for _, tc := range []struct {
		form         url.Values
		field, value string
		want         string
	}{
		{germany, "country", "GERMANY", "Paese: scegli un paese dall’elenco («GERMANY» non è uno dei suoi codici)"},
		{long, "name", strings.Repeat("N", 201), "Nome può avere al massimo 200 caratteri"},
		{long, "city", strings.Repeat("c", 201), "Città può avere al massimo 200 caratteri"},
	} {
		resp := p.postForm(t, user, "/customers", tc.form, true)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d, want 422", tc.field, resp.StatusCode)
		}
		doc := parseHTML(t, resp.body)
		if got := fieldError(doc, tc.field); !strings.HasSuffix(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.field, got, tc.want)
		}
		if got := customerFormValues(doc).Get(tc.field); got != tc.value {
			t.Errorf("%s: the form shows %q, not what was sent", tc.field, got)
		}
	}
	if calls := simCalls(p.sim, http.MethodPost, "/v2/customer"); len(calls) != 0 {
		t.Errorf("%d refused forms reached the v2 API", len(calls))
	}

	good := validCustomerForm(uniqueName("Land"), uniqueTaxID())
	good.Set("country", "DE")
	if resp := p.postForm(t, user, "/customers", good, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("with DE: %d %s", resp.StatusCode, resp.body)
	}
	posts := awaitSimCalls(t, p.sim, http.MethodPost, "/v2/customer", 1)
	var sent struct {
		Address struct{ Country string } `json:"address"`
	}
	if len(posts) != 1 || json.Unmarshal([]byte(posts[0].Body), &sent) != nil || sent.Address.Country != "DE" {
		t.Errorf("sent %v, want the country DE", posts)
	}
}
