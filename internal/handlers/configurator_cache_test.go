package handlers

import (
	"fmt"
	"testing"
	"time"
)

func TestConfiguratorCache(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	cc := newConfiguratorCache(time.Hour, clock) // capped at maxConfiguratorCacheTTL
	if _, ok := cc.get("sub:a"); ok {
		t.Fatal("empty cache answered")
	}
	cc.put("sub:a", map[int32]string{1: "Alpha"})
	if names, ok := cc.get("sub:a"); !ok || names[1] != "Alpha" {
		t.Errorf("get after put: %v %v", names, ok)
	}
	if _, ok := cc.get("sub:b"); ok {
		t.Error("another user got the first user's names")
	}
	now = now.Add(maxConfiguratorCacheTTL)
	if _, ok := cc.get("sub:a"); ok {
		t.Error("names older than the TTL were reused")
	}
	for i := range configuratorCacheUsers + 10 {
		now = now.Add(time.Millisecond)
		cc.put(fmt.Sprintf("sub:%d", i), map[int32]string{})
	}
	if len(cc.entries) != configuratorCacheUsers {
		t.Errorf("%d entries, want the bound %d", len(cc.entries), configuratorCacheUsers)
	}
	if _, ok := cc.get("sub:0"); ok {
		t.Error("the oldest entry was not the one evicted")
	}
	off := newConfiguratorCache(0, clock)
	off.put("sub:a", map[int32]string{1: "Alpha"})
	if _, ok := off.get("sub:a"); ok {
		t.Error("a TTL of 0 must disable the cache")
	}
}
