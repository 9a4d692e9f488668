package i18n

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestZoneOfARequest(t *testing.T) {
	t.Parallel()
	b, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for cookie, want := range map[string]string{
		"":                      "UTC",
		"Europe/Rome":           "Europe/Rome",
		"America/New_York":      "America/New_York",
		"Etc/GMT+5":             "Etc/GMT+5",
		"UTC":                   "UTC",
		"Local":                 "UTC",
		"Mars/Olympus":          "UTC",
		"../../etc/passwd":      "UTC",
		"/etc/localtime":        "UTC",
		"Europe//Rome":          "UTC",
		strings.Repeat("A", 65): "UTC",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if cookie != "" {
			r.Header.Set("Cookie", ZoneCookieName+"="+cookie)
		}
		if got := b.Zone(r).String(); got != want {
			t.Errorf("cookie %q: zone %s, want %s", cookie, got, want)
		}
	}
}

func TestTimesInAZone(t *testing.T) {
	t.Parallel()
	b, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	tokyo, ok := b.LookupZone("Asia/Tokyo")
	if !ok {
		t.Fatal("no Asia/Tokyo")
	}
	at := time.Date(2026, 11, 25, 20, 4, 5, 0, time.UTC)
	en := b.Translator(Source)
	if got := en.DateTime(at); got != "25 Nov 2026, 20:04 UTC" {
		t.Errorf("UTC: %q", got)
	}
	inTokyo := en.InZone(tokyo)
	if got := inTokyo.DateTime(at); got != "26 Nov 2026, 05:04 JST" {
		t.Errorf("Tokyo: %q", got)
	}
	if got := inTokyo.Timestamp(at); got != "26 Nov 2026, 05:04:05 JST" {
		t.Errorf("Tokyo, seconds: %q", got)
	}
	if en.DateTime(at) != "25 Nov 2026, 20:04 UTC" || en.Zone() != time.UTC {
		t.Error("InZone changed the shared translator")
	}
	if en.InZone(time.UTC) != en || en.InZone(nil) != en {
		t.Error("UTC should give the translator itself")
	}
}
