package session

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The compact binary form of a Session. Enterprise identity providers issue large tokens (4 KB access
// tokens are common), so the encoding avoids every avoidable byte before compression and encryption:
// JWT segments (and opaque base64url tokens) are stored as their decoded bytes, numbers as varints,
// times as Unix seconds.
//
//	version(1) subject name email access refresh id expiry created lastSeen cpqCount {cpqID customerID quoteID sessionID usedAt}
//	  then, from version 2: sessionID providerSID userAgent clientIP
//	  then, from version 3: roleCount {role}
//
// Strings are uvarint length + bytes; times are varint Unix seconds (0 = zero time).

const (
	formatVersion = 3
	// formatVersion1 had no session id, provider session id, user agent or client IP; formatVersion2
	// had no roles. Both are still read.
	formatVersion1 = 1
	formatVersion2 = 2
	// maxRoles bounds the roles stored (the sign-in keeps at most 32).
	maxRoles = 32
	// maxUserAgent bounds the stored User-Agent (sessions page), so a hostile header cannot bloat sessions.
	maxUserAgent = 256

	// Token kinds.
	tokenEmpty     = 0
	tokenRaw       = 1 // stored as is
	tokenSegmented = 2 // dot-separated base64url segments (JWT, JWE, opaque base64url), stored decoded

	maxSegments     = 8
	maxDecodedBytes = 64 << 10 // decompression bound: far above any real session
)

var errMalformed = errors.New("session: malformed session data")

// marshal encodes s compactly.
func marshal(s *Session, withIDToken bool) []byte {
	buf := make([]byte, 0, 256+len(s.AccessToken)+len(s.RefreshToken)+len(s.IDToken))
	buf = append(buf, formatVersion)
	buf = appendString(buf, s.Subject)
	buf = appendString(buf, s.Name)
	buf = appendString(buf, s.Email)
	buf = appendToken(buf, s.AccessToken)
	buf = appendToken(buf, s.RefreshToken)
	if withIDToken {
		buf = appendToken(buf, s.IDToken)
	} else {
		buf = appendToken(buf, "")
	}
	buf = appendTime(buf, s.TokenExpiry)
	buf = appendTime(buf, s.CreatedAt)
	buf = appendTime(buf, s.LastSeen)
	entries := s.CPQ[:min(len(s.CPQ), MaxCPQEntries)]
	buf = binary.AppendUvarint(buf, uint64(len(entries)))
	for _, entry := range entries {
		buf = binary.AppendVarint(buf, int64(entry.Key.CPQID))
		buf = binary.AppendVarint(buf, int64(entry.Key.CustomerID))
		buf = binary.AppendVarint(buf, entry.Key.QuoteID)
		buf = appendString(buf, entry.SessionID)
		buf = appendTime(buf, entry.UsedAt)
	}
	buf = appendString(buf, s.ID)
	buf = appendString(buf, s.ProviderSID)
	buf = appendString(buf, truncateUTF8(s.UserAgent, maxUserAgent))
	buf = appendString(buf, s.ClientIP)
	roles := s.Roles[:min(len(s.Roles), maxRoles)]
	buf = binary.AppendUvarint(buf, uint64(len(roles)))
	for _, role := range roles {
		buf = appendString(buf, role)
	}
	return buf
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// unmarshal decodes what marshal produced; any inconsistency is errMalformed.
func unmarshal(data []byte) (*Session, error) {
	d := decoder{data: data}
	version := d.byte()
	if version != formatVersion && version != formatVersion2 && version != formatVersion1 {
		return nil, errMalformed
	}
	s := &Session{
		Subject:      d.string(),
		Name:         d.string(),
		Email:        d.string(),
		AccessToken:  d.token(),
		RefreshToken: d.token(),
		IDToken:      d.token(),
		TokenExpiry:  d.time(),
		CreatedAt:    d.time(),
		LastSeen:     d.time(),
	}
	count := d.uvarint()
	if count > MaxCPQEntries {
		return nil, errMalformed
	}
	for range count {
		entry := CPQEntry{Key: CPQKey{CPQID: d.int32(), CustomerID: d.int32(), QuoteID: d.varint()}}
		entry.SessionID = d.string()
		entry.UsedAt = d.time()
		s.CPQ = append(s.CPQ, entry)
	}
	if version >= formatVersion2 {
		s.ID = d.string()
		s.ProviderSID = d.string()
		s.UserAgent = d.string()
		s.ClientIP = d.string()
	}
	if version >= formatVersion {
		n := d.uvarint()
		if n > maxRoles {
			return nil, errMalformed
		}
		for range n {
			s.Roles = append(s.Roles, d.string())
		}
	}
	if d.err != nil || len(d.data) != 0 {
		return nil, errMalformed
	}
	return s, nil
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendTime(buf []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(buf, 0)
	}
	return binary.AppendVarint(buf, t.Unix())
}

// appendToken stores a token's segments decoded when each is canonical base64url (so re-encoding gives the
// same string back), else the raw string.
func appendToken(buf []byte, token string) []byte {
	if token == "" {
		return append(buf, tokenEmpty)
	}
	segments := strings.Split(token, ".")
	if len(segments) <= maxSegments {
		decoded := make([][]byte, 0, len(segments))
		for _, segment := range segments {
			raw, err := base64.RawURLEncoding.Strict().DecodeString(segment)
			if err != nil || base64.RawURLEncoding.EncodeToString(raw) != segment {
				decoded = nil
				break
			}
			decoded = append(decoded, raw)
		}
		if decoded != nil {
			buf = append(buf, tokenSegmented, byte(len(decoded)))
			for _, raw := range decoded {
				buf = binary.AppendUvarint(buf, uint64(len(raw)))
				buf = append(buf, raw...)
			}
			return buf
		}
	}
	buf = append(buf, tokenRaw)
	return appendString(buf, token)
}

// decoder reads the compact form; the first error sticks and later reads return zero values.
type decoder struct {
	data []byte
	err  error
}

func (d *decoder) fail() {
	d.err = errMalformed
	d.data = nil
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.data) == 0 {
		d.fail()
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.data)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *decoder) int32() int32 {
	v := d.varint()
	if int64(int32(v)) != v {
		d.fail()
		return 0
	}
	return int32(v)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.data)) {
		d.fail()
		return nil
	}
	b := d.data[:n]
	d.data = d.data[n:]
	return b
}

