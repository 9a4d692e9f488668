package v2sim

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// multipartBody builds an upload with one file part (and an extra form field, which is ignored).
func multipartBody(t *testing.T, field, fileName, contentType string, data []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("note", "uploaded by a test"); err != nil {
		t.Fatal(err)
	}
	h := textproto.MIMEHeader{}
	disposition := `form-data; name="` + field + `"`
	if fileName != "" {
		disposition = mime.FormatMediaType("form-data", map[string]string{"name": field, "filename": fileName})
	}
	h.Set("Content-Disposition", disposition)
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	pw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

type tAttachment struct {
	AttachmentID                                  int32
	QuoteID                                       int64
	AttachmentType, FileName, ContentType, SHA256 string
	Size                                          int64
}

func (e *env) upload(quoteID int64, attachmentType, fileName, contentType string, data []byte) response {
	e.t.Helper()
	body, ct := multipartBody(e.t, "file", fileName, contentType, data)
	return e.do("POST", path("/v2/attachment/file/quote/%d/attachmentType/%s", quoteID, attachmentType), body, withHeader("Content-Type", ct))
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAttachmentRoundTrip(t *testing.T) {
	t.Parallel()
	memoryCap := int64(4 << 10)
	e := newEnv(t, Options{MemoryCap: memoryCap})
	_, q := e.newQuote(2)
	for _, tc := range []struct {
		name, fileName, contentType string
		size                        int
		spills                      bool
	}{
		{"small pdf in memory", "identity card.pdf", "application/pdf", 1500, false},
		{"exactly the memory cap", "cap.bin", "application/octet-stream", int(memoryCap), false},
		{"large file spills to disk", "scan \"front\" é.png", "image/png", 300 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := randomBytes(t, tc.size)
			var a tAttachment
			e.upload(q.QuoteID, "ID_DOCUMENT", tc.fileName, tc.contentType, data).wantStatus(t, http.StatusCreated).decode(t, &a)
			sum := sha256.Sum256(data)
			if a.QuoteID != q.QuoteID || a.AttachmentType != "ID_DOCUMENT" || a.FileName != tc.fileName || a.ContentType != tc.contentType ||
				a.Size != int64(tc.size) || a.SHA256 != hex.EncodeToString(sum[:]) {
				t.Fatalf("upload answer %+v", a)
			}
			e.sim.mu.Lock()
			stored := e.sim.quotes[q.QuoteID].Attachments[len(e.sim.quotes[q.QuoteID].Attachments)-1]
			onDisk := stored.path != ""
			e.sim.mu.Unlock()
			if onDisk != tc.spills {
				t.Fatalf("stored on disk = %v, want %v", onDisk, tc.spills)
			}
			if onDisk {
				if info, err := os.Stat(stored.path); err != nil || info.Size() != int64(tc.size) {
					t.Fatalf("spilled file: %v %v", info, err)
				}
			}
			r := e.do("GET", path("/v2/attachment/%d/quote/%d", a.AttachmentID, q.QuoteID), nil).wantStatus(t, http.StatusOK)
			if !bytes.Equal(r.body, data) {
				t.Fatalf("downloaded %d bytes, not byte-identical to the %d uploaded", len(r.body), len(data))
			}
			if r.header.Get("Content-Type") != tc.contentType || r.header.Get("Content-Length") != strconv.Itoa(tc.size) {
				t.Errorf("download headers %v", r.header)
			}
			_, params, err := mime.ParseMediaType(r.header.Get("Content-Disposition"))
			if err != nil || params["filename"] != tc.fileName {
				t.Errorf("Content-Disposition %q gives %q (%v)", r.header.Get("Content-Disposition"), params["filename"], err)
			}
		})
	}
	var doc tQuote
	e.do("GET", path("/v2/cpq/1/customer/2/quote/%d/toflist", q.QuoteID), nil).wantStatus(t, 200).decode(t, &doc)
	if len(doc.Attachments) != 3 || doc.Attachments[2].Size != 300<<10 {
		t.Fatalf("quote attachments = %+v", doc.Attachments)
	}
	// Delete: 204, then gone, and its temporary file removed.
	last := doc.Attachments[2]
	e.sim.mu.Lock()
	spilled := e.sim.quotes[q.QuoteID].Attachments[2].path
	e.sim.mu.Unlock()
	e.do("DELETE", path("/v2/attachment/%d/quote/%d", last.AttachmentID, q.QuoteID), nil).wantStatus(t, http.StatusNoContent)
	e.do("GET", path("/v2/attachment/%d/quote/%d", last.AttachmentID, q.QuoteID), nil).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("DELETE", path("/v2/attachment/%d/quote/%d", last.AttachmentID, q.QuoteID), nil).wantError(t, http.StatusNotFound, codeNotFound)
	if _, err := os.Stat(spilled); !os.IsNotExist(err) {
		t.Errorf("temporary file of a deleted attachment still exists: %v", err)
	}
	// An attachment is reached through its own quote only.
	e.do("GET", path("/v2/attachment/%d/quote/900001", doc.Attachments[0].AttachmentID), nil).wantError(t, http.StatusNotFound, codeNotFound)
}

func TestAttachmentCloseRemovesTemporaryFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sim := New(Options{MemoryCap: 1024, TempDir: dir})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	e := &env{t: t, sim: sim, srv: srv}
	e.upload(900001, "OTHER", "big.bin", "application/octet-stream", randomBytes(t, 64<<10)).wantStatus(t, http.StatusCreated)
	entries, _ := filepath.Glob(filepath.Join(dir, "v2sim-*", "*"))
	if len(entries) != 1 {
		t.Fatalf("spilled files = %v", entries)
	}
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "v2sim-*")); len(left) != 0 {
		t.Fatalf("Close left %v", left)
	}
}

