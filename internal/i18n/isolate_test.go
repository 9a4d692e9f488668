package i18n

import "testing"

func TestIsolate(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"Società Benè 42", "Società Benè 42"},
		{"Caffè 😀", "Caffè 😀"},
		{"ACME\u202e", "\u2068ACME\u202e\u2069"},
		{"שלום", "\u2068שלום\u2069"},
		{"شركة 7", "\u2068شركة 7\u2069"},
		{"a\u2067b", "\u2068a\u2067b\u2069"},
	}
	for _, tt := range tests {
		if got := Isolate(tt.in); got != tt.want {
			t.Errorf("Isolate(%+q) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}
