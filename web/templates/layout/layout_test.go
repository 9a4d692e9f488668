package layout

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/palette"
)

type fakeAssets struct{}

func (fakeAssets) URL(name string) string { return "/static/hash/" + name }

func renderPage(t *testing.T, vm LayoutVM) *goquery.Document {
	t.Helper()
	var b strings.Builder
	content := templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, `<h1 data-testid="content">Hello</h1>`)
		return err
	})
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := i18n.WithTranslator(context.Background(), bundle.Translator(i18n.Source))
	if err := Page(vm, content).Render(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "<!doctype html>") && !strings.HasPrefix(b.String(), "<!DOCTYPE html>") {
		t.Errorf("no doctype: %.40s", b.String())
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestPageSignedIn(t *testing.T) {
	t.Parallel()
	doc := renderPage(t, LayoutVM{Title: "Quotes", Section: SectionQuotes, Static: fakeAssets{}, UserName: `Sam <b>Sales</b>`, RequestID: "req-7"})

	if got := doc.Find("html").AttrOr("lang", ""); got != "en" {
		t.Errorf("lang = %q", got)
	}
	if got := doc.Find("title").Text(); got != "Quotes – CPQ Portal" {
		t.Errorf("title = %q", got)
	}
	if doc.Find(`main#main [data-testid="content"]`).Length() != 1 {
		t.Error("content is not inside <main id=main>")
	}
	if doc.Find(`a.skip-link[href="#main"]`).Length() != 1 {
		t.Error("no skip link to #main")
	}
	current := doc.Find(`nav a[aria-current="page"]`)
	if current.Length() != 1 || current.AttrOr("href", "") != "/quotes" {
		t.Errorf("aria-current on %d entries (%q)", current.Length(), current.AttrOr("href", ""))
	}
	var hrefs []string
	doc.Find("nav a").Each(func(_ int, s *goquery.Selection) { hrefs = append(hrefs, s.AttrOr("href", "")+"="+s.Text()) })
	if strings.Join(hrefs, ",") != "/work=My work,/customers=Customers,/quotes=Quotes,/contracts=Contracts,/audits=Audits" {
		t.Errorf("navigation = %v", hrefs)
	}
	if got := doc.Find(`[data-testid="user-name"]`).Text(); got != "Sam <b>Sales</b>" {
		t.Errorf("user name = %q (must be escaped text)", got)
	}
	if doc.Find(`[data-testid="user-name"] b`).Length() != 0 {
		t.Error("user name was not escaped")
	}
	form := doc.Find(`form[action="/auth/logout"]`)
	if form.AttrOr("method", "") != "post" || form.Find(`button[type="submit"]`).Length() != 1 {
		t.Error("no POST logout form with a submit button")
	}
	toasts := doc.Find("#toasts")
	if toasts.AttrOr("aria-live", "") != "polite" {
		t.Error("#toasts is not a polite live region")
	}
	announcer := doc.Find("#announcer")
	if announcer.AttrOr("aria-live", "") != "polite" || !announcer.HasClass("visually-hidden") {
		t.Error("#announcer is not a hidden polite live region")
	}
	if doc.Find(`[data-testid="request-id"]`).Text() != "Request id: req-7" {
		t.Error("request id not in the footer")
	}

	// Assets: only our files, hashed, deferred; no inline script or style anywhere.
	if doc.Find(`link[rel="stylesheet"][href="/static/hash/app.css"]`).Length() != 1 {
		t.Error("stylesheet missing")
	}
	scripts := doc.Find("script")
	if scripts.Length() != 2 {
		t.Fatalf("want 2 scripts (htmx, app.js), got %d", scripts.Length())
	}
	scripts.Each(func(_ int, s *goquery.Selection) {
		if _, deferred := s.Attr("defer"); !deferred || strings.TrimSpace(s.Text()) != "" {
			t.Errorf("script %q must be external and deferred", s.AttrOr("src", ""))
		}
	})
	if scripts.First().AttrOr("src", "") != "/static/hash/"+HTMXScript || scripts.Last().AttrOr("src", "") != "/static/hash/app.js" {
		t.Error("htmx must load before app.js")
	}
	if doc.Find("style, [style]").Length() != 0 {
		t.Error("inline style (CSP forbids it)")
	}
}

func TestPageSignedOut(t *testing.T) {
	t.Parallel()
	doc := renderPage(t, LayoutVM{Title: "", Static: fakeAssets{}})
	if doc.Find("title").Text() != ProductName {
		t.Errorf("title = %q", doc.Find("title").Text())
	}
	if doc.Find("nav").Length() != 0 || doc.Find(`form[action="/auth/logout"]`).Length() != 0 {
		t.Error("navigation or logout shown without a signed-in user")
	}
}

func TestHTMXConfig(t *testing.T) {
	t.Parallel()
	doc := renderPage(t, LayoutVM{Static: fakeAssets{}})
	raw := doc.Find(`meta[name="htmx-config"]`).AttrOr("content", "")
	var cfg struct {
		IncludeIndicatorStyles    *bool `json:"includeIndicatorStyles"`
		AllowEval                 *bool `json:"allowEval"`
		AllowScriptTags           *bool `json:"allowScriptTags"`
		SelfRequestsOnly          *bool `json:"selfRequestsOnly"`
		HistoryCacheSize          *int  `json:"historyCacheSize"`
		HistoryRestoreAsHxRequest *bool `json:"historyRestoreAsHxRequest"`
		DefaultSettleDelay        *int  `json:"defaultSettleDelay"`
		ResponseHandling          []struct {
			Code  string `json:"code"`
			Swap  bool   `json:"swap"`
			Error bool   `json:"error"`
		} `json:"responseHandling"`
	}
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatalf("htmx-config %q is not JSON: %v", raw, err)
	}
	if cfg.IncludeIndicatorStyles == nil || *cfg.IncludeIndicatorStyles || cfg.AllowEval == nil || *cfg.AllowEval ||
		cfg.AllowScriptTags == nil || *cfg.AllowScriptTags || cfg.SelfRequestsOnly == nil || !*cfg.SelfRequestsOnly ||
		cfg.HistoryCacheSize == nil || *cfg.HistoryCacheSize != 0 || cfg.HistoryRestoreAsHxRequest == nil || *cfg.HistoryRestoreAsHxRequest {
		t.Errorf("htmx-config = %s", raw)
	}
	if cfg.DefaultSettleDelay == nil || *cfg.DefaultSettleDelay != 0 {
		t.Errorf("htmx-config has no defaultSettleDelay 0: swapped-in buttons would do nothing for 20 ms: %s", raw)
	}
	swapsErrors := false
	for _, rh := range cfg.ResponseHandling {
		if rh.Code == "[45].." && rh.Swap && rh.Error {
			swapsErrors = true
		}
	}
	if !swapsErrors {
		t.Errorf("responseHandling does not swap 4xx/5xx: the error edge's toasts would be dropped: %s", raw)
	}
}

