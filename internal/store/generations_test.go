package store

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// A shard's generation only goes up, whoever raises it and in whatever order; an absent or
// damaged vector reads as zeros.
func TestGenerations(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		g := Generations{Store: s, Key: "model/gen", Shards: 4}
		if gens, err := g.Read(ctx); err != nil || !slices.Equal(gens, []uint64{0, 0, 0, 0}) {
			t.Fatalf("absent vector: %v %v, want four zeros", gens, err)
		}
		if err := g.Raise(ctx, 2, 7); err != nil {
			t.Fatal(err)
		}
		if err := g.Raise(ctx, 2, 5); err != nil { // an older write of the shard: left as it is
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for gen := uint64(1); gen <= 20; gen++ {
			wg.Go(func() {
				if err := g.Raise(ctx, 1, gen); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if gens, err := g.Read(ctx); err != nil || !slices.Equal(gens, []uint64{0, 20, 7, 0}) {
			t.Fatalf("vector %v %v, want [0 20 7 0]", gens, err)
		}
		if err := s.Put(ctx, "model/gen", []byte(`[1,2]`), 0); err != nil {
			t.Fatal(err)
		}
		if gens, err := g.Read(ctx); err != nil || !slices.Equal(gens, []uint64{0, 0, 0, 0}) {
			t.Fatalf("a vector of another length: %v %v, want four zeros", gens, err)
		}
		if err := g.Raise(ctx, 3, 1); err != nil {
			t.Fatal(err)
		}
		if gens, _ := g.Read(ctx); !slices.Equal(gens, []uint64{0, 0, 0, 1}) {
			t.Fatalf("raised over a damaged vector: %v", gens)
		}
	})
}
