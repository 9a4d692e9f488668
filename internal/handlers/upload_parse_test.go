package handlers

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/sheetread/sheettest"
)

// uploadBody is a multipart form with one file field.
func uploadBody(t *testing.T, name string, data []byte) (*bytes.Buffer, map[string]string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(data)
	_ = mw.Close()
	return &body, map[string]string{"Content-Type": mw.FormDataContentType()}
}

// TestHostileUploadsAreClear4xx: the batch archive's hostile list (5,000 rows with a cell at column
// XFD) and the import's (20,000 blank formulas at XFD) are answered 422 with the column and row
// named, and a NUL in an imported cell with its line (it was a 500 on PostgreSQL).
func TestHostileUploadsAreClear4xx(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	body, headers := uploadBody(t, "list.xlsx", sheettest.XFDPerRow(5000))
	r := e.p.do(t, e.user, http.MethodPost, "/contracts/batch-archive", body, headers)
	msg := strings.Join(strings.Fields(parseHTML(t, r.body).Find(`[data-testid="batch-file-error"]`).Text()), " ")
	if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(msg, "the file has more than 64 columns (row 2 has a cell in column XFD)") {
		t.Fatalf("batch XFD list: %d %q", r.StatusCode, msg)
	}
	for name, c := range map[string]struct {
		file, want string
		data       []byte
	}{
		"XFD":        {"customers.xlsx", "The file has more than 64 columns: row 2 has a cell in column XFD.", sheettest.BlankFormulaRows(20_000)},
		"NUL in CSV": {"customers.csv", "Line 3 holds a NUL character", []byte("Name;Tax id\nAcme;IT01234567890\nBad\x00;IT01234567891\n")},
	} {
		body, headers := uploadBody(t, c.file, c.data)
		r := e.p.do(t, e.user, http.MethodPost, "/customers/import", body, headers)
		text := strings.Join(strings.Fields(parseHTML(t, r.body).Find(`main`).Text()), " ")
		if r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(text, c.want) {
			t.Fatalf("import %s: %d %q", name, r.StatusCode, text)
		}
	}
}

// TestOneUploadReadInFlightPerPerson: while a file of the person is being read (their read slot
// held), their next upload, to either page, is a 429 saying so; another person's is read; once
// the slot is back, theirs is read again.
func TestOneUploadReadInFlightPerPerson(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	release, err := e.p.h.parses.Acquire(context.Background(), "demo-backoffice")
	if err != nil {
		t.Fatal(err)
	}
	list := []byte("Contract number\nNO-SUCH-1\n")
	for _, path := range []string{"/contracts/batch-archive", "/customers/import"} {
		body, headers := uploadBody(t, "list.csv", list)
		r := e.p.do(t, e.user, http.MethodPost, path, body, headers)
		text := strings.Join(strings.Fields(parseHTML(t, r.body).Find(`main`).Text()), " ")
		if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(text, "A file of yours is being read.") {
			t.Fatalf("%s while a read is in flight: %d %q", path, r.StatusCode, text)
		}
	}
	other := e.p.login(t, "clerk", "clerk-demo")
	body, headers := uploadBody(t, "list.csv", list)
	if r := e.p.do(t, other, http.MethodPost, "/contracts/batch-archive", body, headers); r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("another person's upload: %d", r.StatusCode)
	}
	release()
	body, headers = uploadBody(t, "list.csv", list)
	if r := e.p.do(t, e.user, http.MethodPost, "/contracts/batch-archive", body, headers); r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("after the read: %d", r.StatusCode)
	}
}

// TestUploadReadsEndWhenThePortalStops: once the portal starts to stop (SetNotReady, the first
// step of SIGTERM), no read starts and the person is told to upload again (503), rather than the
// grace period waiting for it (a read in flight is cancelled: its context is the stop's too,
// upload_parse.go; the readers' own tests show a cancelled context ends a read).
func TestUploadReadsEndWhenThePortalStops(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	var list strings.Builder
	list.WriteString("Contract number\n")
	for i := range 1000 {
		list.WriteString("C-" + strings.Repeat("1", i%5+1) + "\n")
	}
	e.p.h.SetNotReady()
	body, headers := uploadBody(t, "list.csv", []byte(list.String()))
	r := e.p.do(t, e.user, http.MethodPost, "/contracts/batch-archive", body, headers)
	text := strings.Join(strings.Fields(parseHTML(t, r.body).Find(`main`).Text()), " ")
	if r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(text, "the portal is restarting") {
		t.Fatalf("a read while the portal stops: %d %q", r.StatusCode, text)
	}
}
