package main

import (
	"testing"

	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/session/redistest"
	"github.com/cpqportal/portal/internal/store"
)

// TestStateStoreIsRedisWheneverARedisURLIsSet: with PORTAL_REDIS_URL set, jobs and recent items
// live in redis whatever the session store (cookie sessions on several replicas share their
// batches); without it, in the data directory's bbolt file.
func TestStateStoreIsRedisWheneverARedisURLIsSet(t *testing.T) {
	addr := redistest.Start(t)
	for _, sessions := range []string{config.SessionStoreCookie, config.SessionStoreRedis, config.SessionStoreFile} {
		st, err := newStateStore(config.Config{SessionStore: sessions, RedisURL: "redis://" + addr + "/0", DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := st.(*store.Redis); !ok {
			t.Errorf("session store %s with PORTAL_REDIS_URL: state store %T, want redis", sessions, st)
		}
		_ = st.Close()
	}
	st, err := newStateStore(config.Config{SessionStore: config.SessionStoreCookie, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, ok := st.(*store.Bolt); !ok {
		t.Errorf("without PORTAL_REDIS_URL: state store %T, want bbolt", st)
	}
}
