package handlers

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/customerimport"
)

// postImport uploads a file to the customer import as the browser's form does and, when it was
// taken, confirms the mapping its page proposes (the dry run follows); it answers the upload.
func postImport(t *testing.T, p *testPortal, client *http.Client, name string, data []byte) response {
	t.Helper()
	posted := uploadImport(t, p, client, name, data)
	if where := posted.Header.Get("Location"); posted.StatusCode == http.StatusSeeOther {
		if r := postForm(t, p, client, where+"/mapping", proposedMapping(t, p, client, where)); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("confirm the proposed mapping: %d: %.300s", r.StatusCode, r.body)
		}
	}
	return posted
}

// proposedMapping is the mapping step's form as its page proposes it.
func proposedMapping(t *testing.T, p *testPortal, client *http.Client, where string) url.Values {
	t.Helper()
	doc := parseHTML(t, p.get(t, client, where, nil).body)
	selects := doc.Find(`[data-testid="import-mapping-select"]`)
	if selects.Length() == 0 {
		t.Fatalf("%s shows no mapping step", where)
	}
	form := url.Values{}
	selects.Each(func(_ int, s *goquery.Selection) {
		form.Add("field", s.Find("option[selected]").AttrOr("value", ""))
	})
	return form
}

// uploadImport uploads a file to the customer import as the browser's form does.
func uploadImport(t *testing.T, p *testPortal, client *http.Client, name string, data []byte) response {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(data)
	_ = w.Close()
	return p.do(t, client, http.MethodPost, "/customers/import", &body, map[string]string{"Content-Type": w.FormDataContentType()})
}

// TestCustomerImportDryRunThroughTheHandlers: an upload becomes its owner's dry run (a duplicate of
// a customer they can list, a new line, an invalid one); someone else gets 404; lines are included
// or skipped by page and by verdict, never a duplicate; a file over the limit answers 413 and a
// file that cannot be used a translated 422; malformed addresses answer 400.
func TestCustomerImportDryRunThroughTheHandlers(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	clerk := p.login(t, "backoffice", "backoffice-demo")
	list := parseHTML(t, p.get(t, clerk, "/customers", nil).body)
	taxID := strings.TrimSpace(list.Find(`[data-testid="customer-row"] td.mono`).First().Text())
	if taxID == "" {
		t.Fatal("the clerk lists no customer")
	}
	csv := fmt.Sprintf("Name;Tax id;Segment;City\nAnother name;%s;Business;Roma\nBrand New S.r.l.;IT55555555555;Business;Roma\nNo tax id;;Business;Roma\n", taxID)
	posted := postImport(t, p, clerk, "customers.csv", []byte(csv))
	where := posted.Header.Get("Location")
	if posted.StatusCode != http.StatusSeeOther || !strings.HasPrefix(where, "/customers/import/") {
		t.Fatalf("upload: %d to %q: %.300s", posted.StatusCode, where, posted.body)
	}
	doc := parseHTML(t, p.get(t, clerk, where, nil).body)
	for verdict, want := range map[string]string{"new": "1", "duplicate": "1", "invalid": "1", "possible": "0", "included": "1"} {
		if got := doc.Find(`[data-testid="import-count-` + verdict + `"]`).Text(); got != want {
			t.Errorf("%s: %q, want %s", verdict, got, want)
		}
	}
	if got := doc.Find(`[data-testid="import-line"][data-verdict="duplicate"]`).AttrOr("data-tax-id", ""); got != taxID {
		t.Errorf("the duplicate is %q, want %q", got, taxID)
	}
	if r := p.get(t, p.login(t, "clerk", "clerk-demo"), where, nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("someone else's import: %d", r.StatusCode)
	}

	// Skip the new line (position 1), try to include the duplicate (position 0): only the first holds.
	saved := postForm(t, p, clerk, where+"/lines", url.Values{"shown": {"0", "1"}, "include": {"0"}})
	if saved.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d", saved.StatusCode)
	}
	doc = parseHTML(t, p.get(t, clerk, saved.Header.Get("Location"), nil).body)
	if got := doc.Find(`[data-testid="import-count-included"]`).Text(); got != "0" {
		t.Errorf("included after skipping the new line: %s", got)
	}
	postForm(t, p, clerk, where+"/include", url.Values{"verdict": {"new"}, "include": {"1"}})
	doc = parseHTML(t, p.get(t, clerk, where, nil).body)
	if got := doc.Find(`[data-testid="import-count-included"]`).Text(); got != "1" {
		t.Errorf("included after including every new line: %s", got)
	}

	for path, want := range map[string]int{
		"/customers/import/not-an-import":              http.StatusBadRequest,
		where + "?show=everything":                     http.StatusBadRequest,
		where + "?from=-1":                             http.StatusBadRequest,
		"/customers/import/" + strings.Repeat("0", 32): http.StatusNotFound,
	} {
		if r := p.get(t, clerk, path, nil); r.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, r.StatusCode, want)
		}
	}
	if r := postForm(t, p, clerk, where+"/include", url.Values{"verdict": {"duplicate"}, "include": {"1"}}); r.StatusCode != http.StatusBadRequest {
		t.Errorf("including every duplicate: %d", r.StatusCode)
	}

	big := uploadImport(t, p, clerk, "big.csv", bytes.Repeat([]byte("x"), customerimport.MaxFileBytes+128<<10))
	if big.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a file over the limit: %d", big.StatusCode)
	}
	bad := uploadImport(t, p, clerk, "list.pdf", []byte("%PDF"))
	if bad.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(bad.body, "Upload a .csv or .xlsx file") {
		t.Errorf("a PDF: %d", bad.StatusCode)
	}
}
