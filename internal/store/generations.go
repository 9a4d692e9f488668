package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Generations is the vector of generation numbers of a read model kept in shards (one key per
// shard, internal/workindex and internal/people): a writer raises its shard's number after it
// wrote the shard, and each replica reads the vector (one small key) and reloads only the shards
// whose number moved past the one it holds.
type Generations struct {
	Store  Store
	Key    string
	Shards int
	// TTL lets the vector expire with the shards it describes (0: never).
	TTL time.Duration
}

// Read returns one number per shard: zeros when the vector is absent or not one of Shards
// numbers (a shard at zero is read as "nothing written yet").
func (g Generations) Read(ctx context.Context) ([]uint64, error) {
	gens := make([]uint64, g.Shards)
	raw, err := g.Store.Get(ctx, g.Key)
	switch {
	case err == nil:
		var stored []uint64
		if json.Unmarshal(raw, &stored) == nil && len(stored) == g.Shards {
			gens = stored
		}
	case !errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("store: read generations %s: %w", g.Key, err)
	}
	return gens, nil
}

// Raise sets shard's number to gen unless it is already there or past it (another writer's
// later write of the shard), atomically.
func (g Generations) Raise(ctx context.Context, shard int, gen uint64) error {
	err := g.Store.Update(ctx, g.Key, g.TTL, func(old []byte) ([]byte, error) {
		gens := make([]uint64, g.Shards)
		if old != nil {
			var stored []uint64
			if json.Unmarshal(old, &stored) == nil && len(stored) == g.Shards {
				gens = stored
			}
		}
		if gens[shard] >= gen {
			return nil, ErrSkip
		}
		gens[shard] = gen
		return json.Marshal(gens)
	})
	if err != nil {
		return fmt.Errorf("store: raise generation %d of %s: %w", shard, g.Key, err)
	}
	return nil
}
