package v2sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// attachmentTypes are the types of docs/v2-assumptions.md A6.
var attachmentTypes = []string{"CONTRACT_ANNEX", "ID_DOCUMENT", "PRIVACY_CONSENT", "PROOF_OF_ADDRESS", "OTHER", "QUOTE_PDF"}

// multipartOverhead is what an upload may carry besides the file (boundaries, part headers, small fields)
// before its declared length alone is enough to refuse it.
const multipartOverhead = 1 << 20

type attachment struct {
	ID          int32
	QuoteID     int64
	Type        string
	FileName    string
	ContentType string
	Size        int64
	SHA256      string
	CreatedAt   time.Time
	data        []byte // the bytes, when at most MemoryCap
	path        string // the temporary file, when larger
}

type attachmentDoc struct {
	AttachmentID   int32     `json:"attachmentId"`
	QuoteID        int64     `json:"quoteId"`
	AttachmentType string    `json:"attachmentType"`
	FileName       string    `json:"fileName"`
	ContentType    string    `json:"contentType"`
	Size           int64     `json:"size"`
	SHA256         string    `json:"sha256"`
	CreatedAt      time.Time `json:"createdAt"`
}

func (a *attachment) doc() attachmentDoc {
	return attachmentDoc{AttachmentID: a.ID, QuoteID: a.QuoteID, AttachmentType: a.Type, FileName: a.FileName,
		ContentType: a.ContentType, Size: a.Size, SHA256: a.SHA256, CreatedAt: a.CreatedAt}
}

// open answers a reader of the stored bytes.
func (a *attachment) open() (io.ReadCloser, error) {
	if a.path == "" {
		return io.NopCloser(bytes.NewReader(a.data)), nil
	}
	return os.Open(a.path)
}

func (a *attachment) discard() {
	if a.path != "" {
		_ = os.Remove(a.path)
	}
	a.data = nil
}

// spool keeps an upload in memory up to a limit and moves it to a temporary file beyond, while it streams.
type spool struct {
	memoryCap int64
	dir       func() (string, error)
	buf       bytes.Buffer
	file      *os.File
}

func (sp *spool) Write(p []byte) (int, error) {
	if sp.file == nil && int64(sp.buf.Len()+len(p)) > sp.memoryCap {
		dir, err := sp.dir()
		if err != nil {
			return 0, err
		}
		f, err := os.CreateTemp(dir, "attachment-*")
		if err != nil {
			return 0, fmt.Errorf("spool attachment: %w", err)
		}
		sp.file = f
		if _, err := f.Write(sp.buf.Bytes()); err != nil {
			return 0, fmt.Errorf("spool attachment: %w", err)
		}
		sp.buf = bytes.Buffer{}
	}
	if sp.file != nil {
		return sp.file.Write(p)
	}
	return sp.buf.Write(p)
}

// finish closes the temporary file; keep=false removes it.
func (sp *spool) finish(keep bool) (data []byte, path string, err error) {
	if sp.file == nil {
		if !keep {
			return nil, "", nil
		}
		return bytes.Clone(sp.buf.Bytes()), "", nil
	}
	path = sp.file.Name()
	err = sp.file.Close()
	if !keep || err != nil {
		_ = os.Remove(path)
		return nil, "", err
	}
	return nil, path, nil
}

// tempDir answers the simulator's own temporary directory, made on first use and removed by Close.
func (s *Server) tempDir() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spillDir == "" {
		dir, err := os.MkdirTemp(s.opts.TempDir, "v2sim-")
		if err != nil {
			return "", fmt.Errorf("attachment directory: %w", err)
		}
		s.spillDir = dir
	}
	return s.spillDir, nil
}

func errTooLarge(limit int64) *apiError {
	return newError(http.StatusRequestEntityTooLarge, codePayloadTooLarge, "attachments are limited to %d bytes", limit)
}

