package handlers

import (
	"bytes"
	"html"
	"io"
	"net/http"
	"strings"
	"testing"
)

// pdfLike is n bytes that start like a PDF (the rest pseudo-random): the portal checks a PDF's
// first bytes only (docs/documents.md).
func pdfLike(seed uint64, n int64) io.Reader {
	head := "%PDF-1.7\n"
	return io.MultiReader(strings.NewReader(head), randomBytes(seed, n-int64(len(head))))
}

// smallPDF is a whole, valid one-page PDF.
const smallPDF = "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
	"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"

// An upload is what its name says or nothing reaches the v2 API: a 415 toast names the file and
// what is wrong, in the reader's language (issue 33: 30 MB of random bytes named .pdf were stored
// as a contract annex).
func TestUploadIsWhatItsNameSays(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{uploadLimit: 8 << 20})
	ref := e.newQuote(t)
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
	notText := io.MultiReader(strings.NewReader(strings.Repeat("a;b;c\n", 200_000)), strings.NewReader("\x00\xff"))
	for _, tc := range []struct {
		name, fileName, declared string
		body                     io.Reader
		streamed                 bool
		want                     string
	}{
		{"random bytes named .pdf", "annex.pdf", "application/pdf", randomBytes(3, 385), false,
			`"annex.pdf" is not a PDF file: its content does not match its name. Nothing was stored.`},
		{"3 MiB of random bytes named .pdf, streamed", "annex.pdf", "application/pdf", randomBytes(4, 3<<20), true,
			"is not a PDF file"},
		{"a PNG named .pdf", "scan.pdf", "application/pdf", strings.NewReader(png), false, `"scan.pdf" is not a PDF file`},
		{"a PDF declared as an image", "annex.pdf", "image/png", strings.NewReader(smallPDF), false,
			`"annex.pdf" was sent as image/png, which is not a PDF file as its name says.`},
		{"a program", "setup.exe", "application/octet-stream", strings.NewReader("MZ\x90\x00"), false,
			`"setup.exe" cannot be uploaded: the portal accepts only PDF, PNG`},
		{"no extension", "annex", "application/pdf", strings.NewReader(smallPDF), false, "cannot be uploaded"},
		{"a CSV with a NUL byte past the first 512 KiB, streamed", "prices.csv", "text/csv", notText, true,
			`"prices.csv" is not plain text`},
	} {
		parts := []formPart{
			{name: "attachmentType", body: strings.NewReader("CONTRACT_ANNEX")},
			{name: "file", fileName: tc.fileName, contentType: tc.declared, body: tc.body},
		}
		var resp response
		if tc.streamed {
			body, contentType := streamedMultipart(parts...)
			resp = e.upload(t, ref, body, contentType, -1)
		} else {
			body, contentType := bufferedMultipart(t, parts...)
			resp = e.upload(t, ref, body, contentType, int64(body.Len()))
		}
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("%s: %d, want 415: %s", tc.name, resp.StatusCode, resp.body)
		}
		if text := html.UnescapeString(resp.body); !strings.Contains(text, tc.want) {
			t.Errorf("%s: the answer does not say %q: %s", tc.name, tc.want, text)
		}
	}
	if n := len(e.quote(t, ref).Attachments); n != 0 {
		t.Errorf("%d refused uploads were stored", n)
	}

	// A real PDF, a PNG, a CSV as Windows declares it and a text file larger than the first bytes
	// read before the v2 call are stored, with their kind's media type.
	longText := strings.Repeat("Grüße, 1 €; ", 60_000) // ~ 850 KiB: streamed, checked as it goes
	for _, ok := range []struct {
		fileName, declared string
		body               string
		streamed           bool
		stored             string
	}{
		{"annex.pdf", "application/pdf", smallPDF, false, "application/pdf"},
		{"Scan.PNG", "application/octet-stream", png, false, "image/png"},
		{"prices.csv", "application/vnd.ms-excel", "a;b\n1;2\n", false, "text/csv; charset=utf-8"},
		{"notes.txt", "text/plain", longText, true, "text/plain; charset=utf-8"},
	} {
		parts := []formPart{
			{name: "attachmentType", body: strings.NewReader("OTHER")},
			{name: "file", fileName: ok.fileName, contentType: ok.declared, body: strings.NewReader(ok.body)},
		}
		var resp response
		if ok.streamed {
			body, contentType := streamedMultipart(parts...)
			resp = e.upload(t, ref, body, contentType, -1)
		} else {
			body, contentType := bufferedMultipart(t, parts...)
			resp = e.upload(t, ref, body, contentType, int64(body.Len()))
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d, want 200: %s", ok.fileName, resp.StatusCode, resp.body)
		}
	}
	stored := map[string]string{}
	for _, a := range e.quote(t, ref).Attachments {
		stored[a.FileName] = a.ContentType
		if a.FileName == "notes.txt" && a.Size != int64(len(longText)) {
			t.Errorf("notes.txt stored with %d bytes, want %d", a.Size, len(longText))
		}
	}
	for name, want := range map[string]string{"annex.pdf": "application/pdf", "Scan.PNG": "image/png",
		"prices.csv": "text/csv; charset=utf-8", "notes.txt": "text/plain; charset=utf-8"} {
		if stored[name] != want {
			t.Errorf("%s stored as %q, want %q (all: %v)", name, stored[name], want, stored)
		}
	}
}

// The success toast writes the size in the reader's language, never as Go ("%!s(i18n.Bytes=385)").
func TestUploadToastSize(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)
	pdf := smallPDF + strings.Repeat("%", 385-len(smallPDF))
	body, contentType := bufferedMultipart(t,
		formPart{name: "attachmentType", body: strings.NewReader("CONTRACT_ANNEX")},
		formPart{name: "file", fileName: "annex.pdf", contentType: "application/pdf", body: bytes.NewReader([]byte(pdf))},
	)
	resp := e.upload(t, ref, body, contentType, int64(body.Len()))
	trig := resp.Header.Get("HX-Trigger")
	if resp.StatusCode != http.StatusOK || !strings.Contains(trig, "Uploaded annex.pdf (385 bytes).") || strings.Contains(trig, "%!") {
		t.Errorf("%d, toast %q", resp.StatusCode, trig)
	}
}
