package handlers

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cpqportal/portal/internal/i18n"
)

// What every test portal of this package (newPortal, newSecPortal) shares, made once a test
// binary and read-only once made: the message catalogues and the demo provider's RSA signing key.
// Measured (2026-11-29, go test -race -cpuprofile of the saved-view and work-list tests), loading
// and checking the catalogues (once for the handler, once for the provider's sign-in page) took
// 22% of the package's CPU and generating a 2048-bit key 16%, made again for every portal. Each
// portal still has its own provider (its issuer, its users, its tokens); i18n's own tests load
// the catalogues, demoidp's generate keys.

var sharedBundle = sync.OnceValues(func() (*i18n.Bundle, error) { return i18n.Load() })

// testBundle is the embedded catalogues (a Bundle is safe for concurrent use).
func testBundle(tb testing.TB) *i18n.Bundle {
	tb.Helper()
	bundle, err := sharedBundle()
	if err != nil {
		tb.Fatal(err)
	}
	return bundle
}

var sharedIDPKey = sync.OnceValues(func() ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), nil
})

// testIDPKeyFile is a demoidp KeyFile in tb's temporary directory holding the shared signing key.
func testIDPKeyFile(tb testing.TB) string {
	tb.Helper()
	data, err := sharedIDPKey()
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "idp-key.pem")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}
