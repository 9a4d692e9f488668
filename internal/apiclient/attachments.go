package apiclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"unicode/utf8"
)

// Attachment types the service accepts (docs/v2-assumptions.md A6). The spec
// has no call that lists them.
const (
	AttachmentTypeContractAnnex  = "CONTRACT_ANNEX"
	AttachmentTypeIDDocument     = "ID_DOCUMENT"
	AttachmentTypePrivacyConsent = "PRIVACY_CONSENT"
	AttachmentTypeProofOfAddress = "PROOF_OF_ADDRESS"
	AttachmentTypeOther          = "OTHER"
	// AttachmentTypeQuotePDF is the offer the portal makes (internal/offer), the spec's QuotePdf.
	// It is not offered in the upload form: people upload files, the portal makes offers.
	AttachmentTypeQuotePDF = "QUOTE_PDF"
)

const (
	attachmentFormFieldName      = "file"
	defaultAttachmentContentType = "application/octet-stream"
	maxAttachmentFileNameBytes   = 255
	expectContinueThresholdBytes = 1 << 20
)

// AttachmentTypes returns the attachment types, in display order.
func AttachmentTypes() []string {
	return []string{AttachmentTypeContractAnnex, AttachmentTypeIDDocument, AttachmentTypePrivacyConsent,
		AttachmentTypeProofOfAddress, AttachmentTypeOther}
}

// AttachmentsService holds the attachment calls of spec section 4.2.
type AttachmentsService service

// Upload stores a file for a quote as multipart/form-data with one part named
// "file" (A6). The file is streamed from r, never buffered: with size >= 0
// the request has an exact Content-Length (size plus the multipart framing)
// and r must yield exactly size bytes; with size -1 it is sent chunked.
// contentType "" is sent as application/octet-stream. Upload has stopped
// reading r when it returns.
func (s *AttachmentsService) Upload(ctx context.Context, quoteID int64, attachmentType, fileName, contentType string, size int64, r io.Reader) (*Attachment, error) {
	fail := func(format string, args ...any) (*Attachment, error) {
		return nil, fmt.Errorf("apiclient: %s: %w: "+format, append([]any{EndpointAttachmentUpload, ErrInvalidParameter}, args...)...)
	}
	if r == nil {
		return fail("no file reader")
	}
	if size < -1 {
		return fail("size %d (want >= 0, or -1 when unknown)", size)
	}
	if fileName == "" || len(fileName) > maxAttachmentFileNameBytes || !utf8.ValidString(fileName) {
		return fail("file name must be 1 to %d bytes of UTF-8", maxAttachmentFileNameBytes)
	}
	for _, c := range fileName {
		if c < 0x20 || c == 0x7f {
			return fail("file name has control characters")
		}
	}
	if contentType == "" {
		contentType = defaultAttachmentContentType
	}
	if _, _, err := mime.ParseMediaType(contentType); err != nil || !validHeaderValue(contentType) {
		return fail("content type %.64q is not a media type", contentType)
	}

	partHeader := textproto.MIMEHeader{}
	partHeader.Set("Content-Disposition", multipart.FileContentDisposition(attachmentFormFieldName, fileName))
	partHeader.Set("Content-Type", contentType)
	boundary := multipart.NewWriter(io.Discard).Boundary()
	framing, err := multipartFraming(boundary, partHeader)
	if err != nil {
		return nil, fmt.Errorf("apiclient: %s: %w", EndpointAttachmentUpload, err)
	}
	contentLength := int64(-1)
	if size >= 0 {
		contentLength = framing + size
	}

	pr, pw := io.Pipe()
	cl := &call{
		endpoint:      EndpointAttachmentUpload,
		params:        []param{id64("quoteId", quoteID), segment("attachmentType", attachmentType)},
		body:          pr,
		contentType:   "multipart/form-data; boundary=" + boundary,
		contentLength: contentLength,
	}
	req, err := s.client.newRequest(ctx, cl)
	if err != nil {
		return nil, err
	}
	if size < 0 || size > expectContinueThresholdBytes {
		// Lets the service refuse (401, 404, 413) before a large file is sent.
		req.Header.Set("Expect", "100-continue")
	}
	// The writer runs while the transport reads. When the call ends, closing
	// pr stops it if the service answered before reading everything, and
	// waiting for it means r is no longer read once Upload returns (the
	// caller may close it).
	done := make(chan struct{})
	go func() {
		defer close(done)
		writeMultipart(pw, boundary, partHeader, size, r)
	}()
	defer func() {
		pr.Close()
		<-done
	}()

	resp, err := s.client.send(req, cl.endpoint)
	if err != nil {
		return nil, err
	}
	defer closeBody(resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newAPIError(cl.endpoint, req, resp)
	}
	out := new(Attachment)
	if err := s.client.decodeJSON(resp.Body, resp.ContentLength, out, '{'); err != nil {
		return nil, fmt.Errorf("apiclient: %s %s (%s): %w", req.Method, req.URL.EscapedPath(), cl.endpoint, err)
	}
	return out, nil
}

