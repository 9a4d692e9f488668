package customercache

import (
	"fmt"
	"runtime"
	"sort"
	"testing"
	"time"
)

// Benchmarks with the simulator seeded with 100,000 customers (v2sim.MaxCustomers). The page-level
// ones (BenchmarkSearchKeystroke, BenchmarkFirstPage, BenchmarkDecodeBare) are in
// internal/handlers; these measure the cache on its own. Run with
//
//	go test -run '^$' -bench . -benchtime 20x ./internal/customercache/

const benchCustomers = 100_000

// BenchmarkSnapshotSearch is one keystroke on a warm snapshot: filter 100k search keys, then page.
func BenchmarkSnapshotSearch(b *testing.B) {
	f := newFixture(b, benchCustomers, Options{TTL: time.Hour})
	snap, err := f.cache.Get(userCtx("ann"), "ann")
	if err != nil {
		b.Fatal(err)
	}
	queries := []string{"r", "ro", "ros", "ross", "rossi", "rossi s", "rossi s.r"}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		res := snap.Search(Query{Text: queries[i%len(queries)], Sort: SortByName, Limit: 25})
		durations = append(durations, time.Since(start))
		if res.Total == 0 {
			b.Fatal("no match")
		}
	}
	reportP99(b, durations)
}

// BenchmarkWarmCachesMemory measures the heap the caches of five users hold (the portal's part:
// the heap after a forced collection, minus the heap before, with the simulator's own list
// already built so it is not counted).
func BenchmarkWarmCachesMemory(b *testing.B) {
	f := newFixture(b, benchCustomers, Options{TTL: time.Hour, MaxUsers: 5})
	// Warm the simulator's encoded list, then measure the baseline.
	if _, _, _, err := f.api.Customers.List(userCtx("warm"), "x"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cache := New(f.api.Customers, Options{TTL: time.Hour, MaxUsers: 5})
		before := heapInUse()
		for u := range 5 {
			user := fmt.Sprintf("user-%d", u)
			snap, err := cache.Get(userCtx(user), user)
			if err != nil {
				b.Fatal(err)
			}
			// Build every sort order too: they are part of a warm cache.
			for k := range numSortKeys {
				snap.Search(Query{Sort: k, Limit: 1})
			}
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/(1<<20), "MiB-5-users")
		b.ReportMetric(float64(after)/(1<<20), "MiB-heap-total")
		runtime.KeepAlive(cache)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// reportP99 adds the 99th percentile of the measured durations, in milliseconds.
func reportP99(b *testing.B, durations []time.Duration) {
	b.Helper()
	if len(durations) == 0 {
		return
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	p99 := durations[min(len(durations)-1, len(durations)*99/100)]
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
}
