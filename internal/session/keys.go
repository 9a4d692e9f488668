package session

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gorilla/securecookie"
)

// minSecretBytes is the least entropy accepted for one configured secret.
const minSecretBytes = 32

// maxEncodedLength bounds what a codec encodes or decodes (all chunks of a session together).
const maxEncodedLength = 16 << 10

// keyring holds the decoded secrets; codecs are derived from it per purpose.
type keyring struct {
	secrets [][]byte
}

// parseKeys decodes the configured secrets: hex when the string is only hex digits, else base64 (standard
// or URL alphabet, padded or not). Each must carry at least 32 bytes.
func parseKeys(keys []string) (keyring, error) {
	if len(keys) == 0 {
		return keyring{}, errors.New("session: no cookie keys configured (need at least one secret of 32 bytes or more, base64 or hex)")
	}
	secrets := make([][]byte, 0, len(keys))
	for i, key := range keys {
		secret, err := decodeSecret(strings.TrimSpace(key))
		if err != nil {
			return keyring{}, fmt.Errorf("session: cookie key %d: %w", i+1, err)
		}
		secrets = append(secrets, secret)
	}
	return keyring{secrets: secrets}, nil
}

func decodeSecret(key string) ([]byte, error) {
	var secret []byte
	if isHex(key) {
		secret, _ = hex.DecodeString(key)
	} else {
		var err error
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if secret, err = enc.DecodeString(key); err == nil {
				break
			}
		}
		if err != nil {
			return nil, errors.New("not base64 or hex")
		}
	}
	if len(secret) < minSecretBytes {
		return nil, fmt.Errorf("%d bytes, need at least %d (generate one with: openssl rand -base64 32)", len(secret), minSecretBytes)
	}
	return secret, nil
}

func isHex(s string) bool {
	if s == "" || len(s)%2 != 0 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// derive returns the HMAC key (64 bytes) and the AES-256 key (32 bytes) for one secret and purpose, so one
// configured secret serves every cookie without reusing a key for two jobs.
func derive(secret []byte, purpose string) (hashKey, blockKey []byte) {
	hashKey, err := hkdf.Key(sha256.New, secret, nil, "cpq-portal "+purpose+" hmac", 64)
	if err != nil {
		panic(err) // unreachable: the length is far below HKDF-SHA256's limit
	}
	blockKey, err = hkdf.Key(sha256.New, secret, nil, "cpq-portal "+purpose+" aes", 32)
	if err != nil {
		panic(err)
	}
	return hashKey, blockKey
}

// codecs builds one securecookie codec per secret (the first encodes, all decode) carrying raw bytes.
func (k keyring) codecs(purpose string, maxAge time.Duration) []securecookie.Codec {
	pairs := make([][]byte, 0, 2*len(k.secrets))
	for _, secret := range k.secrets {
		hashKey, blockKey := derive(secret, purpose)
		pairs = append(pairs, hashKey, blockKey)
	}
	codecs := securecookie.CodecsFromPairs(pairs...)
	for _, codec := range codecs {
		sc := codec.(*securecookie.SecureCookie)
		sc.SetSerializer(securecookie.NopEncoder{})
		sc.MaxLength(maxEncodedLength)
		sc.MaxAge(max(1, int(maxAge/time.Second)))
	}
	return codecs
}
