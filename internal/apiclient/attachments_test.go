package apiclient

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// generator yields n pseudo-random bytes without holding them, hashing what
// it gave.
type generator struct {
	remaining int64
	state     uint64
	sum       hash.Hash
}

func newGenerator(n int64) *generator {
	return &generator{remaining: n, state: 0x9E3779B97F4A7C15, sum: sha256.New()}
}

func (g *generator) Read(p []byte) (int, error) {
	if g.remaining <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.remaining {
		p = p[:g.remaining]
	}
	for i := range p {
		g.state ^= g.state << 13
		g.state ^= g.state >> 7
		g.state ^= g.state << 17
		p[i] = byte(g.state)
	}
	g.remaining -= int64(len(p))
	g.sum.Write(p)
	return len(p), nil
}

func (g *generator) hexSum() string { return hex.EncodeToString(g.sum.Sum(nil)) }

// receivedFile is what the test service read from an upload.
type receivedFile struct {
	parts         int
	fieldName     string
	fileName      string
	contentType   string
	size          int64
	sha256        string
	contentLength int64
	bodyBytes     int64
	chunked       bool
	expect        string
}

// readUpload streams a multipart upload the way a service would, hashing the
// file part without holding it.
func readUpload(t *testing.T, r *http.Request) receivedFile {
	t.Helper()
	got := receivedFile{contentLength: r.ContentLength, expect: r.Header.Get("Expect")}
	got.chunked = len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked"
	counter := &countingReader{r: r.Body}
	r.Body = io.NopCloser(counter)
	mr, err := r.MultipartReader()
	if err != nil {
		t.Errorf("MultipartReader: %v (Content-Type %q)", err, r.Header.Get("Content-Type"))
		return got
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Errorf("NextPart: %v", err)
			return got
		}
		got.parts++
		got.fieldName, got.fileName, got.contentType = part.FormName(), part.FileName(), part.Header.Get("Content-Type")
		h := sha256.New()
		n, err := io.Copy(h, part)
		if err != nil {
			t.Errorf("read part: %v", err)
		}
		got.size, got.sha256 = n, hex.EncodeToString(h.Sum(nil))
	}
	_, _ = io.Copy(io.Discard, r.Body)
	got.bodyBytes = counter.n
	return got
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func attachmentAnswer(name string, size int64, sum string) string {
	return fmt.Sprintf(`{"attachmentId": 5, "quoteId": 900001, "attachmentType": "ID_DOCUMENT", "fileName": %q,
		"contentType": "application/pdf", "size": %d, "sha256": %q, "createdAt": "2026-11-21T09:00:00Z"}`, name, size, sum)
}

func TestAttachmentsUpload(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	var got receivedFile
	f.handle("POST /v2/attachment/file/quote/900001/attachmentType/ID_DOCUMENT", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, false)
		testAccept(t, r, "application/json")
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "multipart/form-data; boundary=") {
			t.Errorf("Content-Type = %q, want multipart/form-data", ct)
		}
		got = readUpload(t, r)
		writeJSON(w, http.StatusCreated, attachmentAnswer(got.fileName, got.size, got.sha256))
	})
	content := []byte("%PDF-1.7 identity document\n")
	sum := sha256.Sum256(content)
	att, err := client.Attachments.Upload(authCtx(t), 900001, AttachmentTypeIDDocument, `carta "identità".pdf`, "application/pdf",
		int64(len(content)), bytes.NewReader(content))
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if got.parts != 1 || got.fieldName != "file" || got.fileName != `carta "identità".pdf` || got.contentType != "application/pdf" {
		t.Errorf("service received %+v", got)
	}
	if got.sha256 != hex.EncodeToString(sum[:]) || got.size != int64(len(content)) {
		t.Errorf("service received %d bytes sha256 %s, want %d bytes %x", got.size, got.sha256, len(content), sum)
	}
	if got.contentLength != got.bodyBytes || got.chunked {
		t.Errorf("Content-Length %d, body %d bytes, chunked %v: want an exact length", got.contentLength, got.bodyBytes, got.chunked)
	}
	if got.expect != "" {
		t.Errorf("Expect = %q on a small upload", got.expect)
	}
	if att.AttachmentID != 5 || att.QuoteID != 900001 || att.Size != int64(len(content)) || att.FileName != `carta "identità".pdf` || len(att.Raw) == 0 {
		t.Errorf("Upload = %+v", att)
	}
}

