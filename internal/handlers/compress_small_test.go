package handlers

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"
)

// A rendered answer under minCompressBytes goes out as is; a larger one is gzipped whole.
func TestCompressionSkipsSmallRenderedBodies(t *testing.T) {
	t.Parallel()
	text := func(s string) templ.Component {
		return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
			_, err := io.WriteString(w, s)
			return err
		})
	}
	small := "<p>" + strings.Repeat("s", minCompressBytes-100) + "</p>"
	big := strings.Repeat("<p>compress me</p>", 200)
	p := newPortal(t, portalOptions{extraRoute: func(h *Handler, r *gin.Engine) {
		r.GET("/test/small", func(c *gin.Context) { h.render(c, http.StatusOK, text(small)) })
		r.GET("/test/big", func(c *gin.Context) { h.render(c, http.StatusOK, text(big)) })
		// A streamed body: several writes and flushes, no announced size.
		r.GET("/test/stream", func(c *gin.Context) {
			c.Header("Content-Type", "text/html; charset=utf-8")
			for range 4 {
				_, _ = c.Writer.WriteString(big)
				c.Writer.Flush()
			}
		})
		// A handler that writes again after render: refused, never appended raw to the gzip body.
		r.GET("/test/twice", func(c *gin.Context) {
			h.render(c, http.StatusOK, text(big))
			if _, err := c.Writer.WriteString("tail"); err == nil {
				t.Error("a write after the whole compressed body was accepted")
			}
		})
	}})
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	gz := map[string]string{"Accept-Encoding": "gzip"}

	if resp := p.get(t, client, "/test/small", gz); resp.Header.Get("Content-Encoding") != "" || resp.body != small {
		t.Errorf("small page: Content-Encoding %q, body %d bytes; want it as is", resp.Header.Get("Content-Encoding"), len(resp.body))
	}
	resp := p.get(t, client, "/test/big", gz)
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("big page: Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(strings.NewReader(resp.body))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); string(plain) != big {
		t.Errorf("big page does not decompress to itself (%d bytes)", len(plain))
	}
	// Compressed whole: sent with its length, not chunked.
	if resp.ContentLength != int64(len(resp.body)) || len(resp.TransferEncoding) != 0 {
		t.Errorf("big page: Content-Length %d for %d bytes, Transfer-Encoding %v; want the exact length, not chunked",
			resp.ContentLength, len(resp.body), resp.TransferEncoding)
	}

	stream := p.get(t, client, "/test/stream", gz)
	if stream.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("streamed page: Content-Encoding %q, want gzip", stream.Header.Get("Content-Encoding"))
	}
	zr, err = gzip.NewReader(strings.NewReader(stream.body))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); string(plain) != strings.Repeat(big, 4) {
		t.Errorf("streamed page does not decompress to its four writes (%d bytes)", len(plain))
	}

	twice := p.get(t, client, "/test/twice", gz)
	zr, err = gzip.NewReader(strings.NewReader(twice.body))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(zr); err != nil || string(plain) != big {
		t.Errorf("page with a late write: %d bytes, %v; want exactly the rendered page", len(plain), err)
	}
}
