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
}
