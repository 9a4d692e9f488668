package session

import (
	"context"
	"sync"
	"time"
)

// memoryKV is the kv in the process's memory: the cookie store's revocation list when neither a
// database nor a data directory is given (tests). It is lost at exit.
type memoryKV struct {
	now func() time.Time

	mu     sync.Mutex
	values map[string]memoryEntry
	sets   map[string]map[string]time.Time
}

type memoryEntry struct {
	value   []byte
	expires time.Time
}

func newMemoryKV(now func() time.Time) *memoryKV {
	return &memoryKV{now: now, values: map[string]memoryEntry{}, sets: map[string]map[string]time.Time{}}
}

func (m *memoryKV) get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.values[key]
	if !ok || !m.now().Before(e.expires) {
		return nil, errNotFound
	}
	return e.value, nil
}

func (m *memoryKV) set(_ context.Context, key string, value []byte, ttl time.Duration, mode setMode) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, e := range m.values { // bounded by the live entries: revocations expire
		if !now.Before(e.expires) {
			delete(m.values, k)
		}
	}
	_, exists := m.values[key]
	if (mode == setIfAbsent && exists) || (mode == setIfPresent && !exists) {
		return false, nil
	}
	m.values[key] = memoryEntry{value: append([]byte(nil), value...), expires: now.Add(ttl)}
	return true, nil
}

func (m *memoryKV) del(_ context.Context, keys ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, key := range keys {
		delete(m.values, key)
	}
	return nil
}

func (m *memoryKV) addMember(_ context.Context, set, member string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sets[set] == nil {
		m.sets[set] = map[string]time.Time{}
	}
	m.sets[set][member] = m.now().Add(ttl)
	return nil
}

func (m *memoryKV) removeMembers(_ context.Context, set string, members ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, member := range members {
		delete(m.sets[set], member)
	}
	return nil
}

func (m *memoryKV) members(_ context.Context, set string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for member, expires := range m.sets[set] {
		if m.now().Before(expires) {
			out = append(out, member)
		}
	}
	return out, nil
}

func (m *memoryKV) settle(context.Context)     {}
func (m *memoryKV) ping(context.Context) error { return nil }
func (m *memoryKV) close() error               { return nil }