func (d *decoder) string() string {
	return string(d.bytes())
}

func (d *decoder) time() time.Time {
	v := d.varint()
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(v, 0).UTC()
}

func (d *decoder) token() string {
	switch d.byte() {
	case tokenEmpty:
		return ""
	case tokenRaw:
		return d.string()
	case tokenSegmented:
		count := int(d.byte())
		if count == 0 || count > maxSegments {
			d.fail()
			return ""
		}
		var sb strings.Builder
		for i := range count {
			if i > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(base64.RawURLEncoding.EncodeToString(d.bytes()))
		}
		return sb.String()
	default:
		d.fail()
		return ""
	}
}

// compressor compresses and decompresses session blobs, reusing flate state: decoding the cookie happens
// on every request, so its buffers are pooled.
type compressor struct {
	writers sync.Pool // *flate.Writer
	readers sync.Pool // io.ReadCloser implementing flate.Resetter
	buffers sync.Pool // *bytes.Buffer
}

func (c *compressor) compress(data []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(data)/2 + 64)
	w, _ := c.writers.Get().(*flate.Writer)
	if w == nil {
		w, _ = flate.NewWriter(&out, flate.BestCompression) // error only for an invalid level
	} else {
		w.Reset(&out)
	}
	_, _ = w.Write(data) // writes to a bytes.Buffer do not fail
	_ = w.Close()
	c.writers.Put(w)
	return out.Bytes()
}

// decompress inflates data (at most maxDecodedBytes) and passes the result to use, which must not keep it.
func (c *compressor) decompress(data []byte, use func([]byte) error) error {
	src := bytes.NewReader(data)
	r, _ := c.readers.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return fmt.Errorf("session: reset inflater: %w", err)
	}
	defer c.readers.Put(r)
	buf, _ := c.buffers.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	defer c.buffers.Put(buf)
	n, err := buf.ReadFrom(io.LimitReader(r, maxDecodedBytes+1))
	if err != nil || n > maxDecodedBytes {
		return errMalformed
	}
	return use(buf.Bytes())
}
