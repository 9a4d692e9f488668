package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/web/templates/components"
)

func TestTriggerEvents(t *testing.T) {
	t.Parallel()
	gin.SetMode(gin.ReleaseMode)
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = httptest.NewRequest(http.MethodPost, "/", nil)
	c.Set(ctxKeyRequestID, "req-1")
	h := &Handler{}

	h.toast(c, components.ToastSuccess, "Müller S.p.A. saved 😀 </script>")
	announce(c, "3 customers found")
	h.toast(c, components.ToastError, "Second toast replaces the first")

	raw := rec.Header().Get("HX-Trigger")
	for _, b := range []byte(raw) {
		if b >= 0x80 {
			t.Fatalf("HX-Trigger has non-ASCII bytes (browsers read headers as Latin-1): %q", raw)
		}
	}
	if strings.Contains(raw, "</script>") {
		t.Errorf("HX-Trigger not HTML-safe: %q", raw)
	}
	var events struct {
		ShowToast struct{ Level, Message, RequestID string } `json:"showToast"`
		Announce  string                                     `json:"announce"`
	}
	if err := json.Unmarshal([]byte(raw), &events); err != nil {
		t.Fatalf("HX-Trigger %q is not JSON: %v", raw, err)
	}
	if events.Announce != "3 customers found" {
		t.Errorf("announce = %q", events.Announce)
	}
	if events.ShowToast.Level != "error" || events.ShowToast.RequestID != "req-1" {
		t.Errorf("showToast = %+v", events.ShowToast)
	}

	rec2 := httptest.NewRecorder()
	c2, _ := gin.CreateTestContext(rec2)
	c2.Request = httptest.NewRequest(http.MethodPost, "/", nil)
	h.toast(c2, components.ToastSuccess, "Müller 😀")
	var e2 struct {
		ShowToast struct{ Message, RequestID string } `json:"showToast"`
	}
	if err := json.Unmarshal([]byte(rec2.Header().Get("HX-Trigger")), &e2); err != nil || e2.ShowToast.Message != "Müller 😀" {
		t.Errorf("non-ASCII message did not survive: %q (%v)", e2.ShowToast.Message, err)
	}
	if e2.ShowToast.RequestID != "" {
		t.Error("success toasts need no request id")
	}
}

func TestIsHTMX(t *testing.T) {
	t.Parallel()
	cases := []struct {
		headers map[string]string
		want    bool
	}{
		{nil, false},
		{map[string]string{"HX-Request": "true"}, true},
		{map[string]string{"HX-Request": "true", "HX-History-Restore-Request": "true"}, false},
		{map[string]string{"HX-Request": "true", "HX-Boosted": "true"}, false},
		{map[string]string{"HX-Request": "false"}, false},
	}
	for _, tc := range cases {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
		for k, v := range tc.headers {
			c.Request.Header.Set(k, v)
		}
		if got := isHTMX(c); got != tc.want {
			t.Errorf("%v: isHTMX = %v", tc.headers, got)
		}
	}
}

func TestLogHandlerAddsRequestIDOnce(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := slog.New(NewLogHandler(slog.NewJSONHandler(&buf, nil)))
	ctx := context.WithValue(context.Background(), requestIDKey{}, "abc")

	logger.InfoContext(ctx, "from another package")
	logger.With("request_id", "abc").InfoContext(ctx, "from the handlers")
	logger.WithGroup("g").InfoContext(ctx, "grouped")
	logger.Info("no request")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 lines, got %q", buf.String())
	}
	for i, want := range []int{1, 1, 1, 0} {
		if got := strings.Count(lines[i], `"request_id":"abc"`); got != want {
			t.Errorf("line %d has request_id %d times, want %d: %s", i, got, want, lines[i])
		}
	}
}