// A 64 MiB file from a generator reaches the service intact with an exact
// Content-Length, and the client does not hold it in memory.
func TestAttachmentsUploadStreamsLargeFile(t *testing.T) {
	// Not parallel: the allocation measurement must see this test alone.
	client, f := setup(t)
	const size = 64 << 20
	var got receivedFile
	f.handle("POST /v2/attachment/file/quote/900001/attachmentType/CONTRACT_ANNEX", func(w http.ResponseWriter, r *http.Request) {
		got = readUpload(t, r)
		writeJSON(w, http.StatusCreated, attachmentAnswer(got.fileName, got.size, got.sha256))
	})
	gen := newGenerator(size)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	att, err := client.Attachments.Upload(authCtx(t), 900001, AttachmentTypeContractAnnex, "annex.bin", "", size, gen)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if got.size != size || got.sha256 != gen.hexSum() || att.SHA256 != gen.hexSum() {
		t.Errorf("service received %d bytes sha256 %s, want %d bytes %s", got.size, got.sha256, size, gen.hexSum())
	}
	if got.contentLength != got.bodyBytes || got.contentLength <= size || got.chunked {
		t.Errorf("Content-Length %d, body %d bytes, chunked %v", got.contentLength, got.bodyBytes, got.chunked)
	}
	if got.contentType != "application/octet-stream" || got.expect != "100-continue" {
		t.Errorf("part Content-Type %q, Expect %q", got.contentType, got.expect)
	}
	// Client and test service together allocated far less than the file.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/4 {
		t.Errorf("upload of %d MiB allocated %d MiB: the file is being buffered", size>>20, alloc>>20)
	}
}

// Without a known size the body is sent chunked.
func TestAttachmentsUploadUnknownSize(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	var got receivedFile
	f.handle("POST /v2/attachment/file/quote/900001/attachmentType/OTHER", func(w http.ResponseWriter, r *http.Request) {
		got = readUpload(t, r)
		writeJSON(w, http.StatusCreated, attachmentAnswer(got.fileName, got.size, got.sha256))
	})
	gen := newGenerator(3<<20 + 17)
	if _, err := client.Attachments.Upload(authCtx(t), 900001, AttachmentTypeOther, "data.bin", "application/octet-stream", -1, gen); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if got.sha256 != gen.hexSum() || got.size != 3<<20+17 || !got.chunked || got.contentLength != -1 {
		t.Errorf("service received %+v", got)
	}
}

// A reader shorter or longer than the announced size fails the upload: the
// service never gets a complete body with a wrong file.
func TestAttachmentsUploadSizeMismatch(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	completed := 0
	f.handle("POST /v2/attachment/file/quote/900001/attachmentType/OTHER", func(w http.ResponseWriter, r *http.Request) {
		mr, err := r.MultipartReader()
		if err != nil {
			writeJSON(w, 415, `{"code":"UNSUPPORTED_MEDIA_TYPE"}`)
			return
		}
		for {
			part, err := mr.NextPart()
			if err != nil {
				if err == io.EOF {
					completed++
					writeJSON(w, 201, attachmentAnswer("x", 0, ""))
				}
				return
			}
			if _, err := io.Copy(io.Discard, part); err != nil {
				return
			}
		}
	})
	ctx := authCtx(t)
	for _, tc := range []struct {
		name string
		size int64
		data string
	}{
		{"short", 100, "only ten b"},
		{"long", 5, "more than five bytes"},
	} {
		_, err := client.Attachments.Upload(ctx, 900001, AttachmentTypeOther, "x.txt", "text/plain", tc.size, strings.NewReader(tc.data))
		if err == nil {
			t.Errorf("%s: Upload succeeded", tc.name)
		}
	}
	if completed != 0 {
		t.Errorf("service completed %d uploads with a wrong size", completed)
	}
}

