package store

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

// TestRedisLoggerWritesThroughThePortalsLogger: go-redis's messages become JSON lines of the
// portal's log (component=redis), not plain text in the middle of it.
func TestRedisLoggerWritesThroughThePortalsLogger(t *testing.T) {
	var out bytes.Buffer
	RedisLogger(slog.New(slog.NewJSONHandler(&out, nil))).Printf(context.Background(), "redis: %s:%d: connection pool: %s\n", "conn.go", 42, "dial tcp: refused")
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q (%v)", out.String(), err)
	}
	if line["component"] != "redis" || line["level"] != "WARN" || line["msg"] != "redis: conn.go:42: connection pool: dial tcp: refused" {
		t.Fatalf("logged %v", line)
	}
}
