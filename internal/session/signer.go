package session

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
)

// Signer signs a short value a page carries in a form, so the server can take it back without
// reading it again (issue 27: the contract number the archive button posts), and refuses one the
// browser changed. The MAC is HMAC-SHA256 keyed per purpose from the session keys (derive), so it
// rotates with them: the first key signs, every configured key verifies. A value is bound to a
// context (e.g. the contract's id), so a value signed for one record is not accepted for another.
type Signer struct {
	keys [][]byte
}

// NewSigner derives a Signer for purpose (e.g. "archive form") from the configured session keys.
func NewSigner(keys []string, purpose string) (*Signer, error) {
	ring, err := parseKeys(keys)
	if err != nil {
		return nil, err
	}
	s := &Signer{}
	for _, secret := range ring.secrets {
		hashKey, _ := derive(secret, "signer "+purpose)
		s.keys = append(s.keys, hashKey)
	}
	return s, nil
}

// Sign returns the MAC of value bound to context, base64url without padding.
func (s *Signer) Sign(value, context string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac(s.keys[0], value, context))
}

// Verify reports whether mac is Sign's answer for value and context under any configured key, in
// constant time.
func (s *Signer) Verify(value, context, mac string) bool {
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	for _, key := range s.keys {
		if hmac.Equal(got, s.mac(key, value, context)) {
			return true
		}
	}
	return false
}

// mac writes both parts with their lengths, so no split of one string into context and value
// signs the same as another.
func (s *Signer) mac(key []byte, value, context string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strconv.Itoa(len(context)) + ":" + context + strconv.Itoa(len(value)) + ":" + value))
	return m.Sum(nil)
}
