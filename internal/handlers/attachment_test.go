package handlers

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

func TestQuoteDocumentsRegion(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)
	if _, err := e.api.Attachments.Upload(e.ctx(), ref.QuoteID, apiclient.AttachmentTypeIDDocument, `id <i>card.pdf`, "application/pdf", -1,
		strings.NewReader("%PDF-1.4 test")); err != nil {
		t.Fatal(err)
	}

	partial := e.p.get(t, e.user, ref.URL()+"/documents", htmx)
	if partial.StatusCode != http.StatusOK {
		t.Fatalf("partial: %d %s", partial.StatusCode, partial.body)
	}
	doc := parseHTML(t, partial.body)
	if doc.Find("html").Length() != 0 && doc.Find("header.site-header").Length() != 0 {
		t.Error("the htmx answer is a whole page, want the region only")
	}
	region := doc.Find(`#documents-region[data-testid="documents-region"]`)
	if region.Length() != 1 {
		t.Fatalf("no #documents-region:\n%s", partial.body)
	}
	rows := region.Find(`[data-testid="attachment-row"]`)
	if rows.Length() != 1 || rows.AttrOr("data-file-name", "") != "id _i_card.pdf" {
		t.Errorf("attachment rows: %d, name %q", rows.Length(), rows.AttrOr("data-file-name", ""))
	}
	if rows.Find("i").Length() != 0 {
		t.Error("the file name's markup was not escaped")
	}
	if got := rows.Find(`[data-testid="attachment-type"]`).Text(); got != "Id document" {
		t.Errorf("type label %q", got)
	}
	// The upload form: type select before the file input, every type offered, the limit known to app.js.
	form := region.Find(`form[data-testid="upload-form"]`)
	if form.AttrOr("hx-encoding", "") != "multipart/form-data" || form.AttrOr("hx-post", "") != ref.URL()+"/attachments" {
		t.Errorf("upload form attributes: %v", form.Nodes[0].Attr)
	}
	if form.AttrOr("data-max-bytes", "") != strconv.Itoa(10<<20) {
		t.Errorf("data-max-bytes %q", form.AttrOr("data-max-bytes", ""))
	}
	names := form.Find("select, input").Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("name", "") })
	if len(names) < 2 || names[0] != "attachmentType" || names[1] != "file" {
		t.Errorf("form field order %v, want attachmentType before file", names)
	}
	if n := form.Find(`select[name=attachmentType] option`).Length(); n != len(apiclient.AttachmentTypes()) {
		t.Errorf("%d attachment types offered, want %d", n, len(apiclient.AttachmentTypes()))
	}
	if form.Find(`progress[data-upload-progress]`).Length() != 1 {
		t.Error("no progress bar in the upload form")
	}
	if region.Find(`[data-testid="generate-contract"]`).Length() != 1 || region.Find(`[data-testid="generate-contract"][disabled]`).Length() != 0 {
		t.Error("a quote with a cart offers an enabled Generate contract button")
	}

	page := e.p.get(t, e.user, ref.URL()+"/documents", nil)
	pageDoc := parseHTML(t, page.body)
	if page.StatusCode != http.StatusOK || pageDoc.Find("header.site-header").Length() != 1 || pageDoc.Find("#documents-region").Length() != 1 {
		t.Errorf("direct visit: %d, want the region inside a page", page.StatusCode)
	}
	for _, bad := range []string{"/quotes/0/1/1/documents", "/quotes/1/x/1/documents", "/quotes/1/1/99999999999999999999/documents"} {
		if resp := e.p.get(t, e.user, bad, nil); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s answered %d, want 400", bad, resp.StatusCode)
		}
	}
}

