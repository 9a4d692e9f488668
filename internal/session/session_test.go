package session

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func TestCPQSessionsAreKeyedByQuote(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var s Session
	tabA := CPQKey{CPQID: 1, CustomerID: 7, QuoteID: 100}
	tabB := CPQKey{CPQID: 1, CustomerID: 7, QuoteID: 200}
	s.SetCPQSession(tabA, "sess-a", now)
	s.SetCPQSession(tabB, "sess-b", now.Add(time.Second))

	if got, ok := s.CPQSession(tabA); !ok || got != "sess-a" {
		t.Fatalf("quote 100: got %q, %v; want sess-a", got, ok)
	}
	if got, ok := s.CPQSession(tabB); !ok || got != "sess-b" {
		t.Fatalf("quote 200: got %q, %v; want sess-b", got, ok)
	}
	if _, ok := s.CPQSession(CPQKey{CPQID: 2, CustomerID: 7, QuoteID: 100}); ok {
		t.Fatal("another configurator must not see quote 100's session")
	}

	s.SetCPQSession(tabA, "sess-a2", now.Add(2*time.Second))
	if got, _ := s.CPQSession(tabA); got != "sess-a2" {
		t.Fatalf("replaced session: got %q, want sess-a2", got)
	}
	if len(s.CPQ) != 2 || s.CPQ[0].Key != tabA {
		t.Fatalf("most recent first: got %+v", s.CPQ)
	}

	s.DeleteCPQSession(tabA)
	if _, ok := s.CPQSession(tabA); ok {
		t.Fatal("deleted session still found")
	}
	if got, _ := s.CPQSession(tabB); got != "sess-b" {
		t.Fatalf("deleting quote 100 touched quote 200: got %q", got)
	}
}

func TestCPQSessionsAreBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var s Session
	for i := range MaxCPQEntries + 5 {
		s.SetCPQSession(CPQKey{CPQID: 1, CustomerID: 1, QuoteID: int64(i + 1)}, fmt.Sprintf("s%d", i+1), now)
	}
	if len(s.CPQ) != MaxCPQEntries {
		t.Fatalf("len = %d, want %d", len(s.CPQ), MaxCPQEntries)
	}
	for i := 1; i <= 5; i++ {
		if _, ok := s.CPQSession(CPQKey{CPQID: 1, CustomerID: 1, QuoteID: int64(i)}); ok {
			t.Errorf("oldest entry %d should have been dropped", i)
		}
	}
	if got, _ := s.CPQSession(CPQKey{CPQID: 1, CustomerID: 1, QuoteID: MaxCPQEntries + 5}); got != fmt.Sprintf("s%d", MaxCPQEntries+5) {
		t.Errorf("newest entry missing, got %q", got)
	}
}

func TestPromoteCPQSession(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var s Session
	started := CPQKey{CPQID: 1, CustomerID: 7}
	other := CPQKey{CPQID: 1, CustomerID: 8}
	s.SetCPQSession(started, "sess-new", now)
	s.SetCPQSession(other, "sess-other", now)

	quote := CPQKey{CPQID: 1, CustomerID: 7, QuoteID: 555}
	if !s.PromoteCPQSession(started, quote, now.Add(time.Minute)) {
		t.Fatal("PromoteCPQSession reported a missing entry")
	}
	if got, ok := s.CPQSession(quote); !ok || got != "sess-new" {
		t.Fatalf("promoted: got %q, %v", got, ok)
	}
	if _, ok := s.CPQSession(started); ok {
		t.Fatal("the 'no quote yet' entry must be gone after promotion")
	}
	if s.CPQ[0].Key != quote || !s.CPQ[0].UsedAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("promoted entry must be most recent: %+v", s.CPQ[0])
	}
	if s.PromoteCPQSession(started, quote, now) {
		t.Fatal("promoting a missing entry must report false")
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	cases := map[string]*Session{
		"empty": {},
		"full": {
			Subject: "user-1", Name: "Sam Sales", Email: "sam@demo.example",
			AccessToken:  fakeJWT(t, 1200),
			RefreshToken: randomBase64URL(t, 300),
			IDToken:      fakeJWT(t, 700),
			TokenExpiry:  created.Add(15 * time.Minute),
			CreatedAt:    created,
			LastSeen:     created.Add(time.Minute),
			CPQ: []CPQEntry{
				{Key: CPQKey{CPQID: 1, CustomerID: -3, QuoteID: 1 << 40}, SessionID: "s-1", UsedAt: created},
				{Key: CPQKey{CPQID: 2, CustomerID: 4}, SessionID: "s-2", UsedAt: created.Add(time.Second)},
			},
		},
		"opaque and odd tokens": {
			AccessToken:  "not/base64+token==",
			RefreshToken: "a.b.c.d.e",
			IDToken:      "..",
		},
		"base64 with padding is kept raw": {AccessToken: "YWJj.ZA==.x", RefreshToken: "eyJhIjoxfQ"},
		"many segments":                   {AccessToken: "a.b.c.d.e.f.g.h.i.j"},
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := unmarshal(marshal(in, true))
			if err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			if !reflect.DeepEqual(got, in) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, in)
			}
		})
	}
}