func TestAttachmentsUploadRefusesBadInput(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	ctx := authCtx(t)
	for _, tc := range []struct {
		name, attachmentType, fileName, contentType string
		size                                        int64
		quoteID                                     int64
	}{
		{"empty file name", "OTHER", "", "text/plain", 1, 900001},
		{"header injection in file name", "OTHER", "a.txt\r\nX-Evil: 1", "text/plain", 1, 900001},
		{"bad content type", "OTHER", "a.txt", "text/plain\r\nX-Evil: 1", 1, 900001},
		{"not a media type", "OTHER", "a.txt", "no slash ;;", 1, 900001},
		{"size below -1", "OTHER", "a.txt", "text/plain", -2, 900001},
		{"quote id 0", "OTHER", "a.txt", "text/plain", 1, 0},
		{"attachment type ..", "..", "a.txt", "text/plain", 1, 900001},
		{"empty attachment type", "", "a.txt", "text/plain", 1, 900001},
	} {
		_, err := client.Attachments.Upload(ctx, tc.quoteID, tc.attachmentType, tc.fileName, tc.contentType, tc.size, strings.NewReader("x"))
		if !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("%s: err = %v, want ErrInvalidParameter", tc.name, err)
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("%d requests sent for refused uploads", n)
	}
}

func TestAttachmentsDelete(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("DELETE /v2/attachment/5/quote/900001", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodDelete, false)
		testNoBody(t, r)
		w.WriteHeader(http.StatusNoContent)
	})
	if err := client.Attachments.Delete(authCtx(t), 5, 900001); err != nil {
		t.Fatalf("Delete: %v", err)
	}
}

// Downloads stream: the body is read from the connection as the caller reads.
func TestAttachmentsDownload(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	const size = 8<<20 + 3
	served := newGenerator(size)
	f.handle("GET /v2/attachment/5/quote/900001", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testAccept(t, r, "*/*")
		testNoBody(t, r)
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", fmt.Sprint(size))
		w.Header().Set("Content-Disposition", `attachment; filename="..\\..\\scan 1.png"`)
		_, _ = io.Copy(w, served)
	})
	d, err := client.Attachments.Download(authCtx(t), 5, 900001)
	if err != nil {
		t.Fatalf("Download: %v", err)
	}
	defer d.Close()
	if d.ContentType != "image/png" || d.ContentLength != size || d.FileName != "scan 1.png" {
		t.Errorf("Download = type %q length %d name %q", d.ContentType, d.ContentLength, d.FileName)
	}
	h := sha256.New()
	n, err := io.Copy(h, d.Body)
	if err != nil || n != size {
		t.Fatalf("read %d bytes, err %v", n, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != served.hexSum() {
		t.Error("downloaded bytes differ from the served ones")
	}
}

// A service that refuses an upload early (413 before reading) is answered
// without the client pushing the whole file (Expect: 100-continue).
func TestAttachmentsUploadRefusedEarly(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/attachment/file/quote/900001/attachmentType/OTHER", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusRequestEntityTooLarge, `{"status": 413, "code": "PAYLOAD_TOO_LARGE", "message": "over 2 GiB"}`)
	})
	const size = 64 << 20
	gen := newGenerator(size)
	_, err := client.Attachments.Upload(authCtx(t), 900001, AttachmentTypeOther, "big.bin", "", size, gen)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, ErrPayloadTooLarge) || apiErr.Code != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("err = %v, want a 413 APIError", err)
	}
	if gen.remaining < size/2 {
		t.Errorf("%d of %d bytes were read from the file for a refused upload", size-gen.remaining, size)
	}
}
