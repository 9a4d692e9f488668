package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRoundTrips(t *testing.T) {
	t.Parallel()
	at := func(ms int) simCall {
		return simCall{Received: time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond)}
	}
	for name, tc := range map[string]struct {
		calls []simCall
		want  int
	}{
		"none":                       {nil, 0},
		"one":                        {[]simCall{at(0)}, 1},
		"side by side":               {[]simCall{at(0), at(3), at(10)}, 1},
		"one after the other":        {[]simCall{at(0), at(52), at(104)}, 3},
		"two side by side, then one": {[]simCall{at(104), at(0), at(2)}, 2},
	} {
		if got := roundTrips(tc.calls, 50*time.Millisecond); got != tc.want {
			t.Errorf("%s: %d round trips, want %d", name, got, tc.want)
		}
	}
}

func TestCheckCalls(t *testing.T) {
	t.Parallel()
	call := func(endpoint, token string, status int) simCall {
		return simCall{Endpoint: endpoint, Status: status, Header: http.Header{"Authorization": {"Bearer " + token}}}
	}
	good := []simCall{call("cpq.toflist", "mine", 200), call("cpq.quantity", "mine", 200)}
	if err := checkCalls(good, "mine", []string{"cpq.toflist", "cpq.quantity"}); err != nil {
		t.Errorf("a journey by the rules failed: %v", err)
	}
	for name, tc := range map[string]struct {
		calls []simCall
		must  []string
		want  string
	}{
		"another token":   {[]simCall{call("cpq.toflist", "theirs", 200)}, nil, "another token"},
		"refused call":    {[]simCall{call("cpq.quantity", "mine", 400)}, nil, "answered 400"},
		"no stale check":  {[]simCall{call("cpq.quantity", "mine", 200)}, []string{"cpq.toflist", "cpq.quantity"}, "must call"},
		"check too late":  {[]simCall{call("cpq.quantity", "mine", 200), call("cpq.toflist", "mine", 200)}, []string{"cpq.toflist", "cpq.quantity"}, "must call"},
		"unanswered call": {[]simCall{call("cpq.toflist", "mine", 0)}, nil, "answered 0"},
	} {
		err := checkCalls(tc.calls, "mine", tc.must)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}