func TestMarshalWithoutIDToken(t *testing.T) {
	t.Parallel()
	in := &Session{Subject: "u", AccessToken: fakeJWT(t, 500), IDToken: fakeJWT(t, 500)}
	got, err := unmarshal(marshal(in, false))
	if err != nil {
		t.Fatal(err)
	}
	if got.IDToken != "" || got.AccessToken != in.AccessToken {
		t.Fatalf("got ID token %q, access token kept %v", got.IDToken, got.AccessToken == in.AccessToken)
	}
}

func TestMarshalIsCompact(t *testing.T) {
	t.Parallel()
	in := &Session{AccessToken: fakeJWT(t, 4096)}
	// Decoding the JWT's base64url segments saves a quarter of their size.
	if got, limit := len(marshal(in, true)), 4096*3/4+64; got > limit {
		t.Fatalf("encoded %d bytes for a 4096-byte JWT, want at most %d", got, limit)
	}
}

func TestUnmarshalRejectsGarbage(t *testing.T) {
	t.Parallel()
	valid := marshal(&Session{Subject: "u", AccessToken: "a.b.c", CPQ: []CPQEntry{{SessionID: "x"}}}, true)
	inputs := map[string][]byte{
		"empty":           nil,
		"wrong version":   append([]byte{99}, valid[1:]...),
		"truncated":       valid[:len(valid)-2],
		"trailing bytes":  append(append([]byte(nil), valid...), 0),
		"huge length":     {formatVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"bad token kind":  {formatVersion, 0, 0, 0, 9},
		"zero segments":   {formatVersion, 0, 0, 0, tokenSegmented, 0},
		"too many CPQ":    append(marshal(&Session{}, true)[:len(marshal(&Session{}, true))-1], MaxCPQEntries+1),
		"int32 overflows": {formatVersion, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xfe, 0xff, 0xff, 0xff, 0x7f},
	}
	for name, data := range inputs {
		if _, err := unmarshal(data); err == nil {
			t.Errorf("%s: unmarshal accepted %x", name, data)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add(marshal(&Session{Subject: "u", AccessToken: "eyJhbGciOiJub25lIn0.e30.", CPQ: []CPQEntry{{SessionID: "x"}}}, true))
	f.Add([]byte{formatVersion})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := unmarshal(data)
		if err != nil {
			return
		}
		// Whatever decodes must encode back to a form that decodes to the same session.
		again, err := unmarshal(marshal(s, true))
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("re-encoding changed the session: %v\n%+v\n%+v", err, s, again)
		}
	})
}

func FuzzTokenRoundTrip(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln")
	f.Add("opaque+/=")
	f.Add("...")
	f.Fuzz(func(t *testing.T, token string) {
		in := &Session{AccessToken: token}
		got, err := unmarshal(marshal(in, true))
		if err != nil || got.AccessToken != token {
			t.Fatalf("token %q came back as %q (%v)", token, got.AccessToken, err)
		}
	})
}
