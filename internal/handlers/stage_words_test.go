package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/text/language"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/workindex"
)

// stageMarks are the stages a page shows, item by item (the quote's or contract's address as
// key): the quote page's badge and its contract banner, the work lists' rows (the lists and the
// customer page) and the recent items' rows (the quotes and contracts pages).
func stageMarks(doc *goquery.Document, pagePath string) map[string][]string {
	marks := map[string][]string{}
	add := func(key, label string) {
		key = strings.SplitN(key, "?", 2)[0]
		marks[key] = append(marks[key], strings.Join(strings.Fields(label), " "))
	}
	if badge := doc.Find(`[data-testid="quote-stage"]`); badge.Length() > 0 {
		add(pagePath, badge.Text())
	}
	doc.Find(`[data-testid="quote-contract-banner"]`).Each(func(_ int, s *goquery.Selection) {
		add(pagePath, s.AttrOr("data-stage-label", ""))
	})
	doc.Find(`[data-testid="work-row"]`).Each(func(_ int, s *goquery.Selection) {
		if s.Find(`[data-testid="work-unchecked"]`).Length() == 0 {
			add(s.Find(`[data-testid="work-link"]`).AttrOr("href", ""), s.Find(`[data-testid="work-stage"]`).Text())
		}
	})
	doc.Find(`[data-testid="quote-recent-row"], [data-testid="contract-recent-row"]`).Each(func(_ int, s *goquery.Selection) {
		add(s.Find(`a`).First().AttrOr("href", ""), s.Find("td").Eq(3).Text())
	})
	return marks
}

// TestOneStageOneWordOnEveryPage follows a quote and its contract through generated, out for
// signature and archived (issue 33: a badge said "DRAFT" beside a banner saying "Contract
// generated"; recent quotes said "DRAFT" in English on an Italian page). At each stage, on every
// page that shows it (the quote page, the lists, the customer page, the recent items), in English
// and in Italian, an item's stage is one word, the same on every page, and one of the stage words
// of the reader's language.
func TestOneStageOneWordOnEveryPage(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	ref := e.newQuote(t)
	quotePath := ref.URL()
	quoteMust(t, "quote page", e.p.get(t, e.user, quotePath, nil), http.StatusOK)
	hx := map[string]string{"HX-Request": "true", "Origin": e.p.URL, "Content-Type": "application/x-www-form-urlencoded"}

	check := func(when string, want workindex.Stage) {
		t.Helper()
		contract := e.quote(t, ref).Contract
		pages := []string{quotePath, "/quotes", "/contracts", "/work/quotes?scope=all", "/work/contracts?scope=all&stage=generated&stage=signature&stage=archived",
			"/customers/" + strconv.Itoa(int(ref.CustomerID))}
		for _, lang := range []string{"en", "it"} {
			trl := bundle.Translator(language.Make(lang))
			words := []string{}
			for _, s := range []workindex.Stage{workindex.StageDraft, workindex.StageGenerated, workindex.StageSignature, workindex.StageArchived} {
				words = append(words, stageLabel(trl, s))
			}
			seen := map[string]string{} // item -> word, across the pages
			for _, path := range pages {
				doc := quoteMust(t, when+" "+path, e.p.get(t, e.user, path, map[string]string{"Accept-Language": lang}), http.StatusOK)
				for item, labels := range stageMarks(doc, strings.SplitN(path, "?", 2)[0]) {
					for _, label := range labels {
						if !slices.Contains(words, label) {
							t.Errorf("%s, %s %s: %s is shown as %q, not a stage word of the page's language %v", when, lang, path, item, label, words)
						}
						if label != labels[0] {
							t.Errorf("%s, %s %s: %s is shown in two ways on one page: %q", when, lang, path, item, labels)
						}
						if other, ok := seen[item]; ok && other != label {
							t.Errorf("%s, %s %s: %s is %q here and %q on another page", when, lang, path, item, label, other)
						}
						seen[item] = label
					}
				}
			}
			if got := seen[quotePath]; got != stageLabel(trl, want) {
				t.Errorf("%s, %s: the quote is shown as %q, want %q", when, lang, got, stageLabel(trl, want))
			}
			if contract != nil {
				if got := seen[contractPath(contract.ContractID)]; got != stageLabel(trl, want) {
					t.Errorf("%s, %s: the contract is shown as %q, want %q", when, lang, got, stageLabel(trl, want))
				}
			}
		}
	}

	check("a draft", workindex.StageDraft)

	quoteMust(t, "generate", e.p.do(t, e.user, http.MethodPost, quotePath+"/contract", strings.NewReader(e.generateForm(t, ref).Encode()), hx), http.StatusOK)
	contract := e.quote(t, ref).Contract
	if contract == nil {
		t.Fatal("no contract generated")
	}
	cpath := contractPath(contract.ContractID)
	quoteMust(t, "contract page", e.p.get(t, e.user, cpath, nil), http.StatusOK)
	check("generated", workindex.StageGenerated)

	form := url.Values{"email": {"signer@example.com"}, "signerName": {"Signer"}}
	quoteMust(t, "send for signature", e.p.do(t, e.user, http.MethodPost, cpath+"/signature", strings.NewReader(form.Encode()), hx), http.StatusOK)
	check("out for signature", workindex.StageSignature)

	quoteMust(t, "archive", e.p.do(t, e.user, http.MethodPost, cpath+"/archive", strings.NewReader(url.Values{}.Encode()), hx), http.StatusOK)
	check("archived", workindex.StageArchived)
}
