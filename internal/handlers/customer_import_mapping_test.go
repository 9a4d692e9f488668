package handlers

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/sheetread/sheettest"
)

// TestImportMappingThroughTheHandlers: an upload with German headings shows the mapping step
// (each column with its proposed field, the column nobody knows named) and checks nothing; a
// mapping the page cannot have posted is a 400, one without the tax id a 422 in the person's
// language; a cross-origin post is refused; the confirmed mapping checks the lines; an unknown
// segment treated as a known one makes its lines valid; an invalid line fixed in place is new and
// included; a value too long is a 400; the next file of the same headings is proposed the
// confirmed mapping; the run is named by its file in the list of imports.
func TestImportMappingThroughTheHandlers(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	clerk := p.login(t, "backoffice", "backoffice-demo")
	csv := "Firmenname;USt-IdNr.;Bemerkung;Kundentyp;Ort;Land;E-Mail\n" +
		"Mapping Eins GmbH;DE111111125;Hauptstr. 1;Geschäftsfreund;Berlin;Deutschland;eins@example.com\n" +
		"Mapping Due S.r.l.;IT81818181818;Via Roma 2;Geschäftsfreund;Roma;Italia;due@example.com\n" +
		"Mapping Drei GmbH;DE222222224;Ring 3;Privatkunde;Köln;Deutschland;keine-adresse\n"
	posted := uploadImport(t, p, clerk, "kunden.csv", []byte(csv))
	where := posted.Header.Get("Location")
	if posted.StatusCode != http.StatusSeeOther || !strings.HasPrefix(where, "/customers/import/") {
		t.Fatalf("upload: %d to %q: %.300s", posted.StatusCode, where, posted.body)
	}
	doc := parseHTML(t, p.get(t, clerk, where, nil).body)
	fields := map[string]string{}
	doc.Find(`[data-testid="import-mapping-column"]`).Each(func(_ int, s *goquery.Selection) {
		fields[s.AttrOr("data-header", "")] = s.AttrOr("data-field", "?")
	})
	want := map[string]string{"Firmenname": "name", "USt-IdNr.": "taxId", "Bemerkung": "", "Kundentyp": "segment", "Ort": "city",
		"Land": "country", "E-Mail": "email"}
	for h, f := range want {
		if fields[h] != f {
			t.Errorf("column %q proposed %q, want %q", h, fields[h], f)
		}
	}
	if got := doc.Find(`[data-testid="import-mapping-unmatched-column"]`).Text(); got != "Bemerkung" {
		t.Errorf("unmatched columns named %q", got)
	}
	if doc.Find(`[data-testid="import-count-new"]`).Length() != 0 {
		t.Error("the lines were checked before the mapping was confirmed")
	}

	mapping := proposedMapping(t, p, clerk, where)
	for name, form := range map[string]url.Values{
		"more columns than the file": {"field": append(append([]string{}, mapping["field"]...), "")},
		"an unknown field":           {"field": {"name", "taxId", "owner", "segment", "city", "country", "email"}},
	} {
		if r := postForm(t, p, clerk, where+"/mapping", form); r.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d", name, r.StatusCode)
		}
	}
	noTax := url.Values{"field": {"name", "", "", "segment", "city", "country", "email"}}
	r := p.do(t, clerk, http.MethodPost, where+"/mapping", strings.NewReader(noTax.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept-Language": "de"})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "Spalte der Steuernummer") {
		t.Errorf("a mapping without the tax id: %d: %.300s", r.StatusCode, r.body)
	}
	evil := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
	for _, path := range []string{"/mapping", "/values", "/fix"} {
		if r := p.do(t, clerk, http.MethodPost, where+path, strings.NewReader(mapping.Encode()), evil); r.StatusCode != http.StatusForbidden {
			t.Errorf("a cross-origin POST %s: %d", path, r.StatusCode)
		}
	}

	mapping["field"][2] = "street"
	if r := postForm(t, p, clerk, where+"/mapping", mapping); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d: %.300s", r.StatusCode, r.body)
	}
	doc = parseHTML(t, p.get(t, clerk, where, nil).body)
	if got := doc.Find(`[data-testid="import-count-invalid"]`).Text(); got != "3" {
		t.Fatalf("invalid lines after the mapping: %s", got)
	}
	choice := doc.Find(`[data-testid="import-value-choice"][data-field="segment"]`)
	if choice.AttrOr("data-value", "") != "Geschäftsfreund" {
		t.Fatalf("the unknown segment offered: %q", choice.AttrOr("data-value", ""))
	}
	if r := postForm(t, p, clerk, where+"/values", url.Values{"field": {"segment"}, "value": {"Geschäftsfreund"}, "to": {"FRIEND"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a segment that is none: %d", r.StatusCode)
	}
	if r := postForm(t, p, clerk, where+"/values", url.Values{"field": {"owner"}, "value": {"x"}, "to": {"BUSINESS"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a field without a closed list: %d", r.StatusCode)
	}
	if r := postForm(t, p, clerk, where+"/values", url.Values{"field": {"segment"}, "value": {"Geschäftsfreund"}, "to": {"BUSINESS"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("treat the segment: %d: %.300s", r.StatusCode, r.body)
	}
	doc = parseHTML(t, p.get(t, clerk, where, nil).body)
	if got := doc.Find(`[data-testid="import-count-new"]`).Text(); got != "2" {
		t.Fatalf("new lines after treating the segment: %s", got)
	}
	fix := doc.Find(`[data-testid="import-fix"][data-row="4"]`)
	if fix.Length() != 1 {
		t.Fatal("no fix form for row 4")
	}
	form := url.Values{"position": {fix.Find(`input[name="position"]`).AttrOr("value", "")}}
	fix.Find(`input[data-testid^="import-fix-"]`).Each(func(_ int, s *goquery.Selection) {
		form.Set(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	if form.Get("email") != "keine-adresse" || form.Get("country") != "DE" {
		t.Fatalf("the fix form shows %v", form)
	}
	tooLong := url.Values{}
	for k, v := range form {
		tooLong[k] = v
	}
	tooLong.Set("street", strings.Repeat("x", 1001))
	if r := postForm(t, p, clerk, where+"/fix", tooLong); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a value too long: %d", r.StatusCode)
	}
	if r := postForm(t, p, clerk, where+"/fix", url.Values{"position": {"9999"}, "name": {"x"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("a fix of a line the import does not have: %d", r.StatusCode)
	}
	form.Set("email", "drei@example.com")
	if r := postForm(t, p, clerk, where+"/fix", form); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("fix: %d: %.300s", r.StatusCode, r.body)
	}
	doc = parseHTML(t, p.get(t, clerk, where, nil).body)
	for verdict, want := range map[string]string{"new": "3", "invalid": "0", "included": "3"} {
		if got := doc.Find(`[data-testid="import-count-` + verdict + `"]`).Text(); got != want {
			t.Errorf("%s after the fix: %s, want %s", verdict, got, want)
		}
	}

	// The next file of these headings (in another order) is proposed the confirmed mapping.
	again := uploadImport(t, p, clerk, "kunden2.csv", []byte("Land;Firmenname;USt-IdNr.;Bemerkung;Kundentyp;Ort;E-Mail\nDeutschland;Vier GmbH;DE333333333;Weg 4;B2B;Bonn;v@example.com\n"))
	next := proposedMapping(t, p, clerk, again.Header.Get("Location"))
	if got := strings.Join(next["field"], ","); got != "country,name,taxId,street,segment,city,email" {
		t.Errorf("the next file of the same shape is proposed %s", got)
	}

	if r := postForm(t, p, clerk, where+"/run", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("run: %d: %.300s", r.StatusCode, r.body)
	}
	list := parseHTML(t, p.get(t, clerk, "/customers/import", nil).body)
	if got := list.Find(`[data-testid="import-runs-item"]`).First().Text(); !strings.Contains(got, "kunden.csv") {
		t.Errorf("the run is not named by its file: %q", got)
	}
}

// TestImportMappingHostileUploadRefusedWhole: a workbook of a few hundred KB whose cells all name
// one shared string of 4 KB (500 MB of text) is refused with a 422 in the person's language naming
// the limit, never a 5xx, and no import is kept.
func TestImportMappingHostileUploadRefusedWhole(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	clerk := p.login(t, "backoffice", "backoffice-demo")
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", "notizen.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(sheettest.SharedStringFill(2_000, 64, 4096))
	_ = w.Close()
	r := p.do(t, clerk, http.MethodPost, "/customers/import", &body, map[string]string{"Content-Type": w.FormDataContentType(), "Accept-Language": "de"})
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.body, "Die Zellen der Datei enthalten mehr als 8 MiB Text") {
		t.Fatalf("upload: %d: %.600s", r.StatusCode, r.body)
	}
	list := parseHTML(t, p.get(t, clerk, "/customers/import", nil).body)
	if n := list.Find(`a[href^="/customers/import/"]`).Length(); n != 0 {
		t.Errorf("%d imports kept after the refusal", n)
	}
}
