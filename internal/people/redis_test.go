package people

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cpqportal/portal/internal/session/redistest"
	"github.com/cpqportal/portal/internal/store"
)

// TestReplicasShareTheDirectoryInRedis: two replicas on one Redis record sign-ins side by side
// (the same shards, atomically: none is lost), both name everyone after a refresh, the keys
// expire Keep after the last sign-in, and a Redis that stops fails no lookup.
func TestReplicasShareTheDirectoryInRedis(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	open := func() store.Store {
		st, err := store.NewRedis("redis://"+addr+"/0", "test:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	clk := &clock{now: time.Now()}
	a, b := New(open(), Options{Now: clk.Now}), New(open(), Options{Now: clk.Now})
	ctx := context.Background()
	const each = 40
	var wg sync.WaitGroup
	for i := range each {
		for r, d := range []*Directory{a, b} {
			wg.Go(func() {
				login := fmt.Sprintf("r%d-user%02d", r, i)
				if err := d.Record(ctx, Person{Login: login, Name: "Name of " + login}); err != nil {
					t.Errorf("record %s: %v", login, err)
				}
			})
		}
	}
	wg.Wait()
	clk.Advance(DefaultRefreshEvery)
	for name, d := range map[string]*Directory{"a": a, "b": b} {
		v := view(t, d)
		if v.Len() != 2*each {
			t.Errorf("replica %s knows %d people, want %d", name, v.Len(), 2*each)
		}
		for r := range 2 {
			for i := range each {
				login := fmt.Sprintf("r%d-user%02d", r, i)
				if got := nameOf(v, login); got != "Name of "+login {
					t.Errorf("replica %s names %s %q", name, login, got)
				}
			}
		}
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	keys, err := client.Keys(ctx, "test:people/*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys %v %v", keys, err)
	}
	for _, k := range keys {
		ttl, err := client.TTL(ctx, k).Result()
		if err != nil || ttl <= DefaultKeep-time.Hour || ttl > DefaultKeep {
			t.Errorf("%s expires in %s, want about %s", k, ttl, DefaultKeep)
		}
	}
	// Redis stops: lookups answer from the projection.
	_ = client.Shutdown(ctx).Err() // answers with the connection closing as the server goes
	if client.Ping(ctx).Err() == nil {
		t.Fatal("Redis still answers after SHUTDOWN")
	}
	clk.Advance(DefaultRefreshEvery)
	v, _ := a.View(ctx)
	if got := nameOf(v, "r1-user07"); got != "Name of r1-user07" {
		t.Errorf("with Redis stopped, r1-user07 is %q", got)
	}
}