// POST /v2/attachment/file/quote/{quoteId}/attachmentType/{attachmentType}: multipart/form-data with one file
// part named "file" (A6). The upload is streamed: it is never held whole in memory above MemoryCap, its size and
// SHA-256 are computed as it arrives, and it is refused with 413 as soon as it passes MaxUpload, with nothing
// stored.
func (s *Server) uploadAttachment(w http.ResponseWriter, r *http.Request) error {
	quoteID, err := pathInt64(r, "quoteId")
	if err != nil {
		return err
	}
	attachmentType := r.PathValue("attachmentType")
	s.mu.Lock()
	known, exists := s.quotes[quoteID]
	var forbidden error
	if exists {
		forbidden = s.checkQuote(r, known)
	}
	s.mu.Unlock()
	if !exists {
		return errNotFound("quote %d not found", quoteID)
	}
	if forbidden != nil {
		return forbidden
	}
	if !slices.Contains(attachmentTypes, attachmentType) {
		return errValidation("attachmentType", "must be one of CONTRACT_ANNEX, ID_DOCUMENT, PRIVACY_CONSENT, PROOF_OF_ADDRESS, OTHER, QUOTE_PDF")
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMedia, "an upload must be multipart/form-data, got %q", r.Header.Get("Content-Type"))
	}
	if params["boundary"] == "" {
		return errBadRequest("the multipart/form-data Content-Type has no boundary")
	}
	if r.ContentLength > s.maxUpload+multipartOverhead {
		w.Header().Set("Connection", "close")
		return errTooLarge(s.maxUpload)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return errBadRequest("malformed multipart body: %v", err)
	}
	var (
		found       bool
		fileName    string
		contentType string
		size        int64
		digest      string
		sp          *spool
	)
	defer func() {
		if sp != nil {
			_, _, _ = sp.finish(false)
		}
	}()
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return errBadRequest("malformed multipart body: %v", err)
		}
		if part.FormName() != "file" {
			// Small form fields are tolerated and ignored; anything large is not what this call takes.
			if n, _ := io.Copy(io.Discard, io.LimitReader(part, multipartOverhead+1)); n > multipartOverhead {
				w.Header().Set("Connection", "close")
				return errTooLarge(s.maxUpload)
			}
			continue
		}
		if found {
			return errValidation("file", "send exactly one part named file")
		}
		found = true
		fileName = part.FileName()
		if fileName == "" || fileName == "." || fileName == "/" {
			return errValidation("file", "the file part needs a filename")
		}
		contentType = part.Header.Get("Content-Type")
		if _, _, err := mime.ParseMediaType(contentType); err != nil {
			contentType = "application/octet-stream"
		}
		sp = &spool{memoryCap: s.memoryCap, dir: s.tempDir}
		hash := sha256.New()
		n, err := io.Copy(io.MultiWriter(sp, hash), io.LimitReader(part, s.maxUpload+1))
		if err != nil {
			return errBadRequest("reading the upload: %v", err)
		}
		if n > s.maxUpload {
			w.Header().Set("Connection", "close")
			return errTooLarge(s.maxUpload)
		}
		size = n
		digest = hex.EncodeToString(hash.Sum(nil))
	}
	if !found {
		return errValidation("file", "a part named file is required")
	}
	if size == 0 {
		return errValidation("file", "the file is empty")
	}
	data, path, err := sp.finish(true)
	sp = nil
	if err != nil {
		return err
	}
	a := &attachment{QuoteID: quoteID, Type: attachmentType, FileName: fileName, ContentType: contentType,
		Size: size, SHA256: digest, data: data, path: path}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.quotes[quoteID]
	a.ID = s.nextAttachmentID
	s.nextAttachmentID++
	a.CreatedAt = s.stamp()
	q.Attachments = append(q.Attachments, a)
	s.audit(r, q, auditAttachmentAdded, fmt.Sprintf("Attachment %d (%s, %s, %d bytes) added", a.ID, a.Type, a.FileName, a.Size),
		change{Field: "attachments", Before: "", After: strconv.Itoa(int(a.ID))})
	body, _ := marshalJSON(a.doc())
	return writeJSON(w, http.StatusCreated, body)
}

// attachmentOf answers the quote's attachment (404 otherwise). Caller holds s.mu.
func (s *Server) attachmentOf(r *http.Request) (*quote, *attachment, error) {
	attachmentID, err := pathInt32(r, "attachmentId")
	if err != nil {
		return nil, nil, err
	}
	quoteID, err := pathInt64(r, "quoteId")
	if err != nil {
		return nil, nil, err
	}
	q, ok := s.quotes[quoteID]
	if !ok {
		return nil, nil, errNotFound("quote %d not found", quoteID)
	}
	if err := s.checkQuote(r, q); err != nil {
		return nil, nil, err
	}
	for _, a := range q.Attachments {
		if a.ID == attachmentID {
			return q, a, nil
		}
	}
	return nil, nil, errNotFound("attachment %d not found on quote %d", attachmentID, quoteID)
}

// DELETE /v2/attachment/{attachmentId}/quote/{quoteId}: 204 (A6).
func (s *Server) deleteAttachment(w http.ResponseWriter, r *http.Request) error {
	bodyErr := requireNoBody(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	q, a, err := s.attachmentOf(r)
	if err != nil {
		return err
	}
	if bodyErr != nil {
		return bodyErr
	}
	q.Attachments = slices.DeleteFunc(q.Attachments, func(x *attachment) bool { return x == a })
	a.discard()
	s.audit(r, q, auditAttachmentDeleted, fmt.Sprintf("Attachment %d (%s, %s) deleted", a.ID, a.Type, a.FileName),
		change{Field: "attachments", Before: strconv.Itoa(int(a.ID)), After: ""})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// GET /v2/attachment/{attachmentId}/quote/{quoteId}: the stored bytes, streamed (A6).
func (s *Server) downloadAttachment(w http.ResponseWriter, r *http.Request) error {
	bodyErr := requireNoBody(r)
	s.mu.Lock()
	_, a, err := s.attachmentOf(r)
	var (
		rc  io.ReadCloser
		doc attachmentDoc
	)
	if err == nil && bodyErr == nil {
		doc = a.doc()
		// Opened under the lock so a concurrent delete cannot remove the file first; an open file stays
		// readable after its name is removed.
		rc, err = a.open()
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if bodyErr != nil {
		return bodyErr
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Type", doc.ContentType)
	h.Set("Content-Length", strconv.FormatInt(doc.Size, 10))
	h.Set("Content-Disposition", contentDisposition(doc.FileName))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err = io.Copy(w, rc)
	return err
}

// contentDisposition names the file the way docs/v2-assumptions.md A6 shows it, `attachment; filename="..."`,
// with quotes and backslashes escaped; a name that is not printable ASCII also gets the RFC 5987 form
// (a filename* parameter, UTF-8 percent-encoded) and an ASCII fallback with underscores.
func contentDisposition(fileName string) string {
	var fallback strings.Builder
	ascii := true
	for _, r := range fileName {
		switch {
		case r == '"' || r == '\\':
			fallback.WriteByte('\\')
			fallback.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			ascii = false
			fallback.WriteByte('_')
		default:
			fallback.WriteRune(r)
		}
	}
	v := `attachment; filename="` + fallback.String() + `"`
	if !ascii {
		v += "; filename*=UTF-8''" + rfc5987Escape(fileName)
	}
	return v
}

// rfc5987Escape percent-encodes everything but attr-char (RFC 5987 section 3.2.1).
func rfc5987Escape(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}
