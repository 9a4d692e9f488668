package handlers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/apiclient"
)

// TestPagesMarkTheirTimesAndZone: every page that shows times names on <html data-tz> the zone it
// used (the zone cookie's, UTC without one), and shows each time as <time datetime="RFC 3339 in
// UTC" data-t="m|s"> whose text is that instant in that zone, with the zone named: what app.js
// needs to show a page rendered before the cookie existed in the browser's own zone
// (docs/i18n.md).
func TestPagesMarkTheirTimesAndZone(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref, contract := e.newContract(t)
	ctx := e.ctx()
	if _, err := e.api.Attachments.Upload(ctx, ref.QuoteID, "OTHER", "note.txt", "text/plain", 5, strings.NewReader("hello")); err != nil {
		t.Fatalf("upload: %v", err)
	}
	if _, err := e.api.Signatures.Create(ctx, apiclient.SignatureInput{ContractID: contract.ContractID, Email: "signer@example.com", SignerName: "Signer"}); err != nil {
		t.Fatalf("signature: %v", err)
	}
	if err := e.api.Signatures.Delete(ctx, contract.ContractID); err != nil {
		t.Fatalf("remove the signature request: %v", err)
	}
	if _, err := e.api.Contracts.Archive(ctx, contract.ContractNumber); err != nil {
		t.Fatalf("archive: %v", err)
	}
	contractURL := contractPath(contract.ContractID)
	pages := []struct {
		path     string
		minTimes int    // times the page must show
		detail   string // the detail every one of them has ("" for either)
	}{
		{contractURL, 4, "m"}, // created, request sent and removed, archived
		{contractURL + "/evidence", 3, ""},
		{auditURL(ref.QuoteID), 1, "s"},
		{"/audits/worklist?quotes=" + itoa64(ref.QuoteID), 1, "s"},
		{ref.URL() + "/documents", 1, "m"},
		{ref.URL(), 0, "m"},
		{"/customers/1", 0, "m"},
		{"/customers", 0, "m"},
		{"/work/quotes", 0, "m"},
		{"/sessions", 1, "m"},
	}
	for _, zone := range []string{"", "Asia/Tokyo", "America/New_York"} {
		loc := time.UTC
		headers := map[string]string{}
		if zone != "" {
			var err error
			if loc, err = time.LoadLocation(zone); err != nil {
				t.Fatal(err)
			}
			headers["Cookie"] = "portal_tz=" + zone
		}
		for _, page := range pages {
			resp := e.p.get(t, e.user, page.path, headers)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", page.path, resp.StatusCode)
			}
			doc := parseHTML(t, resp.body)
			if got := doc.Find("html").AttrOr("data-tz", ""); got != loc.String() {
				t.Errorf("%s in %q: <html data-tz=%q>, want %q", page.path, zone, got, loc.String())
			}
			times := doc.Find("time[data-t]")
			if times.Length() < page.minTimes {
				t.Errorf("%s: %d times, want at least %d", page.path, times.Length(), page.minTimes)
			}
			times.Each(func(_ int, el *goquery.Selection) {
				iso, detail := el.AttrOr("datetime", ""), el.AttrOr("data-t", "")
				at, err := time.Parse(time.RFC3339, iso)
				if err != nil || !strings.HasSuffix(iso, "Z") {
					t.Errorf("%s: datetime=%q is not RFC 3339 in UTC", page.path, iso)
					return
				}
				layout := map[string]string{"m": "15:04 MST", "s": "15:04:05 MST"}[detail]
				if layout == "" || (page.detail != "" && detail != page.detail) {
					t.Errorf("%s: data-t=%q, want %q", page.path, detail, page.detail)
					return
				}
				if want := at.In(loc).Format(layout); !strings.Contains(el.Text(), want) {
					t.Errorf("%s in %q: time %q, want it to show %q", page.path, zone, el.Text(), want)
				}
			})
		}
	}
}
