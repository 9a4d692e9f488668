package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// Overhead rounds (docs/performance.md): warm-up, then short rounds of each path, the order rotated
// every round so that drift of the machine falls on all of them.
const (
	overheadRounds      = 6
	overheadRound       = 3 * time.Second
	overheadWarmup      = 2 * time.Second
	overheadIdleRounds  = 3 // concurrency 1: the latency a single user sees on an idle portal
	overheadIdleRound   = 2 * time.Second
	overheadCustomerIDs = 1000 // requests cycle over customers 1..1000
)

// customerDetailPath is the portal's customer detail page.
func customerDetailPath(id int64) string { return "/customers/" + strconv.FormatInt(id, 10) }

// chromiumAcceptEncoding is what Chromium sends: the portal answers it with zstd, the others with
// what they do (the simulator and the proxies in front of it send JSON as it is).
const chromiumAcceptEncoding = "gzip, deflate, br, zstd"

// overheadPath is one way to the same customer: its name in the figures and its requests.
type overheadPath struct {
	name  string
	build requestFunc
}

// Paths of the overhead group, in the order of the first round.
const (
	pathDirect = iota // the simulator itself
	pathBare          // httputil.ReverseProxy with the portal's transport
	pathPeer          // oauth2-proxy with its cookie session
	pathPortal        // the portal's customer page
	pathCount
)

// measureOverhead measures the main portal (its state in SQLite: overhead_*), then a second portal
// whose state is in a throwaway PostgreSQL cluster (overhead_postgres_*): the same paths, load and
// rounds.
func measureOverhead(ctx context.Context, l *lab, rep *report) error {
	if err := measureOverheadOf(ctx, l, rep, l.portal, "overhead_", true); err != nil {
		return err
	}
	cluster, err := statedbtest.NewCluster()
	if err != nil {
		return fmt.Errorf("postgres: a throwaway PostgreSQL: %w", err)
	}
	defer cluster.Remove()
	dbURL, err := freshPostgresDatabase(ctx, cluster.URL, "bench_overhead")
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	// A pprof build's listener (docs/performance.md): PPROF_ADDR is the main portal's, still running.
	env := []string{"PORTAL_DATABASE_URL=" + dbURL}
	if addr := os.Getenv("PPROF_ADDR_POSTGRES"); addr != "" {
		env = append(env, "PPROF_ADDR="+addr)
	}
	portal, err := l.newPortalFrom(ctx, "portal-postgres", l.portalBin, env)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer l.stopPortal(portal)
	return measureOverheadOf(ctx, l, rep, portal, "overhead_postgres_", false)
}