// multipartFraming returns the bytes a multipart body adds around one part
// with the given header: what Content-Length adds to the file's size.
func multipartFraming(boundary string, header textproto.MIMEHeader) (int64, error) {
	var cw countingWriter
	mw := multipart.NewWriter(&cw)
	if err := mw.SetBoundary(boundary); err != nil {
		return 0, err
	}
	if _, err := mw.CreatePart(header); err != nil {
		return 0, err
	}
	if err := mw.Close(); err != nil {
		return 0, err
	}
	return cw.n, nil
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// writeMultipart writes the multipart body into pw, streaming the file from
// r, and closes pw with the first error (nil: the body is complete).
func writeMultipart(pw *io.PipeWriter, boundary string, header textproto.MIMEHeader, size int64, r io.Reader) {
	mw := multipart.NewWriter(pw)
	err := mw.SetBoundary(boundary)
	var part io.Writer
	if err == nil {
		part, err = mw.CreatePart(header)
	}
	if err == nil {
		err = copyFile(part, r, size)
	}
	if err == nil {
		err = mw.Close()
	}
	pw.CloseWithError(err)
}

// uploadChunkBytes is how much of the file copyFile gathers before handing it
// to the transport. A file read from a browser's multipart upload arrives in
// pieces of at most 4 KiB (mime/multipart's read buffer); passed on one by one,
// each became a chunk and a flush of its own, i.e. system calls per 4 KiB
// (docs/performance.md).
const uploadChunkBytes = 128 << 10

// copyFile copies the file, holding it to its announced size: a short or
// long file would make the Content-Length a lie. Reads are gathered into
// uploadChunkBytes writes.
func copyFile(dst io.Writer, r io.Reader, size int64) error {
	bw := bufio.NewWriterSize(dst, uploadChunkBytes)
	if size < 0 {
		if _, err := io.Copy(bw, r); err != nil {
			return err
		}
		return bw.Flush()
	}
	n, err := io.Copy(bw, io.LimitReader(r, size))
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if n < size {
		return fmt.Errorf("apiclient: upload: file ended after %d of %d bytes", n, size)
	}
	var probe [1]byte
	if m, _ := io.ReadFull(r, probe[:]); m > 0 {
		return fmt.Errorf("apiclient: upload: file is longer than %d bytes", size)
	}
	return nil
}

// Delete deletes an attachment of a quote.
func (s *AttachmentsService) Delete(ctx context.Context, attachmentID int32, quoteID int64) error {
	_, err := s.client.doJSON(ctx, &call{
		endpoint: EndpointAttachmentDelete,
		params:   []param{id32("attachmentid", attachmentID), id64("quoteId", quoteID)},
	}, nil, 0)
	return err
}

// Download streams an attachment. The caller must close the result.
func (s *AttachmentsService) Download(ctx context.Context, attachmentID int32, quoteID int64) (*Download, error) {
	_, resp, err := s.client.doStream(ctx, &call{
		endpoint: EndpointAttachmentDownload,
		params:   []param{id32("attachmentid", attachmentID), id64("quoteId", quoteID)},
		accept:   "*/*",
	})
	if err != nil {
		return nil, err
	}
	return newDownload(resp), nil
}
