package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A session store that cannot be used at start-up stops the portal with one error naming the
// setting to fix, before it listens for users.
func TestUnusableSessionStoreRefusesToStart(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"data directory below a file", []string{"-data-dir", filepath.Join(file, "data")}, "PORTAL_DATA_DIR: "},
		{"cookie store, data directory below a file", []string{"-data-dir", filepath.Join(file, "data"), "-session-store", "cookie"}, "PORTAL_DATA_DIR: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-demo", "-addr", "127.0.0.1:0"}, tc.args...)
			err := run(context.Background(), args, noEnv, io.Discard, io.Discard)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Count(err.Error(), "PORTAL_") != 1 {
				t.Fatalf("err = %v, want one error starting %q", err, tc.want)
			}
		})
	}
}

// Demo mode keeps its session key in the data directory, so a second start reads sessions sealed
// by the first.
func TestDemoSessionKeyIsKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := demoSessionKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	second, err := demoSessionKey(dir)
	if err != nil || second != first {
		t.Fatalf("second start: %q, %v; want the first key", second, err)
	}
	info, err := os.Stat(filepath.Join(demoDir(dir), "session.key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", info, err)
	}
}

// `make run`, sign in, Ctrl-C, `make run` again: the browser is still signed in. The session lives
// in the data directory (file store), sealed with demo mode's kept session key, and its access
// token still verifies because the embedded provider's signing key is kept too.
func TestDemoSignInSurvivesRestart(t *testing.T) {
	t.Parallel()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	_ = listener.Close()
	dataDir := t.TempDir()
	args := []string{"-demo", "-addr", addr, "-demo-customers", "3", "-data-dir", dataDir}

	first := startPortal(t, args, noEnv)
	client := browser(t)
	signIn(t, client, first.base, "sales", "sales-demo")
	if err := first.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	second := startPortal(t, args, noEnv)
	resp, body := get(t, client, second.base+"/customers")
	if resp.Request.URL.Path != "/customers" || !strings.Contains(body, `<bdi data-testid="user-name">Sam Sales</bdi>`) {
		t.Fatalf("after a restart: %s %d, want the signed-in customer list", resp.Request.URL, resp.StatusCode)
	}
}
