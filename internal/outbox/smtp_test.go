package outbox

import (
	"strings"
	"testing"
)

// TestSMTPURLNeverShowsItsPassword: PORTAL_SMTP_URL's forms parse to their TLS mode and port, and
// neither a parse error nor the server's name repeats the password.
func TestSMTPURLNeverShowsItsPassword(t *testing.T) {
	for raw, want := range map[string]string{
		"smtp://u:s3cret@mail.example.com":            "u@mail.example.com:587 (starttls)",
		"smtp://u:s3cret@mail.example.com:2525":       "u@mail.example.com:2525 (starttls)",
		"smtps://u:s3cret@mail.example.com":           "u@mail.example.com:465 (tls)",
		"smtp://mail.example.com?starttls=0":          "mail.example.com:25 (none)",
		"smtp://127.0.0.1:1025?starttls=0":            "127.0.0.1:1025 (none)",
		"smtp://u:s3cret@mail.example.com?starttls=1": "u@mail.example.com:587 (starttls)",
	} {
		s, err := ParseSMTPURL(raw)
		if err != nil || s.String() != want || strings.Contains(s.String(), "s3cret") {
			t.Errorf("%s: %q %v, want %q", raw, s.String(), err, want)
		}
	}
	for _, raw := range []string{"http://u:s3cret@x", "smtp://u:s3cret@", "smtp://u:s3cret@x:99999", "smtp://u:s3cret@x?starttls=maybe",
		"smtp://u:s3cret@x y\x7f:25", "://u:s3cret@"} {
		if _, err := ParseSMTPURL(raw); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error %v, want one without the password", raw, err)
		}
	}
}
