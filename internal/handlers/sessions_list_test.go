package handlers

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBrowserOf(t *testing.T) {
	t.Parallel()
	en := testTranslator(t, "en")
	cases := []struct{ ua, want string }{
		{"", "Unknown browser"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0.0.0 Safari/537.36", "Chrome on Linux"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0.0.0 Safari/537.36 Edg/139.0.0.0", "Edge on Windows"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox on macOS"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "Safari on iOS"},
		{"curl/8.5.0", "curl"},
		{"some-agent", "some-agent"},
	}
	for _, c := range cases {
		if got := browserOf(en, c.ua); got != c.want {
			t.Errorf("browserOf(%q) = %q, want %q", c.ua, got, c.want)
		}
	}
	long := strings.Repeat("é", 100) // two bytes each: byte 60 starts a character, 59 does not
	if got := browserOf(en, "x"+long); !utf8.ValidString(got) || len(got) > 64 {
		t.Errorf("a long agent is cut to %q (valid UTF-8: %v)", got, utf8.ValidString(got))
	}
}