// A large file goes through the portal to the simulator as a stream, byte for byte, without the
// portal holding it: the request has no Content-Length (the limit is checked while streaming).
func TestUploadStreamsLargeFileToTheService(t *testing.T) {
	// Not parallel: it measures the process's allocations.
	const size = 96 << 20
	e := newDocsEnv(t, docsOptions{uploadLimit: 256 << 20})
	ref := e.newQuote(t)
	want := sha256Of(t, pdfLike(7, size))

	body, contentType := streamedMultipart(
		formPart{name: "attachmentType", body: strings.NewReader("CONTRACT_ANNEX")},
		formPart{name: "file", fileName: "big annex.pdf", contentType: "application/octet-stream", body: pdfLike(7, size)},
	)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp := e.upload(t, ref, body, contentType, -1)
	runtime.ReadMemStats(&after)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %s", resp.StatusCode, resp.body)
	}
	// Buffering the file anywhere (ParseMultipartForm, io.ReadAll) would allocate at least its size.
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d KiB for a %d MiB upload", allocated>>10, size>>20)
	if allocated > size/2 {
		t.Errorf("the upload of %d MiB allocated %d MiB: the file is being buffered", size>>20, allocated>>20)
	}
	attachments := e.quote(t, ref).Attachments
	if len(attachments) != 1 {
		t.Fatalf("the simulator has %d attachments, want 1", len(attachments))
	}
	got := attachments[0]
	if got.SHA256 != want || got.Size != size || got.FileName != "big annex.pdf" || got.AttachmentType != "CONTRACT_ANNEX" {
		t.Errorf("stored %+v, want sha256 %s and %d bytes", got, want, size)
	}
	doc := parseHTML(t, resp.body)
	if doc.Find(`#attachment-list [data-testid="attachment-row"]`).Length() != 1 {
		t.Errorf("the answer does not list the new attachment:\n%s", resp.body)
	}
	if trig := resp.Header.Get("HX-Trigger"); !strings.Contains(trig, "Uploaded big annex.pdf (96 MiB).") {
		t.Errorf("HX-Trigger %q has no success toast", trig)
	}
	uploads := e.requestsTo("attachments.upload")
	if len(uploads) != 1 || !strings.HasSuffix(uploads[0].EscapedPath, fmt.Sprintf("/quote/%d/attachmentType/CONTRACT_ANNEX", ref.QuoteID)) {
		t.Errorf("upload requests %+v", uploads)
	}
}

func TestUploadOverTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	e := newDocsEnv(t, docsOptions{uploadLimit: limit})
	ref := e.newQuote(t)

	t.Run("size known: refused before anything is sent", func(t *testing.T) {
		body, contentType := bufferedMultipart(t,
			formPart{name: "attachmentType", body: strings.NewReader("OTHER")},
			formPart{name: "file", fileName: "too-big.pdf", body: pdfLike(1, limit+10)},
		)
		resp := e.upload(t, ref, body, contentType, int64(body.Len()))
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413: %s", resp.StatusCode, resp.body)
		}
		if !strings.Contains(resp.body, "larger than the upload limit of 1 MiB") || !strings.Contains(resp.body, "Nothing was stored") {
			t.Errorf("message: %s", resp.body)
		}
		if n := len(e.requestsTo("attachments.upload")); n != 0 {
			t.Errorf("%d upload requests reached the simulator, want none", n)
		}
	})
	t.Run("size unknown: stopped while streaming, nothing stored", func(t *testing.T) {
		body, contentType := streamedMultipart(
			formPart{name: "attachmentType", body: strings.NewReader("OTHER")},
			formPart{name: "file", fileName: "too-big.pdf", body: pdfLike(2, 3*limit)},
		)
		resp := e.upload(t, ref, body, contentType, -1)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(resp.body, "larger than the upload limit") {
			t.Fatalf("status %d, want 413 with the limit: %s", resp.StatusCode, resp.body)
		}
		if n := len(e.quote(t, ref).Attachments); n != 0 {
			t.Errorf("the simulator stored %d attachments after an aborted upload", n)
		}
	})
}

func TestUploadBadInput(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)
	typePart := func() formPart { return formPart{name: "attachmentType", body: strings.NewReader("ID_DOCUMENT")} }
	cases := []struct {
		name   string
		parts  func() []formPart
		status int
		want   string
	}{
		{"file before type", func() []formPart {
			return []formPart{{name: "file", fileName: "a.pdf", body: strings.NewReader("x")}, typePart()}
		}, 400, "must come before the file"},
		{"empty file", func() []formPart {
			return []formPart{typePart(), {name: "file", fileName: "empty.pdf", body: strings.NewReader("")}}
		}, 422, "is empty"},
		{"file without a name", func() []formPart {
			return []formPart{typePart(), {name: "file", fileFieldWithoutName: true, body: strings.NewReader("data")}}
		}, 422, "has no name"},
		{"unknown type", func() []formPart {
			return []formPart{{name: "attachmentType", body: strings.NewReader("PASSPORT")}, {name: "file", fileName: "a.pdf", body: strings.NewReader("x")}}
		}, 422, "attachment type from the list"},
		{"no file", func() []formPart { return []formPart{typePart()} }, 422, "Choose a file"},
	}
	for _, tc := range cases {
		body, contentType := bufferedMultipart(t, tc.parts()...)
		resp := e.upload(t, ref, body, contentType, int64(body.Len()))
		if resp.StatusCode != tc.status || !strings.Contains(resp.body, tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, resp.StatusCode, resp.body, tc.status, tc.want)
		}
		if resp.Header.Get("HX-Retarget") != "#toasts" {
			t.Errorf("%s: the error is not a toast (HX-Retarget %q)", tc.name, resp.Header.Get("HX-Retarget"))
		}
	}
	notMultipart := e.upload(t, ref, strings.NewReader("attachmentType=OTHER"), "application/x-www-form-urlencoded", -1)
	if notMultipart.StatusCode != http.StatusBadRequest || !strings.Contains(notMultipart.body, "multipart/form-data") {
		t.Errorf("urlencoded upload: %d %s", notMultipart.StatusCode, notMultipart.body)
	}
	if n := len(e.requestsTo("attachments.upload")); n != 0 {
		t.Errorf("%d bad uploads reached the simulator", n)
	}
	if n := len(e.quote(t, ref).Attachments); n != 0 {
		t.Errorf("%d attachments stored", n)
	}
}

