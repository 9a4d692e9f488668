package workindex

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// fill10k writes 10,000 quotes and 10,000 contracts straight into the shards (as many sightings
// would) and returns a fresh index that loads them, like a replica starting up.
func fill10k(b *testing.B) (*Index, Viewer) {
	b.Helper()
	st := openStore(b)
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	owner := Viewer{Subject: "rep", Name: "Rep"}
	var shards [numShards]shardDoc
	for i := int64(1); i <= 10_000; i++ {
		stage := Stages()[i%4]
		q := Row{Kind: KindQuote, QuoteID: i, CPQID: int32(1 + i%3), CustomerID: int32(1 + i%500), Customer: fmt.Sprintf("Customer %d", i%500),
			Configurator: "Cfg", Stage: stage, OneOffCents: i * 37, MonthlyCents: i % 1000, CreatedBy: owner.Key(), ChangedBy: owner.Key(),
			Owners: []string{owner.Key()}, ChangedAt: base.Add(time.Duration(i) * time.Minute), SeenAt: base.Add(time.Duration(i) * time.Minute)}
		if i%5 != 0 { // a fifth of the rows belong to colleagues
			q.Owners = append(q.Owners, PersonKey(fmt.Sprintf("colleague-%d", i%20)))
		}
		n := shardOf(keyOf(KindQuote, i))
		shards[n].Rows = append(shards[n].Rows, q)
		ct := q
		ct.Kind, ct.ContractID, ct.ContractNumber = KindContract, int32(i), fmt.Sprintf("C-%06d", i)
		if ct.Stage == StageDraft {
			ct.Stage = StageGenerated
		}
		n = shardOf(keyOf(KindContract, i))
		shards[n].Rows = append(shards[n].Rows, ct)
	}
	gens := make([]uint64, numShards)
	for n := range shards {
		shards[n].Gen = 1
		gens[n] = 1
		raw, _ := json.Marshal(shards[n])
		must(b, st.Put(ctx, shardKey(n), raw, 0))
	}
	raw, _ := json.Marshal(gens)
	must(b, st.Put(ctx, genKey, raw, 0))
	return New(st, Options{}), owner
}

// BenchmarkList10k: one list page (My quotes, first page, by last change; and the team's
// contracts out for signature by value) over 10,000 quotes and 10,000 contracts, warm.
func BenchmarkList10k(b *testing.B) {
	ix, owner := fill10k(b)
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := ix.List(ctx, owner, Query{Kind: KindQuote}); err != nil { // loads the shards
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	indexMiB := float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
	team := Viewer{Subject: "lead", Team: true}
	b.Run("my-quotes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := ix.List(ctx, owner, Query{Kind: KindQuote, Scope: ScopeMine})
			if err != nil || len(p.Rows) != 25 {
				b.Fatal(err, len(p.Rows))
			}
		}
		b.ReportMetric(indexMiB, "MiB-index") // the projection of 10,000 + 10,000 rows in memory
	})
	b.Run("team-contracts-signature-by-value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := ix.List(ctx, team, Query{Kind: KindContract, Scope: ScopeAll, Stages: []Stage{StageSignature}, Sort: SortValue})
			if err != nil || len(p.Rows) != 25 {
				b.Fatal(err, len(p.Rows))
			}
		}
	})
	b.Run("find-customer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ix.List(ctx, owner, Query{Kind: KindQuote, Scope: ScopeAll, Find: "customer 42"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
