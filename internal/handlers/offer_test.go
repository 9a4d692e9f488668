package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/offer"
)

func TestOfferPreviewAndSend(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)

	// The preview: the PDF inline, in the language asked for, nothing stored.
	preview := e.p.get(t, e.user, ref.URL()+"/offer?lang=de", nil)
	if preview.StatusCode != http.StatusOK || preview.Header.Get("Content-Type") != "application/pdf" ||
		!strings.HasPrefix(preview.Header.Get("Content-Disposition"), "inline") {
		t.Fatalf("preview: %d %q %q %.300s", preview.StatusCode, preview.Header.Get("Content-Type"), preview.Header.Get("Content-Disposition"), preview.body)
	}
	text, err := offer.Text([]byte(preview.body))
	if err != nil || !strings.Contains(text, "Angebot") || !strings.Contains(text, "Gültig bis") {
		t.Errorf("the German preview reads (%v):\n%s", err, text)
	}
	if n := len(e.quote(t, ref).Attachments); n != 0 {
		t.Errorf("a preview stored %d attachments", n)
	}
	// A language the portal does not speak: the reader's (English here).
	if other := e.p.get(t, e.user, ref.URL()+"/offer?lang=xx", nil); other.StatusCode != http.StatusOK {
		t.Errorf("unknown language: %d", other.StatusCode)
	} else if text, _ := offer.Text([]byte(other.body)); !strings.Contains(text, "Valid until") {
		t.Errorf("unknown language: the offer is not in the reader's language:\n%s", text)
	}

	// From another site: refused, nothing stored.
	refused := e.p.do(t, e.user, http.MethodPost, ref.URL()+"/offer", strings.NewReader("lang=it"),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if refused.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site send answered %d, want 403", refused.StatusCode)
	}
	if n := len(e.quote(t, ref).Attachments); n != 0 {
		t.Fatalf("a refused send stored %d attachments", n)
	}

	// Send: stored as QUOTE_PDF, listed, the same bytes as the preview in that language.
	italian := e.p.get(t, e.user, ref.URL()+"/offer?lang=it", nil)
	sent := e.htmxDo(t, http.MethodPost, ref.URL()+"/offer", url.Values{"lang": {"it"}})
	if sent.StatusCode != http.StatusOK {
		t.Fatalf("send: %d %s", sent.StatusCode, sent.body)
	}
	region := parseHTML(t, sent.body).Find("#documents-region")
	row := region.Find(`[data-testid="attachment-row"]`)
	if row.Length() != 1 || row.Find(`[data-testid="attachment-type"]`).Text() != "Offer (PDF)" {
		t.Fatalf("after sending, the list shows %d rows:\n%s", row.Length(), sent.body)
	}
	if region.Find(`[data-testid="offer-latest"]`).Length() != 1 || region.Find(`[data-testid="offer-stale"]`).Length() != 0 {
		t.Error("a fresh offer is not named as the latest, or is marked older than the quote")
	}
	stored := e.quote(t, ref).Attachments
	if len(stored) != 1 || stored[0].AttachmentType != "QUOTE_PDF" || stored[0].ContentType != "application/pdf" ||
		!strings.Contains(stored[0].FileName, "-it-") {
		t.Fatalf("stored: %+v", stored)
	}
	download := e.p.get(t, e.user, attachmentURL(ref, stored[0].AttachmentID), nil)
	if download.body != italian.body {
		t.Error("the stored offer is not the Italian preview's bytes")
	}
}

// Issue 38: a rep whose display name has an emoji could make no offer (fpdf's font map panicked,
// 500). The offer is made and shows the name with the emoji replaced.
func TestOfferByARepWhoseNameHasAnEmoji(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{users: []demoidp.User{{Subject: "demo-zoe", Username: "zoe", Password: "zoe-demo",
		Name: "Zoë 😀 Rep\u202e", Email: "zoe@demo.example", Role: "sales"}}})
	zoe := e.p.login(t, "zoe", "zoe-demo")
	ref := e.newQuote(t)
	for _, lang := range []string{"en", "de", "it", "fr", "es"} {
		preview := e.p.get(t, zoe, ref.URL()+"/offer?lang="+lang, nil)
		if preview.StatusCode != http.StatusOK || preview.Header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("%s: %d %q %.300s", lang, preview.StatusCode, preview.Header.Get("Content-Type"), preview.body)
		}
		text, err := offer.Text([]byte(preview.body))
		if err != nil || !strings.Contains(text, "Zoë \uFFFD Rep\n") {
			t.Errorf("%s: the offer does not name the rep (%v):\n%s", lang, err, text)
		}
	}
	sent := e.p.do(t, zoe, http.MethodPost, ref.URL()+"/offer", strings.NewReader("lang=it"),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": e.p.URL, "HX-Request": "true"})
	if sent.StatusCode != http.StatusOK {
		t.Fatalf("send: %d %.300s", sent.StatusCode, sent.body)
	}
	if n := len(e.quote(t, ref).Attachments); n != 1 {
		t.Fatalf("the sent offer was not stored: %d attachments", n)
	}
}
