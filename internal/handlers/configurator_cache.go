package handlers

import (
	"context"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
)

const (
	// configuratorCacheUsers bounds how many users' configurator names are kept (a few hundred
	// bytes each); the oldest entry goes first.
	configuratorCacheUsers = 256
	// maxConfiguratorCacheTTL caps how long names are reused: the list rarely changes, but a
	// renamed configurator should show within a minute (docs/performance.md).
	maxConfiguratorCacheTTL = time.Minute
)

// configuratorCache keeps each user's configurator names (GET /v2/cpq/list) for a short time, so
// the customer detail page makes one v2 call per view instead of two. Users are keyed like the
// customer cache (customerCacheKey: the token's subject), never shared, because each token may
// see other configurators. A TTL of zero disables it.
type configuratorCache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]configuratorEntry
}

type configuratorEntry struct {
	names     map[int32]string         // read-only once stored
	list      []apiclient.Configurator // in the v2 API's order; nil when only names were stored
	fetchedAt time.Time
}

func newConfiguratorCache(ttl time.Duration, now func() time.Time) *configuratorCache {
	return &configuratorCache{ttl: min(ttl, maxConfiguratorCacheTTL), now: now, entries: map[string]configuratorEntry{}}
}

// get returns the user's names when they are fresh. The map must not be modified.
func (cc *configuratorCache) get(user string) (map[int32]string, bool) {
	if cc.ttl <= 0 {
		return nil, false
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	e, ok := cc.entries[user]
	if !ok || cc.now().Sub(e.fetchedAt) >= cc.ttl {
		return nil, false
	}
	return e.names, true
}

// put stores the user's names, evicting the oldest entry when full.
func (cc *configuratorCache) put(user string, names map[int32]string) {
	if cc.ttl <= 0 {
		return
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if _, ok := cc.entries[user]; !ok && len(cc.entries) >= configuratorCacheUsers {
		oldestKey, oldest := "", time.Time{}
		for k, e := range cc.entries {
			if oldestKey == "" || e.fetchedAt.Before(oldest) {
				oldestKey, oldest = k, e.fetchedAt
			}
		}
		delete(cc.entries, oldestKey)
	}
	cc.entries[user] = configuratorEntry{names: names, fetchedAt: cc.now()}
}

// getList returns the user's configurators in the v2 API's order when they are fresh. The slice
// must not be modified.
func (cc *configuratorCache) getList(user string) ([]apiclient.Configurator, bool) {
	if cc.ttl <= 0 {
		return nil, false
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	e, ok := cc.entries[user]
	if !ok || e.list == nil || cc.now().Sub(e.fetchedAt) >= cc.ttl {
		return nil, false
	}
	return e.list, true
}

// putList stores the user's configurators (and so their names).
func (cc *configuratorCache) putList(user string, list []apiclient.Configurator) {
	if cc.ttl <= 0 {
		return
	}
	if list == nil {
		list = []apiclient.Configurator{}
	}
	cc.put(user, configuratorNames(list))
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if e, ok := cc.entries[user]; ok {
		e.list = list
		cc.entries[user] = e
	}
}

// configuratorList is call 1 for the user whose key and token ctx carries, reused from the cache
// while fresh (issue 27: the quote start flow and the quote page need the list or a name on every
// step; one read per user and TTL instead of one per step). Safe to call from a goroutine: it
// takes no gin context.
func (h *Handler) configuratorList(ctx context.Context, user string) ([]apiclient.Configurator, error) {
	if list, ok := h.configurators.getList(user); ok {
		return list, nil
	}
	list, err := h.api.CPQ.List(ctx)
	if err != nil {
		return nil, err
	}
	h.configurators.putList(user, list)
	return list, nil
}
