package apiclient

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
)

// Download is a streamed binary answer (an attachment or a PDF). The caller
// must close Body.
type Download struct {
	Body          io.ReadCloser
	ContentType   string
	ContentLength int64 // -1 when unknown
	// FileName is the base name from Content-Disposition, without any
	// directory part or control characters; "" when absent.
	FileName string
}

// Close closes the body.
func (d *Download) Close() error {
	return d.Body.Close()
}

func newDownload(resp *http.Response) *Download {
	return &Download{
		Body:          resp.Body,
		ContentType:   resp.Header.Get("Content-Type"),
		ContentLength: resp.ContentLength,
		FileName:      fileNameOf(resp.Header.Get("Content-Disposition")),
	}
}

// fileNameOf returns the filename parameter of a Content-Disposition value
// (mime.ParseMediaType also decodes RFC 2231 filename*), reduced to a base
// name: the name is shown to users and offered to browsers again.
func fileNameOf(contentDisposition string) string {
	if contentDisposition == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(contentDisposition)
	if err != nil {
		return ""
	}
	name := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, params["filename"])
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	if name == "." || name == "/" || name == ".." {
		return ""
	}
	return name
}

// isMediaType reports whether a Content-Type value names the media type want.
func isMediaType(contentType, want string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && strings.EqualFold(mt, want)
}

// expectPDF checks that a download is a PDF, closing it when it is not.
func expectPDF(endpoint string, req *http.Request, d *Download) (*Download, error) {
	if isMediaType(d.ContentType, "application/pdf") {
		return d, nil
	}
	closeBody(d.Body)
	return nil, fmt.Errorf("apiclient: %s %s (%s): %w: want application/pdf, got Content-Type %q",
		req.Method, req.URL.EscapedPath(), endpoint, ErrMalformedResponse, d.ContentType)
}
