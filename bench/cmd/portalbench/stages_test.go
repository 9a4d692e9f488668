package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseTracesAndStages(t *testing.T) {
	t.Parallel()
	const traces = `File: portal
Type: cpu
Duration: 5s, Total samples = 40ms (0.8%)
-----------+-------------------------------------------------------
      20ms   github.com/klauspost/compress/flate.statelessEnc
             github.com/klauspost/compress/gzip.(*Writer).Write
             github.com/cpqportal/portal/internal/handlers.(*gzipResponseWriter).writeWhole
             github.com/cpqportal/portal/internal/handlers.(*Handler).render
             github.com/cpqportal/portal/internal/auth.(*Authenticator).RequireLogin.func1
-----------+-------------------------------------------------------
      10ms   runtime.mallocgc
             encoding/json.(*decodeState).object
             github.com/cpqportal/portal/internal/apiclient.(*Customer).decodeOwned
             github.com/cpqportal/portal/internal/apiclient.(*Client).decodeJSON
             github.com/cpqportal/portal/internal/apiclient.(*Client).doJSON
-----------+-------------------------------------------------------
      10ms   runtime.futex
             runtime.schedule
-----------+-------------------------------------------------------
`
	samples, err := parseTraces(strings.NewReader(traces))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 3 || samples[0].cpu != 20*time.Millisecond || len(samples[0].frames) != 5 {
		t.Fatalf("parsed %+v", samples)
	}
	got := stageBreakdown(samples)
	want := map[string]time.Duration{"compress": 20 * time.Millisecond, "decode": 10 * time.Millisecond, "other": 10 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("stages %v, want %v", got, want)
	}
	for stage, d := range want {
		if got[stage] != d {
			t.Errorf("stage %s: %v, want %v (all: %v)", stage, got[stage], d, got)
		}
	}
	for stage := range got {
		if !contains(stages, stage) {
			t.Errorf("stage %q is not in the printed list", stage)
		}
	}
}

func TestAggregateAndMerge(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	runs := make([]*report, 3)
	for i, v := range []float64{0.5, 0.3, 0.4} {
		runs[i] = newReport(&out, &out)
		runs[i].add("overhead_throughput_ratio", v, "ratio")
	}
	rep := aggregate(runs, &out, &out)
	if rep.values["overhead_throughput_ratio"] != 0.4 || rep.values["overhead_throughput_ratio_min"] != 0.3 ||
		rep.values["overhead_throughput_ratio_max"] != 0.5 {
		t.Fatalf("aggregate: %v", rep.values)
	}
	path := t.TempDir() + "/results.json"
	old := newReport(&out, &out)
	old.add("list_portal_rss_mb", 141, "MiB")
	old.add("overhead_throughput_ratio", 0.31, "ratio")
	if err := old.write(path); err != nil {
		t.Fatal(err)
	}
	if err := rep.mergeFrom(path); err != nil {
		t.Fatal(err)
	}
	if rep.names[0] != "list_portal_rss_mb" || rep.values["list_portal_rss_mb"] != 141 || rep.values["overhead_throughput_ratio"] != 0.4 {
		t.Fatalf("merged: %v %v", rep.names, rep.values)
	}

	// One run measuring a figure again drops the spread of the earlier runs.
	single := newReport(&out, &out)
	single.add("overhead_throughput_ratio", 0.6, "ratio")
	if err := rep.write(path); err != nil {
		t.Fatal(err)
	}
	if err := single.mergeFrom(path); err != nil {
		t.Fatal(err)
	}
	_, min := single.values["overhead_throughput_ratio_min"]
	_, max := single.values["overhead_throughput_ratio_max"]
	if min || max || single.values["overhead_throughput_ratio"] != 0.6 || single.values["list_portal_rss_mb"] != 141 {
		t.Fatalf("merged over a spread: %v", single.values)
	}
}

// TestMergeKeepsTheSpreadOfFiguresNotMeasured: -merge keeps a figure this run did not measure
// together with its <name>_min and <name>_max (the figure precedes its spread in the file, and
// once kept it must not count as measured by this run), and drops only the spread of a figure
// this run measured again.
func TestMergeKeepsTheSpreadOfFiguresNotMeasured(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	path := t.TempDir() + "/results.json"
	old := newReport(&out, &out)
	for _, name := range []string{"list_first_page_cold_p50_ms", "overhead_throughput_ratio"} {
		old.add(name, 10, "")
		old.add(name+"_min", 9, "")
		old.add(name+"_max", 11, "")
	}
	old.add("state_sqlite_1m_sighting_ms", 0.7, "ms")
	if err := old.write(path); err != nil {
		t.Fatal(err)
	}
	rep := newReport(&out, &out)
	rep.add("overhead_throughput_ratio", 0.4, "ratio")
	if err := rep.mergeFrom(path); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"list_first_page_cold_p50_ms": 10, "list_first_page_cold_p50_ms_min": 9, "list_first_page_cold_p50_ms_max": 11,
		"state_sqlite_1m_sighting_ms": 0.7, "overhead_throughput_ratio": 0.4,
	}
	if len(rep.values) != len(want) || len(rep.names) != len(want) {
		t.Fatalf("merged %v (names %v), want %v", rep.values, rep.names, want)
	}
	for name, v := range want {
		if got, ok := rep.values[name]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, v)
		}
	}
	if got := strings.Join(rep.names, " "); got != "list_first_page_cold_p50_ms list_first_page_cold_p50_ms_min list_first_page_cold_p50_ms_max state_sqlite_1m_sighting_ms overhead_throughput_ratio" {
		t.Errorf("order %s", got)
	}
}
