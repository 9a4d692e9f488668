package session

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// sealedPrefix marks a value sealed by a Sealer (version 1: AES-256-GCM, base64url of nonce and
// ciphertext).
const sealedPrefix = "sealed1."

// ErrUnsealable: the value was sealed with a key no longer configured, or was changed.
var ErrUnsealable = errors.New("session: sealed value cannot be opened with the configured keys")

// Sealer encrypts secrets that the portal keeps outside a session (a batch job's access token)
// with keys derived from the session keys (PORTAL_SESSION_KEYS) for that one purpose: the first key
// seals, every configured key opens, so rotating the session keys rotates these too (a value sealed
// with a key that was removed can no longer be opened).
type Sealer struct {
	aeads []cipher.AEAD
}

// NewSealer derives a Sealer for purpose (e.g. "batch token") from the configured session keys.
func NewSealer(keys []string, purpose string) (*Sealer, error) {
	ring, err := parseKeys(keys)
	if err != nil {
		return nil, err
	}
	s := &Sealer{}
	for _, secret := range ring.secrets {
		_, blockKey := derive(secret, "sealer "+purpose)
		block, err := aes.NewCipher(blockKey)
		if err != nil {
			return nil, fmt.Errorf("session: sealer: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("session: sealer: %w", err)
		}
		s.aeads = append(s.aeads, aead)
	}
	return s, nil
}

// Seal encrypts plain, bound to context (e.g. the job's id: a sealed value moved to another
// record does not open there).
func (s *Sealer) Seal(plain, context string) (string, error) {
	aead := s.aeads[0]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("session: seal: %w", err)
	}
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(plain), []byte(context))), nil
}

// Open decrypts a value of Seal with the same context, trying every configured key.
func (s *Sealer) Open(sealed, context string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sealed, sealedPrefix))
	if err != nil || !strings.HasPrefix(sealed, sealedPrefix) {
		return "", ErrUnsealable
	}
	for _, aead := range s.aeads {
		if len(raw) < aead.NonceSize() {
			break
		}
		if plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(context)); err == nil {
			return string(plain), nil
		}
	}
	return "", ErrUnsealable
}