// TestBodyDataI18nIsTheMessagesOfEachLanguage: the <body> tag is written pre-escaped once per
// language (BodyOpenTag), not by templ: in every language the page's body carries exactly
// JSText's JSON as its data-i18n attribute (the quotes escaped, the page's children inside the
// body), and the htmx-config meta (also written pre-escaped) reads back as HTMXConfig.
func TestBodyDataI18nIsTheMessagesOfEachLanguage(t *testing.T) {
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	content := templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, `<h1 data-testid="content">Hello</h1>`)
		return err
	})
	for _, choice := range bundle.Choices() {
		tag, ok := bundle.Supported(choice.Code)
		if !ok {
			t.Fatalf("language %q of Choices is not supported", choice.Code)
		}
		tr := bundle.Translator(tag)
		for range 2 { // the second page is written from the kept tag
			var b strings.Builder
			if err := Page(LayoutVM{Title: "T", Static: fakeAssets{}}, content).Render(i18n.WithTranslator(context.Background(), tr), &b); err != nil {
				t.Fatal(err)
			}
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
			if err != nil {
				t.Fatal(err)
			}
			body := doc.Find("body")
			if got := body.AttrOr("data-i18n", ""); got != JSText(tr) || !json.Valid([]byte(got)) {
				t.Fatalf("%s: body data-i18n = %.80q, want JSText %.80q", choice.Code, got, JSText(tr))
			}
			if body.Find(`[data-testid="content"]`).Length() != 1 || body.Find(`#toasts`).Length() != 1 {
				t.Fatalf("%s: the page's content is not inside its body", choice.Code)
			}
			if got := doc.Find(`head meta[name="htmx-config"]`).AttrOr("content", ""); got != HTMXConfig {
				t.Fatalf("%s: htmx-config = %q, want HTMXConfig", choice.Code, got)
			}
		}
	}
}

// The palette's trigger and dialog and the language menu's buttons are written from their
// per-language copy: in every language, twice (the second from the kept copy), exactly what
// rendering them on the spot writes.
func TestPaletteAndLanguageButtonsRenderedOncePerLanguageAreTheSame(t *testing.T) {
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, choice := range bundle.Choices() {
		tag, _ := bundle.Supported(choice.Code)
		ctx := i18n.WithTranslator(context.Background(), bundle.Translator(tag))
		for _, part := range []struct {
			kept, fresh templ.Component
		}{{paletteTrigger, palette.Trigger()}, {paletteDialog, palette.Dialog()}, {languageButtons(bundle.Choices()), languageButtonsOf(bundle.Choices())}} {
			var want strings.Builder
			if err := part.fresh.Render(ctx, &want); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				var got strings.Builder
				if err := part.kept.Render(ctx, &got); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() || got.Len() == 0 {
					t.Fatalf("%s: kept %q, rendered %q", choice.Code, got.String(), want.String())
				}
			}
		}
	}
}