func TestAttachmentRejections(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{MaxUpload: 10 << 10, MemoryCap: 1 << 10})
	quoteID := int64(900002)
	// Over MaxUpload: 413 and nothing stored, no file left behind.
	e.upload(quoteID, "OTHER", "big.bin", "", randomBytes(t, 64<<10)).wantError(t, http.StatusRequestEntityTooLarge, codePayloadTooLarge)
	e.upload(quoteID, "OTHER", "limit.bin", "", randomBytes(t, 10<<10)).wantStatus(t, http.StatusCreated)
	e.upload(quoteID, "OTHER", "limit+1.bin", "", randomBytes(t, 10<<10+1)).wantError(t, http.StatusRequestEntityTooLarge, codePayloadTooLarge)
	e.sim.mu.Lock()
	n := len(e.sim.quotes[quoteID].Attachments)
	dir := e.sim.spillDir
	e.sim.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d attachments stored, want only the one within the limit", n)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 1 {
		t.Errorf("temporary files = %v, want the stored one only", files)
	}
	// Empty file, no filename, no file part, unknown type: 422.
	e.upload(quoteID, "OTHER", "empty.txt", "text/plain", nil).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	e.upload(quoteID, "OTHER", "", "text/plain", []byte("data")).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	body, ct := multipartBody(t, "document", "a.txt", "text/plain", []byte("data"))
	got := e.do("POST", path("/v2/attachment/file/quote/%d/attachmentType/OTHER", quoteID), body, withHeader("Content-Type", ct)).
		wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	if !got.hasFieldError("file") {
		t.Errorf("fieldErrors %+v", got.FieldErrors)
	}
	got = e.upload(quoteID, "PASSPORT", "a.txt", "text/plain", []byte("data")).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	if !got.hasFieldError("attachmentType") {
		t.Errorf("fieldErrors %+v", got.FieldErrors)
	}
	// Not multipart: 415. Unknown quote: 404. Broken multipart: 400.
	e.do("POST", path("/v2/attachment/file/quote/%d/attachmentType/OTHER", quoteID), `{"file":"x"}`).wantError(t, http.StatusUnsupportedMediaType, codeUnsupportedMedia)
	e.upload(999999, "OTHER", "a.txt", "text/plain", []byte("data")).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("POST", path("/v2/attachment/file/quote/%d/attachmentType/OTHER", quoteID), []byte("--xyz\r\nnot a part"),
		withHeader("Content-Type", "multipart/form-data; boundary=xyz")).wantError(t, http.StatusBadRequest, codeBadRequest)
	// A declared length far over the limit is refused before reading.
	req, _ := http.NewRequest("POST", e.srv.URL+path("/v2/attachment/file/quote/%d/attachmentType/OTHER", quoteID), io.LimitReader(zeroReader{}, 3<<20))
	req.ContentLength = 3 << 20
	req.Header.Set("Authorization", "Bearer x")
	req.Header.Set("Content-Type", "multipart/form-data; boundary=xyz")
	resp, err := e.srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("declared 3 MiB: status %d", resp.StatusCode)
		}
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestContentDisposition(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"plain.pdf", `quote "x".pdf`, `back\slash.txt`, "façade été.png", "semi;colon=eq.txt", "日本.pdf"} {
		v := contentDisposition(name)
		if !strings.HasPrefix(v, `attachment; filename="`) {
			t.Errorf("%q: %s", name, v)
		}
		disposition, params, err := mime.ParseMediaType(v)
		if err != nil || disposition != "attachment" || params["filename"] != name {
			t.Errorf("%q: %s parses to %q %q (%v)", name, v, disposition, params["filename"], err)
		}
	}
	if got := contentDisposition("a.pdf"); got != `attachment; filename="a.pdf"` {
		t.Errorf("plain name: %s", got)
	}
}
