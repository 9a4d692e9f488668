package handlers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/filetype"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
)

// Upload form fields. The attachment type must come before the file: the file part is streamed
// to the v2 API as it arrives, and the upload URL needs the type
// (/v2/attachment/file/quote/{quoteId}/attachmentType/{attachmentType}, docs/v2-assumptions.md A6).
const (
	uploadTypeField = "attachmentType"
	uploadFileField = "file"
	// maxSmallFieldBytes bounds the form fields that are not the file.
	maxSmallFieldBytes = 1 << 10
	// uploadPeekBytes of the file are read before the v2 call (the only buffering of an upload).
	uploadPeekBytes = 512 << 10
)

// errUploadOverLimit stops the stream to the v2 API when the file passes PORTAL_UPLOAD_LIMIT.
var errUploadOverLimit = errors.New("upload over the portal's limit")

func errUploadTooLarge(limit int64) error {
	return &documentError{status: http.StatusRequestEntityTooLarge, title: i18n.M("attachments.error.too_large.title"),
		message: i18n.M("attachments.error.too_large.message", formatBytes(limit))}
}

// errUploadNotText stops the stream to the v2 API when a text file turns out not to be text.
var errUploadNotText = errors.New("upload: a text file that is not UTF-8 text")

// errUploadUnsupported is the 415 of a file that is not what its name says (or of a kind the
// portal does not accept: docs/documents.md), naming the file and the kind.
func errUploadUnsupported(fileName string, refusal *filetype.Refusal) error {
	message := i18n.M("attachments.error.unsupported_kind", fileName, acceptedKindsText)
	switch refusal.Reason {
	case filetype.ContentMismatch:
		message = i18n.M("attachments.error.content_mismatch", fileName, refusal.Kind.Name)
	case filetype.DeclaredMismatch:
		message = i18n.M("attachments.error.declared_mismatch", fileName, refusal.Declared, refusal.Kind.Name)
	case filetype.NotText:
		message = i18n.M("attachments.error.not_text", fileName)
	}
	return &documentError{status: http.StatusUnsupportedMediaType, title: i18n.M("attachments.error.unsupported.title"),
		message: message, cause: refusal}
}

// acceptedKindsText lists the accepted kinds in messages: the same names in every language.
const acceptedKindsText = "PDF, PNG, JPEG, GIF, WebP, Word, Excel, PowerPoint, OpenDocument, TXT, CSV"

// errUploadRefused is a 422 whose message is the catalogue's key with its arguments.
func errUploadRefused(key string, args ...any) error {
	return &documentError{status: http.StatusUnprocessableEntity, title: i18n.M("attachments.error.refused.title"),
		message: i18n.M(key, args...)}
}

// errUploadMalformed is a 400 whose message is the catalogue's key with its arguments.
func errUploadMalformed(key string, args ...any) error {
	return &documentError{status: http.StatusBadRequest, title: i18n.M("attachments.error.unreadable.title"),
		message: i18n.M(key, args...)}
}

// uploadReader counts the file's bytes on their way to the v2 API and fails the stream once it
// passes the limit, so the v2 call is aborted mid-body and the service stores nothing. It also
// remembers a failure of the browser's side (a broken upload), to tell it from a v2 failure.
type uploadReader struct {
	r         io.Reader
	limit     int64
	n         int64
	exceeded  bool
	sourceErr error
	// text checks a text file's every byte on its way (nil for other kinds); notText is set when
	// it fails, and the stream is stopped like one over the limit.
	text    *filetype.TextStream
	notText bool
	// onEOF runs when the whole file has been read (the v2 API's time to answer starts then).
	onEOF func()
}

