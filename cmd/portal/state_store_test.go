package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/store"
	"github.com/cpqportal/portal/internal/store/redistest"
)

// TestLegacyStateStore: the one-time import reads the previous version's Redis whenever
// PORTAL_REDIS_URL is set, else its bbolt file when there is one; a fresh data directory has
// nothing to import and gets no bbolt file.
func TestLegacyStateStore(t *testing.T) {
	addr := redistest.Start(t)
	st, ok, err := legacyStateStore(config.Config{RedisURL: "redis://" + addr + "/0", DataDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil || !ok {
		t.Fatalf("with PORTAL_REDIS_URL: %v, %v", ok, err)
	}
	if _, isRedis := st.(*store.Redis); !isRedis {
		t.Errorf("with PORTAL_REDIS_URL: %T, want redis", st)
	}
	_ = st.Close()

	fresh := t.TempDir()
	if _, ok, err := legacyStateStore(config.Config{DataDir: fresh}, slog.New(slog.DiscardHandler)); ok || err != nil {
		t.Errorf("a fresh data directory: %v, %v; want nothing to import", ok, err)
	}
	if _, err := os.Stat(filepath.Join(fresh, "state", "portal.db")); !os.IsNotExist(err) {
		t.Errorf("a fresh data directory got a bbolt file: %v", err)
	}

	upgraded := t.TempDir()
	old, err := store.OpenBolt(filepath.Join(upgraded, "state", "portal.db"))
	if err != nil {
		t.Fatal(err)
	}
	_ = old.Close()
	st, ok, err = legacyStateStore(config.Config{DataDir: upgraded}, slog.New(slog.DiscardHandler))
	if err != nil || !ok {
		t.Fatalf("a data directory with the previous version's file: %v, %v", ok, err)
	}
	if _, isBolt := st.(*store.Bolt); !isBolt {
		t.Errorf("got %T, want the bbolt file", st)
	}
	_ = st.Close()
}