// freshPostgresDatabase creates the database name (dropped first if there) on the server of the
// superuser URL server and returns its URL.
func freshPostgresDatabase(ctx context.Context, server, name string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", err
	}
	admin, err := sql.Open("pgx", server)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	if err == nil {
		_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name)
	}
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// measureOverheadOf compares the customer detail page through portal (signed-in session, one v2
// call, templ render) with the same v2 call made directly, through a bare reverse proxy and through
// oauth2-proxy (signed in with its cookie), same load generator, same concurrency, interleaved. Its
// figures are named prefix+...; stages adds the per-stage breakdown (main portal only).
func measureOverheadOf(ctx context.Context, l *lab, rep *report, portal *portalEnv, prefix string, stages bool) error {
	user, err := signIn(ctx, portal, benchUser(1))
	if err != nil {
		return err
	}
	if err := checkPage(ctx, portal.url+customerDetailPath(1), user.cookie); err != nil {
		return pending("customer detail page: %v", err)
	}
	peerCookie, err := signInOAuth2Proxy(ctx, l.peerURL, benchUser(1))
	if err != nil {
		return err
	}

	customer := func(i int64) string { return strconv.FormatInt(1+i%overheadCustomerIDs, 10) }
	jsonCall := func(base string, header func(http.Header)) requestFunc {
		return func(ctx context.Context, i int64) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v2/customer/"+customer(i), nil)
			if err != nil {
				return nil, err
			}
			header(req.Header)
			req.Header.Set("Accept", "application/json")
			req.Header.Set("Accept-Encoding", chromiumAcceptEncoding)
			return req, nil
		}
	}
	bearer := func(h http.Header) { h.Set("Authorization", "Bearer "+user.accessToken) }
	paths := [pathCount]overheadPath{
		pathDirect: {"direct", jsonCall(l.simURL, bearer)},
		pathBare:   {"bare", jsonCall(l.proxyURL, bearer)},
		pathPeer:   {"oauth2_proxy", jsonCall(l.peerURL, func(h http.Header) { h.Set("Cookie", peerCookie) })},
		pathPortal: {"portal", func(ctx context.Context, i int64) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, portal.url+"/customers/"+customer(i), nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Cookie", user.cookie)
			req.Header.Set("Accept", "text/html")
			req.Header.Set("Accept-Encoding", chromiumAcceptEncoding)
			return req, nil
		}},
	}

	rounds, round, warmup, idleRound := overheadRounds, overheadRound, overheadWarmup, overheadIdleRound
	if l.opts.quick {
		rounds, round, warmup, idleRound = 2, time.Second, 500*time.Millisecond, 500*time.Millisecond
	}
	// results of one measurement: per path the merged sample, the CPU each process spent during its
	// rounds (where the machine's two cores go on each path) and each round's throughput.
	type result struct {
		samples  [pathCount]sample
		cpu      [pathCount]cpuUse
		roundRPS [pathCount][]float64
	}
	measure := func(workers, rounds int, round time.Duration) (result, error) {
		var res result
		gen := newLoadGen(workers)
		defer gen.close()
		for _, p := range paths {
			gen.round(ctx, warmup, p.build)
		}
		for r := range rounds {
			for k := range pathCount {
				idx := (k + r) % pathCount // rotated: each path takes each place in turn
				before := l.cpuSnapshot(portal)
				s := gen.round(ctx, round, paths[idx].build)
				res.cpu[idx].add(before, l.cpuSnapshot(portal))
				res.roundRPS[idx] = append(res.roundRPS[idx], s.rps())
				res.samples[idx].merge(s)
			}
		}
		for i, p := range paths {
			if err := res.samples[i].errorCheck(p.name); err != nil {
				return res, err
			}
		}
		return res, nil
	}

	c := l.opts.concurrent
	var res result
	err = profileDuring(ctx, l, portal, prefix, warmup*pathCount+time.Duration(rounds*pathCount)*round, func() error {
		var err error
		res, err = measure(c, rounds, round)
		return err
	})
	if err != nil {
		return err
	}
	perRequest := func(seconds float64, n int) float64 { return seconds * 1e6 / float64(max(n, 1)) }
	var p50 [pathCount]float64
	for i, p := range paths {
		s := res.samples[i]
		pct := percentiles(s.latencies, 50, 99)
		p50[i] = pct[0]
		rep.add(prefix+""+p.name+"_rps", s.rps(), "req/s")
		rep.add(prefix+""+p.name+"_p50_ms", pct[0], "ms")
		rep.add(prefix+""+p.name+"_p99_ms", pct[1], "ms")
		server := p.name
		if i == pathBare {
			server = "bare_proxy" // the name this figure had before the other paths came
		}
		if i != pathDirect { // on the direct path the simulator is the server
			rep.add(prefix+"cpu_us_per_req_"+server, perRequest(res.cpu[i].server, s.requests), "µs")
		}
		rep.add(prefix+"cpu_us_per_req_sim_"+p.name+"_path", perRequest(res.cpu[i].sim, s.requests), "µs")
		rep.add(prefix+"cpu_us_per_req_loadgen_"+p.name+"_path", perRequest(res.cpu[i].loadgen, s.requests), "µs")
	}
	mine, bare, peer := res.samples[pathPortal], res.samples[pathBare], res.samples[pathPeer]
	rep.add(prefix+"throughput_ratio", mine.rps()/bare.rps(), "ratio")
	rep.add(prefix+"added_p50_ms", p50[pathPortal]-p50[pathBare], "ms")
	rep.add(prefix+"oauth2_proxy_vs_bare_ratio", peer.rps()/bare.rps(), "ratio")
	rep.add(prefix+"portal_vs_oauth2_proxy_ratio", mine.rps()/peer.rps(), "ratio")
	// The peer target is per round: the portal ahead of oauth2-proxy in every one.
	ahead, worst := 0, 0.0
	for r := range res.roundRPS[pathPortal] {
		ratio := res.roundRPS[pathPortal][r] / res.roundRPS[pathPeer][r]
		if ratio > 1 {
			ahead++
		}
		if r == 0 || ratio < worst {
			worst = ratio
		}
	}
	rep.add(prefix+"rounds", float64(len(res.roundRPS[pathPortal])), "rounds")
	rep.add(prefix+"rounds_portal_ahead_of_oauth2_proxy", float64(ahead), "rounds")
	rep.add(prefix+"portal_vs_oauth2_proxy_worst_round_ratio", worst, "ratio")
	rep.add(prefix+"throughput_ratio_worst_round", slices.Min(roundRatios(res.roundRPS[pathPortal], res.roundRPS[pathBare])), "ratio")
	rep.add(prefix+"concurrency", float64(c), "workers")
	if stages {
		if err := measureStages(ctx, l, rep, c); err != nil {
			return fmt.Errorf("stages: %w", err)
		}
	}

	// One user on an idle portal: the latency the portal adds to a single click.
	res, err = measure(1, overheadIdleRounds, idleRound)
	if err != nil {
		return err
	}
	for i, p := range paths {
		pct := percentiles(res.samples[i].latencies, 50, 99)
		p50[i] = pct[0]
		rep.add(prefix+"c1_"+p.name+"_p50_ms", pct[0], "ms")
		rep.add(prefix+"c1_"+p.name+"_p99_ms", pct[1], "ms")
	}
	rep.add(prefix+"c1_added_p50_ms", p50[pathPortal]-p50[pathBare], "ms")
	return nil
}