func (u *uploadReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	u.n += int64(n)
	if u.n > u.limit {
		u.exceeded = true
		return 0, errUploadOverLimit
	}
	if u.text != nil {
		textErr := u.text.Write(p[:n])
		if textErr == nil && errors.Is(err, io.EOF) {
			textErr = u.text.Close()
		}
		if textErr != nil {
			u.notText = true
			return 0, errUploadNotText
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		if u.onEOF != nil {
			u.onEOF()
			u.onEOF = nil
		}
	case err != nil:
		u.sourceErr = err
	}
	return n, err
}

// uploadAttachment answers POST /quotes/:cpqId/:customerId/:quoteId/attachments, a
// multipart/form-data body with attachmentType then file. Nothing is buffered beyond the first
// 512 KiB of the file: the body is read with MultipartReader (never ParseMultipartForm, which
// spools to memory and disk) and the file part is piped into the v2 upload as it arrives (a file
// that fits in those first 512 KiB with its exact length, a larger one chunked, of unknown size).
// A body whose Content-Length is over PORTAL_UPLOAD_LIMIT is refused before anything is read or
// sent; without Content-Length the limit is enforced while streaming and the v2 call is aborted
// (the service stores nothing from a broken body).
func (h *Handler) uploadAttachment(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	limit := h.cfg.UploadLimit
	if c.Request.ContentLength > limit {
		c.Header("Connection", "close") // the body is not read: the connection cannot be reused
		h.failDocument(c, errUploadTooLarge(limit))
		return
	}
	mr, err := c.Request.MultipartReader()
	if err != nil {
		h.failDocument(c, errUploadMalformed("attachments.error.not_multipart"))
		return
	}
	attachmentType, part, err := readUploadFields(mr)
	if err != nil {
		h.failUpload(c, err, limit)
		return
	}
	defer part.Close()

	rawName := part.FileName()
	if rawName == "" {
		h.failUpload(c, errUploadRefused("attachments.error.no_name"), limit)
		return
	}
	fileName := safeFileName(rawName, "attachment")
	contentType := part.Header.Get("Content-Type")
	if _, _, err := mime.ParseMediaType(contentType); err != nil || strings.ContainsAny(contentType, "\r\n") {
		contentType = "application/octet-stream"
	}

	// The start of the file is read before the v2 call: a small file's size is then known (sent with
	// its exact length), and an empty or over-limit small file is refused with nothing sent upstream.
	// Larger files are streamed with their size unknown.
	file := bufio.NewReaderSize(part, uploadPeekBytes)
	size := int64(-1)
	head, err := file.Peek(uploadPeekBytes)
	switch {
	case errors.Is(err, io.EOF):
		size = int64(len(head))
	case err != nil:
		h.failUpload(c, err, limit)
		return
	}
	switch {
	case size == 0:
		h.failUpload(c, errUploadRefused("attachments.error.empty", fileName), limit)
		return
	case size > limit:
		h.failUpload(c, errUploadTooLarge(limit), limit)
		return
	}
	// The file must be what its name says: the declared type one of that kind's and the first
	// bytes that kind's (a text file's every byte, checked below while it streams). What goes
	// upstream is the kind's own media type.
	kind, err := filetype.Check(fileName, contentType, head, size >= 0)
	if refusal, ok := errors.AsType[*filetype.Refusal](err); ok {
		h.log(c).Info("upload refused: not what its name says", "file_name", fileName, "declared", contentType, "err", err)
		h.failUpload(c, errUploadUnsupported(fileName, refusal), limit)
		return
	}
	contentType = kind.MediaType

	// The v2 API has PORTAL_V2_TIMEOUT to answer once it has the whole file; sending the file itself
	// may take as long as the browser needs.
	answer := h.pendingStartLimit(h.apiContext(c))
	defer answer.release()
	body := &uploadReader{r: file, limit: limit, onEOF: answer.arm}
	if size < 0 {
		body.text = kind.Stream()
	}
	uploaded := h.trackUpload()
	attachment, err := h.api.Attachments.Upload(answer.ctx, ref.QuoteID, attachmentType, fileName, contentType, size, body)
	uploaded()
	h.countStreamed(streamUpload, body.n)
	err = answer.started(err)
	switch {
	case body.exceeded:
		h.failUpload(c, errUploadTooLarge(limit), limit)
		return
	case body.notText:
		h.failUpload(c, errUploadUnsupported(fileName, &filetype.Refusal{Reason: filetype.NotText, Kind: kind}), limit)
		return
	case body.sourceErr != nil:
		h.failUpload(c, body.sourceErr, limit)
		return
	case err != nil:
		h.fail(c, fmt.Errorf("documents: upload to quote %d: %w", ref.QuoteID, err))
		return
	}
	h.log(c).Info("attachment uploaded", slog.Int64("quote_id", ref.QuoteID), slog.Int("attachment_id", int(attachment.AttachmentID)),
		slog.Int64("bytes", body.n))

	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, ref.URL()+"/documents")
		return
	}
	quote, err := h.loadQuote(h.apiContext(c), ref)
	if err != nil {
		h.fail(c, err)
		return
	}
	message := t(c, "attachments.uploaded", fileName, formatBytes(body.n))
	h.toast(c, components.ToastSuccess, message)
	announce(c, message)
	h.render(c, http.StatusOK, contracts.AttachmentList(h.documentsVM(c.Request.Context(), tr(c), ref, quote)))
}

// readUploadFields reads the form up to the file part: the attachment type (checked against the
// list) must come first; small unknown fields are skipped. It returns the file part unread.
func readUploadFields(mr *multipart.Reader) (string, *multipart.Part, error) {
	attachmentType := ""
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return "", nil, errUploadRefused("attachments.error.no_file")
		}
		if err != nil {
			return "", nil, err
		}
		switch part.FormName() {
		case uploadTypeField:
			value, err := io.ReadAll(io.LimitReader(part, maxSmallFieldBytes+1))
			_ = part.Close()
			if err != nil {
				return "", nil, err
			}
			attachmentType = strings.TrimSpace(string(value))
			if !slices.Contains(apiclient.AttachmentTypes(), attachmentType) {
				return "", nil, errUploadRefused("attachments.error.type")
			}
		case uploadFileField:
			if attachmentType == "" {
				_ = part.Close()
				return "", nil, errUploadMalformed("attachments.error.type_after_file")
			}
			return attachmentType, part, nil
		default:
			n, err := io.Copy(io.Discard, io.LimitReader(part, maxSmallFieldBytes+1))
			_ = part.Close()
			if err != nil {
				return "", nil, err
			}
			if n > maxSmallFieldBytes {
				return "", nil, errUploadMalformed("attachments.error.unexpected_field", part.FormName())
			}
		}
	}
}

// failUpload answers an upload error: the body limit (http.MaxBytesError) as the clear 413 of the
// upload limit, a broken browser upload as 400, everything else through failDocument.
func (h *Handler) failUpload(c *gin.Context, err error, limit int64) {
	var tooLarge *http.MaxBytesError
	var de *documentError
	switch {
	case errors.As(err, &tooLarge):
		c.Header("Connection", "close")
		err = errUploadTooLarge(limit)
	case errors.As(err, &de):
		if de.status == http.StatusRequestEntityTooLarge || de.status == http.StatusUnsupportedMediaType { // the rest of the body is not read
			c.Header("Connection", "close")
		}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		err = errUploadMalformed("attachments.error.interrupted")
	default:
		err = &documentError{status: http.StatusBadRequest, title: i18n.M("attachments.error.unreadable.title"),
			message: i18n.M("attachments.error.broken"), cause: err}
	}
	h.failDocument(c, err)
}
