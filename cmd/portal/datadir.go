package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// prepareDataDir creates PORTAL_DATA_DIR (0700) when missing and checks that a file can be written
// there, so a mistake is one error at start-up rather than failed sign-ins later.
func prepareDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("PORTAL_DATA_DIR: %w", err)
	}
	probe, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return fmt.Errorf("PORTAL_DATA_DIR: %s is not writable: %w", dir, err)
	}
	name := probe.Name()
	_ = probe.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("PORTAL_DATA_DIR: %w", err)
	}
	return nil
}

// demoDir is where demo mode keeps what a sign-in needs to survive a restart: the session key and
// the embedded provider's signing key.
func demoDir(dataDir string) string { return filepath.Join(dataDir, "demo") }

// demoSessionKey returns demo mode's session key from <data dir>/demo/session.key, creating it (32
// random bytes, base64, 0600) the first time. Keeping it is what lets sessions sealed before a
// restart be read after it (docs/operations.md, "Demo mode").
func demoSessionKey(dataDir string) (string, error) {
	dir := demoDir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("PORTAL_DATA_DIR: %w", err)
	}
	path := filepath.Join(dir, "session.key")
	data, err := os.ReadFile(path)
	if err == nil {
		key := strings.TrimSpace(string(data))
		if raw, err := base64.StdEncoding.DecodeString(key); err == nil && len(raw) >= 32 {
			return key, nil
		}
		return "", fmt.Errorf("PORTAL_DATA_DIR: %s is not a base64 key of 32 bytes; delete it to make a new one", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("PORTAL_DATA_DIR: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("PORTAL_DATA_DIR: demo session key: %w", err)
	}
	key := base64.StdEncoding.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("PORTAL_DATA_DIR: %w", err)
	}
	return key, nil
}