// roundRatios divides a's throughput by b's, round by round.
func roundRatios(a, b []float64) []float64 {
	out := make([]float64, 0, len(a))
	for i := range min(len(a), len(b)) {
		out = append(out, a[i]/b[i])
	}
	if len(out) == 0 {
		return []float64{0}
	}
	return out
}

// checkPage fails unless GET target with the cookie answers 200 HTML.
func checkPage(ctx context.Context, target, cookie string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Cookie", cookie)
	client := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if err := doRead(client, req); err != nil {
		return fmt.Errorf("GET %s: %w", req.URL.Path, err)
	}
	return nil
}

// cpuSnapshot is the CPU time used so far by portal, the bare proxy, oauth2-proxy, the simulator
// and this process (the load generator); a process that cannot be read counts 0.
type cpuSnapshot struct{ portal, proxy, peer, sim, self float64 }

func (l *lab) cpuSnapshot(portal *portalEnv) cpuSnapshot {
	var s cpuSnapshot
	s.portal, _ = portal.proc.cpuSeconds()
	s.proxy, _ = l.proxy.cpuSeconds()
	if l.peer != nil {
		s.peer, _ = l.peer.cpuSeconds()
	}
	s.sim, _ = l.sim.cpuSeconds()
	s.self, _ = cpuSecondsOf("self")
	return s
}

// cpuUse sums CPU seconds over rounds of one path: server is the portal, the bare proxy or
// oauth2-proxy (whichever the path goes through; the others idle meanwhile).
type cpuUse struct{ server, sim, loadgen float64 }

func (u *cpuUse) add(before, after cpuSnapshot) {
	u.server += (after.portal - before.portal) + (after.proxy - before.proxy) + (after.peer - before.peer)
	u.sim += after.sim - before.sim
	u.loadgen += after.self - before.self
}

// profileDuring runs measure; with -profile it also writes portal's CPU profile over the next
// length (the portal idles while the other paths are measured, so its samples are its own
// rounds') and its allocation snapshots before and after, as <dir>/<prefix>cpu.pprof,
// <prefix>allocs_before.pprof and <prefix>allocs_after.pprof (`go tool pprof -sample_index
// alloc_space -base before after`).
func profileDuring(ctx context.Context, l *lab, portal *portalEnv, prefix string, length time.Duration, measure func() error) error {
	dir := l.opts.profile
	if dir == "" {
		return measure()
	}
	if portal.pprofURL == "" {
		return fmt.Errorf("-profile: %s has no pprof listener (a -portal-bin built without -tags pprof?)", portal.name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := func(name string) string { return filepath.Join(dir, prefix+name+".pprof") }
	if err := download(ctx, portal.pprofURL+"allocs", path("allocs_before")); err != nil {
		return fmt.Errorf("-profile: %w", err)
	}
	profiled := make(chan error, 1)
	go func() {
		seconds := int(length.Seconds()) + 1
		profiled <- download(ctx, portal.pprofURL+"profile?seconds="+strconv.Itoa(seconds), path("cpu"))
	}()
	err := measure()
	if perr := <-profiled; err == nil && perr != nil {
		err = fmt.Errorf("-profile: %w", perr)
	}
	if err != nil {
		return err
	}
	if err := download(ctx, portal.pprofURL+"allocs", path("allocs_after")); err != nil {
		return fmt.Errorf("-profile: %w", err)
	}
	return nil
}

// memorySnapshot writes, with -profile, what a resident-size figure is made of at the moment it
// was read: /proc/<pid>/smaps_rollup (<prefix>smaps_rollup.txt: Anonymous is the heap and the
// runtime's own memory, the rest of Rss the binary's mapped pages), the runtime's MemStats
// (<prefix>heap.txt: heap allocated, in use, idle, released) and then, after a collection, the
// live heap by where it was allocated (<prefix>heap.pprof). Without -profile it does nothing.
func memorySnapshot(ctx context.Context, l *lab, portal *portalEnv, prefix string) error {
	dir := l.opts.profile
	if dir == "" {
		return nil
	}
	if portal.pprofURL == "" {
		return fmt.Errorf("-profile: %s has no pprof listener (a -portal-bin built without -tags pprof?)", portal.name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", portal.proc.cmd.Process.Pid))
	if err != nil {
		return fmt.Errorf("-profile: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, prefix+"smaps_rollup.txt"), rollup, 0o644); err != nil {
		return err
	}
	if err := download(ctx, portal.pprofURL+"heap?debug=1", filepath.Join(dir, prefix+"heap.txt")); err != nil {
		return fmt.Errorf("-profile: %w", err)
	}
	if err := download(ctx, portal.pprofURL+"heap?gc=1", filepath.Join(dir, prefix+"heap.pprof")); err != nil {
		return fmt.Errorf("-profile: %w", err)
	}
	return nil
}
