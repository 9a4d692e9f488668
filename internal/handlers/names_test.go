package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"golang.org/x/text/language"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/workindex"
)

// A back-office clerk who never opened a quote (so no catalogue name is held for them) sees the
// contract's product catalogue by name on the contract page, in the contracts list's rows and in
// its catalogue filter, never "Product catalogue 1" or a bare "1" (issue 33).
func TestBackOfficeSeesTheCatalogueByName(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref, contract := e.newContract(t)
	// The sales rep opens the quote and the contract: the index has both rows.
	quoteMust(t, "quote page", e.p.get(t, e.user, ref.URL(), nil), http.StatusOK)
	quoteMust(t, "contract page", e.p.get(t, e.user, contractPath(contract.ContractID), nil), http.StatusOK)
	cfgs, err := e.api.CPQ.List(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, c := range cfgs {
		if c.ID == contract.CPQID {
			name = c.Name
		}
	}
	if name == "" {
		t.Fatalf("configurator %d has no name", contract.CPQID)
	}

	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"en", "it", "de"} {
		clerk := e.p.login(t, "backoffice", "backoffice-demo")
		headers := map[string]string{"Accept-Language": lang}
		page := quoteMust(t, "contract page", e.p.get(t, clerk, contractPath(contract.ContractID), headers), http.StatusOK)
		details := page.Find(`main`).Text()
		if !strings.Contains(details, name) {
			t.Errorf("%s: the contract page does not name the catalogue %q", lang, name)
		}
		numbered := bundle.Translator(language.Make(lang)).T("customer.configurator_id", fmt.Sprint(contract.CPQID))
		if strings.Contains(details, numbered) {
			t.Errorf("%s: the contract page shows %q", lang, numbered)
		}

		list := quoteMust(t, "contracts list", e.p.get(t, clerk, "/work/contracts?scope=all", headers), http.StatusOK)
		options := list.Find(`#work-cpq option`)
		var labels []string
		options.Each(func(_ int, s *goquery.Selection) { labels = append(labels, strings.TrimSpace(s.Text())) })
		found := false
		for _, l := range labels[1:] {
			if l == name {
				found = true
			}
			if strings.TrimLeft(l, "0123456789") == "" {
				t.Errorf("%s: the catalogue filter offers a bare number %q (%v)", lang, l, labels)
			}
		}
		if !found {
			t.Errorf("%s: the catalogue filter %v does not offer %q", lang, labels, name)
		}
		row := list.Find(fmt.Sprintf(`[data-testid="work-row"][data-id="%d"]`, contract.ContractID))
		if row.Length() != 1 || !strings.Contains(row.Text(), name) {
			t.Errorf("%s: the contract's row does not name its catalogue: %q", lang, row.Text())
		}
	}
}

// A recent quote recorded without names (its customer could not be read then) is named in the
// palette from what the portal holds: the user's customer list, never "customer #6".
func TestPaletteNamesARecentQuoteRecordedWithoutNames(t *testing.T) {
	t.Parallel()
	e := newPaletteEnv(t)
	quoteID := e.quote(t, 6)
	customer, err := e.api.Customers.Get(e.ctx(), 6)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.p.h.recent.Touch(context.Background(), "demo-sales", recent.Item{Kind: recent.KindQuote, ID: quoteID, QuoteID: quoteID, CPQID: 1, CustomerID: 6}); err != nil {
		t.Fatal(err)
	}
	// The user's customer list is in memory once the customers page has shown it.
	quoteMust(t, "customer list", e.p.get(t, e.user, "/customers", nil), http.StatusOK)
	href := fmt.Sprintf("/quotes/1/6/%d", quoteID)
	// Offered unasked (an empty query) and when its number is typed.
	for _, query := range []string{"", fmt.Sprint(quoteID)} {
		_, doc := e.search(t, query)
		found := false
		for _, o := range paletteOptions(doc) {
			if o.href != href {
				continue
			}
			found = true
			if !strings.Contains(o.text, customer.Name) || strings.Contains(o.text, "customer #") {
				t.Errorf("query %q: the recent quote reads %q, want its customer %q by name", query, o.text, customer.Name)
			}
		}
		if !found {
			t.Errorf("query %q: the recent quote is not offered: %+v", query, paletteOptions(doc))
		}
	}
}

// configuratorChoices: the v2 API's names win, a catalogue only the index knows stays, and none is
// offered as a bare number.
func TestConfiguratorChoices(t *testing.T) {
	numbered := func(id int32) string { return fmt.Sprintf("Product catalogue %d", id) }
	got := configuratorChoices(numbered,
		[]workindex.Option{{ID: 1, Name: "1"}, {ID: 2, Name: "Old name"}, {ID: 4, Name: "Fibre"}},
		map[int32]string{2: "Business Mobile", 3: "Cloud"}, "2")
	want := "Business Mobile=2*,Cloud=3,Fibre=4,Product catalogue 1=1"
	var parts []string
	for _, c := range got {
		s := c.Label + "=" + c.Value
		if c.Selected {
			s += "*"
		}
		parts = append(parts, s)
	}
	if strings.Join(parts, ",") != want {
		t.Errorf("choices %s, want %s", strings.Join(parts, ","), want)
	}
}