func TestAttachmentDownloadAndDelete(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)
	content := []byte("<html><script>alert(1)</script></html> and more")
	stored, err := e.api.Attachments.Upload(e.ctx(), ref.QuoteID, apiclient.AttachmentTypeOther, `..\dir\Bericht "Q4" Ünïcode;.html`, "text/html",
		int64(len(content)), bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	pdf, err := e.api.Attachments.Upload(e.ctx(), ref.QuoteID, apiclient.AttachmentTypeIDDocument, "id.pdf", "application/pdf", 9,
		strings.NewReader("%PDF-1.4\n"))
	if err != nil {
		t.Fatal(err)
	}

	resp := e.p.get(t, e.user, attachmentURL(ref, stored.AttachmentID), nil)
	if resp.StatusCode != http.StatusOK || resp.body != string(content) {
		t.Fatalf("download: %d %q", resp.StatusCode, resp.body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("an HTML attachment is served as %q, want application/octet-stream", ct)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(content)) {
		t.Errorf("Content-Length %q", cl)
	}
	cd := resp.Header.Get("Content-Disposition")
	if !strings.HasPrefix(cd, `attachment; filename="Bericht Q4 _n_code_.html"; filename*=utf-8''Bericht%20Q4%20%C3%9Cn%C3%AFcode_.html`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	if resp.Header.Get("Content-Encoding") != "" {
		t.Error("a download was compressed")
	}

	pdfResp := e.p.get(t, e.user, attachmentURL(ref, pdf.AttachmentID), nil)
	if pdfResp.Header.Get("Content-Type") != "application/pdf" || pdfResp.Header.Get("Content-Disposition") != `attachment; filename=id.pdf` {
		t.Errorf("PDF attachment headers: %q %q", pdfResp.Header.Get("Content-Type"), pdfResp.Header.Get("Content-Disposition"))
	}

	if missing := e.p.get(t, e.user, attachmentURL(ref, 999), nil); missing.StatusCode != http.StatusNotFound {
		t.Errorf("unknown attachment: %d", missing.StatusCode)
	}

	// The delete button asks with the attachment as the quote lists it now.
	confirmURL := parseHTML(t, e.p.get(t, e.user, ref.URL()+"/documents", htmx).body).
		Find(`[data-attachment-id="`+strconv.Itoa(int(pdf.AttachmentID))+`"] [data-testid="attachment-delete"]`).AttrOr("data-confirm-url", "")
	if got := e.p.get(t, e.user, confirmURL, htmx).body; !strings.Contains(got, "Delete the attachment id.pdf (") || !strings.Contains(got, "cannot be undone") {
		t.Errorf("delete confirmation from %q: %s", confirmURL, got)
	}

	del := e.htmxDo(t, http.MethodDelete, attachmentURL(ref, stored.AttachmentID), nil)
	if del.StatusCode != http.StatusOK {
		t.Fatalf("delete: %d %s", del.StatusCode, del.body)
	}
	rows := parseHTML(t, del.body).Find(`#attachment-list [data-testid="attachment-row"]`)
	if rows.Length() != 1 || rows.AttrOr("data-attachment-id", "") != strconv.Itoa(int(pdf.AttachmentID)) {
		t.Errorf("after delete the list shows %d rows", rows.Length())
	}
	if !strings.Contains(del.Header.Get("HX-Trigger"), "deleted") {
		t.Errorf("no toast: %q", del.Header.Get("HX-Trigger"))
	}
	left := e.quote(t, ref).Attachments
	if len(left) != 1 || left[0].AttachmentID != pdf.AttachmentID {
		t.Errorf("the simulator still has %+v", left)
	}
	// Deleted elsewhere after the page was rendered: nothing to delete, and it says so.
	gone := e.p.get(t, e.user, attachmentURL(ref, stored.AttachmentID)+"/confirm", htmx)
	if !strings.Contains(gone.body, `"refused":true`) || !strings.Contains(gone.body, "nothing was deleted") {
		t.Errorf("confirmation of a deleted attachment: %s", gone.body)
	}
}

func TestSafeFileNameAndContentDisposition(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../../etc/passwd", "passwd"},
		{`C:\Users\x\file.txt`, "file.txt"},
		{"a\x00b\r\nc.txt", "abc.txt"},
		{`say "hi" 'there'.txt`, "say hi there.txt"},
		{"\u202egnp.exe", "gnp.exe"},
		{"a<b>c:d|e?f*g;h.txt", "a_b_c_d_e_f_g_h.txt"},
		{"..", "fallback"},
		{"   ", "fallback"},
		{"Übersicht 2026.pdf", "Übersicht 2026.pdf"},
		{strings.Repeat("x", 300) + ".pdf", strings.Repeat("x", 196) + ".pdf"},
		{"bad\xffutf8.txt", "bad_utf8.txt"},
	}
	for _, tc := range cases {
		if got := safeFileName(tc.in, "fallback"); got != tc.want {
			t.Errorf("safeFileName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := contentDisposition("inline", "contract-C-2026-000001.pdf"); got != "inline; filename=contract-C-2026-000001.pdf" {
		t.Errorf("ASCII: %q", got)
	}
	if got := contentDisposition("attachment", "Ärger.pdf"); got != `attachment; filename=_rger.pdf; filename*=utf-8''%C3%84rger.pdf` {
		t.Errorf("unicode: %q", got)
	}
	if got := contentDisposition("attachment", "a b.pdf"); got != `attachment; filename="a b.pdf"` {
		t.Errorf("with space: %q", got)
	}
}

// io.Reader check of the upload reader: it fails once past the limit and says so.
func TestUploadReaderLimit(t *testing.T) {
	t.Parallel()
	r := &uploadReader{r: strings.NewReader("0123456789"), limit: 5}
	_, err := io.ReadAll(r)
	if err != errUploadOverLimit || !r.exceeded {
		t.Errorf("err %v exceeded %v", err, r.exceeded)
	}
	ok := &uploadReader{r: strings.NewReader("01234"), limit: 5}
	if data, err := io.ReadAll(ok); err != nil || string(data) != "01234" || ok.exceeded {
		t.Errorf("at the limit: %q %v", data, err)
	}
}

// Streamed calls must start answering within the portal's v2 time limit, like every other call:
// a download whose answer does not come, an upload whose answer does not come once the whole file
// was sent, both answer 504 instead of waiting for the transport's minute.
func TestStreamedCallsAnswerWithinTheTimeLimit(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{v2Timeout: 300 * time.Millisecond})
	ref := e.newQuote(t)
	stored, err := e.api.Attachments.Upload(e.ctx(), ref.QuoteID, apiclient.AttachmentTypeOther, "a.txt", "text/plain", 1, strings.NewReader("a"))
	if err != nil {
		t.Fatal(err)
	}
	e.sim.SetFault("attachments.download", v2sim.Fault{Hang: true, Times: 1})
	if resp := e.p.get(t, e.user, attachmentURL(ref, stored.AttachmentID), nil); resp.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("download with no answer: %d, want 504", resp.StatusCode)
	}
	e.sim.SetFault("contracts.auditpdf", v2sim.Fault{Hang: true, Times: 1})
	if resp := e.p.get(t, e.user, auditURL(ref.QuoteID)+"/pdf", nil); resp.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("audit PDF with no answer: %d, want 504", resp.StatusCode)
	}
	e.sim.SetFault("attachments.upload", v2sim.Fault{Delay: 2 * time.Second, Times: 1})
	body, contentType := bufferedMultipart(t,
		formPart{name: "attachmentType", body: strings.NewReader("OTHER")},
		formPart{name: "file", fileName: "late.txt", body: strings.NewReader("late answer")},
	)
	if resp := e.upload(t, ref, body, contentType, int64(body.Len())); resp.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("upload answered late: %d, want 504", resp.StatusCode)
	}
}
