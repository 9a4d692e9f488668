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

// The reference paths of the overhead group, in the order of the first round; the portals' paths
// follow them (one per overheadPortal).
const (
	pathDirect = iota // the simulator itself
	pathBare          // httputil.ReverseProxy with the portal's transport
	pathPeer          // oauth2-proxy with its cookie session
	referencePaths
)

// overheadPortal is one portal the overhead group measures: its figures are named prefix+...;
// stages adds the per-stage breakdown (the main portal only).
type overheadPortal struct {
	env    *portalEnv
	prefix string
	stages bool
}

// measureOverhead measures the main portal (its state in SQLite: overhead_*) and a second portal
// whose state is in a throwaway PostgreSQL cluster (overhead_postgres_*) in the same rounds: each
// round runs the three reference paths once and each portal's page once, so both portals are
// compared with the same reference samples, under the same drift of the machine, and the
// reference paths are not measured twice (about 80 s of the group's time).
func measureOverhead(ctx context.Context, l *lab, rep *report) error {
	cluster, err := statedbtest.NewCluster()
	if err != nil {
		return fmt.Errorf("postgres: a throwaway PostgreSQL: %w", err)
	}
	defer cluster.Remove()
	dbURL, err := freshPostgresDatabase(ctx, cluster.URL, "bench_overhead")
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	// A pprof build's listener (docs/performance.md): PPROF_ADDR is the main portal's.
	env := []string{"PORTAL_DATABASE_URL=" + dbURL}
	if addr := os.Getenv("PPROF_ADDR_POSTGRES"); addr != "" {
		env = append(env, "PPROF_ADDR="+addr)
	}
	portal, err := l.newPortalFrom(ctx, "portal-postgres", l.portalBin, env)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer l.stopPortal(portal)
	return measureOverheadOf(ctx, l, rep, []overheadPortal{
		{env: l.portal, prefix: "overhead_", stages: true},
		{env: portal, prefix: "overhead_postgres_"},
	})
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

// measureOverheadOf compares the customer detail page through each portal (signed-in session,
// one v2 call, templ render) with the same v2 call made directly, through a bare reverse proxy
// and through oauth2-proxy (signed in with its cookie), same load generator, same concurrency,
// interleaved.
func measureOverheadOf(ctx context.Context, l *lab, rep *report, portals []overheadPortal) error {
	peerCookie, err := signInOAuth2Proxy(ctx, l.peerURL, benchUser(1))
	if err != nil {
		return err
	}
	customer := func(i int64) string { return strconv.FormatInt(1+i%overheadCustomerIDs, 10) }
	paths := make([]overheadPath, referencePaths, referencePaths+len(portals))
	envs := make([]*portalEnv, 0, len(portals))
	var accessToken string
	for _, p := range portals {
		user, err := signIn(ctx, p.env, benchUser(1))
		if err != nil {
			return err
		}
		if err := checkPage(ctx, p.env.url+customerDetailPath(1), user.cookie); err != nil {
			return pending("customer detail page: %v", err)
		}
		if accessToken == "" {
			accessToken = user.accessToken
		}
		base := p.env.url
		paths = append(paths, overheadPath{p.prefix + "portal", func(ctx context.Context, i int64) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/customers/"+customer(i), nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Cookie", user.cookie)
			req.Header.Set("Accept", "text/html")
			req.Header.Set("Accept-Encoding", chromiumAcceptEncoding)
			return req, nil
		}})
		envs = append(envs, p.env)
	}
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
	bearer := func(h http.Header) { h.Set("Authorization", "Bearer "+accessToken) }
	paths[pathDirect] = overheadPath{"direct", jsonCall(l.simURL, bearer)}
	paths[pathBare] = overheadPath{"bare", jsonCall(l.proxyURL, bearer)}
	paths[pathPeer] = overheadPath{"oauth2_proxy", jsonCall(l.peerURL, func(h http.Header) { h.Set("Cookie", peerCookie) })}

	rounds, round, warmup, idleRound := overheadRounds, overheadRound, overheadWarmup, overheadIdleRound
	if l.opts.quick {
		rounds, round, warmup, idleRound = 2, time.Second, 500*time.Millisecond, 500*time.Millisecond
	}
	// results of one measurement: per path the merged sample, the CPU each process spent during its
	// rounds (where the machine's two cores go on each path) and each round's throughput.
	type result struct {
		samples  []sample
		cpu      []cpuUse
		roundRPS [][]float64
	}
	measure := func(workers, rounds int, round time.Duration) (result, error) {
		res := result{samples: make([]sample, len(paths)), cpu: make([]cpuUse, len(paths)), roundRPS: make([][]float64, len(paths))}
		gen := newLoadGen(workers)
		defer gen.close()
		for _, p := range paths {
			gen.round(ctx, warmup, p.build)
		}
		for r := range rounds {
			for k := range paths {
				idx := (k + r) % len(paths) // rotated: each path takes each place in turn
				before := l.cpuSnapshot(envs)
				s := gen.round(ctx, round, paths[idx].build)
				res.cpu[idx].add(before, l.cpuSnapshot(envs))
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
	err = profileDuring(ctx, l, portals, warmup*time.Duration(len(paths))+time.Duration(rounds*len(paths))*round, func() error {
		var err error
		res, err = measure(c, rounds, round)
		return err
	})
	if err != nil {
		return err
	}
	perRequest := func(seconds float64, n int) float64 { return seconds * 1e6 / float64(max(n, 1)) }
	percentile50 := func(i int) float64 { return percentiles(res.samples[i].latencies, 50)[0] }
	for k, p := range portals {
		mine := referencePaths + k
		for _, i := range []int{pathDirect, pathBare, pathPeer, mine} {
			s := res.samples[i]
			name := paths[i].name
			if i == mine {
				name = "portal"
			}
			pct := percentiles(s.latencies, 50, 99)
			rep.add(p.prefix+name+"_rps", s.rps(), "req/s")
			rep.add(p.prefix+name+"_p50_ms", pct[0], "ms")
			rep.add(p.prefix+name+"_p99_ms", pct[1], "ms")
			server := name
			if i == pathBare {
				server = "bare_proxy" // the name this figure had before the other paths came
			}
			if i != pathDirect { // on the direct path the simulator is the server
				rep.add(p.prefix+"cpu_us_per_req_"+server, perRequest(res.cpu[i].server, s.requests), "µs")
			}
			rep.add(p.prefix+"cpu_us_per_req_sim_"+name+"_path", perRequest(res.cpu[i].sim, s.requests), "µs")
			rep.add(p.prefix+"cpu_us_per_req_loadgen_"+name+"_path", perRequest(res.cpu[i].loadgen, s.requests), "µs")
		}
		portal, bare, peer := res.samples[mine], res.samples[pathBare], res.samples[pathPeer]
		rep.add(p.prefix+"throughput_ratio", portal.rps()/bare.rps(), "ratio")
		rep.add(p.prefix+"added_p50_ms", percentile50(mine)-percentile50(pathBare), "ms")
		rep.add(p.prefix+"oauth2_proxy_vs_bare_ratio", peer.rps()/bare.rps(), "ratio")
		rep.add(p.prefix+"portal_vs_oauth2_proxy_ratio", portal.rps()/peer.rps(), "ratio")
		// The peer target is per round: the portal ahead of oauth2-proxy in every one.
		ratios := roundRatios(res.roundRPS[mine], res.roundRPS[pathPeer])
		ahead := 0
		for _, ratio := range ratios {
			if ratio > 1 {
				ahead++
			}
		}
		rep.add(p.prefix+"rounds", float64(len(res.roundRPS[mine])), "rounds")
		rep.add(p.prefix+"rounds_portal_ahead_of_oauth2_proxy", float64(ahead), "rounds")
		rep.add(p.prefix+"portal_vs_oauth2_proxy_worst_round_ratio", slices.Min(ratios), "ratio")
		rep.add(p.prefix+"throughput_ratio_worst_round", slices.Min(roundRatios(res.roundRPS[mine], res.roundRPS[pathBare])), "ratio")
		rep.add(p.prefix+"concurrency", float64(c), "workers")
	}
	for _, p := range portals {
		if p.stages {
			if err := measureStages(ctx, l, rep, c); err != nil {
				return fmt.Errorf("stages: %w", err)
			}
		}
	}

	// One user on an idle portal: the latency the portal adds to a single click.
	res, err = measure(1, overheadIdleRounds, idleRound)
	if err != nil {
		return err
	}
	for k, p := range portals {
		mine := referencePaths + k
		for _, i := range []int{pathDirect, pathBare, pathPeer, mine} {
			name := paths[i].name
			if i == mine {
				name = "portal"
			}
			pct := percentiles(res.samples[i].latencies, 50, 99)
			rep.add(p.prefix+"c1_"+name+"_p50_ms", pct[0], "ms")
			rep.add(p.prefix+"c1_"+name+"_p99_ms", pct[1], "ms")
		}
		rep.add(p.prefix+"c1_added_p50_ms", percentile50(mine)-percentile50(pathBare), "ms")
	}
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

// cpuSnapshot is the CPU time used so far by the portals, the bare proxy, oauth2-proxy, the simulator
// and this process (the load generator); a process that cannot be read counts 0.
type cpuSnapshot struct{ portal, proxy, peer, sim, self float64 }

func (l *lab) cpuSnapshot(portals []*portalEnv) cpuSnapshot {
	var s cpuSnapshot
	for _, p := range portals {
		cpu, _ := p.proc.cpuSeconds()
		s.portal += cpu
	}
	s.proxy, _ = l.proxy.cpuSeconds()
	if l.peer != nil {
		s.peer, _ = l.peer.cpuSeconds()
	}
	s.sim, _ = l.sim.cpuSeconds()
	s.self, _ = cpuSecondsOf("self")
	return s
}

// cpuUse sums CPU seconds over rounds of one path: server is the portals, the bare proxy and
// oauth2-proxy (the path goes through one of them; the others idle meanwhile).
type cpuUse struct{ server, sim, loadgen float64 }

func (u *cpuUse) add(before, after cpuSnapshot) {
	u.server += (after.portal - before.portal) + (after.proxy - before.proxy) + (after.peer - before.peer)
	u.sim += after.sim - before.sim
	u.loadgen += after.self - before.self
}

// profileDuring runs measure; with -profile it also writes each portal's CPU profile over the
// next length (a portal idles while the other paths are measured, so its samples are its own
// rounds') and its allocation snapshots before and after, as <dir>/<prefix>cpu.pprof,
// <prefix>allocs_before.pprof and <prefix>allocs_after.pprof (`go tool pprof -sample_index
// alloc_space -base before after`).
func profileDuring(ctx context.Context, l *lab, portals []overheadPortal, length time.Duration, measure func() error) error {
	dir := l.opts.profile
	if dir == "" {
		return measure()
	}
	for _, p := range portals {
		if p.env.pprofURL == "" {
			return fmt.Errorf("-profile: %s has no pprof listener (a -portal-bin built without -tags pprof?)", p.env.name)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := func(p overheadPortal, name string) string { return filepath.Join(dir, p.prefix+name+".pprof") }
	for _, p := range portals {
		if err := download(ctx, p.env.pprofURL+"allocs", path(p, "allocs_before")); err != nil {
			return fmt.Errorf("-profile: %w", err)
		}
	}
	profiled := make(chan error, len(portals))
	for _, p := range portals {
		go func() {
			seconds := int(length.Seconds()) + 1
			profiled <- download(ctx, p.env.pprofURL+"profile?seconds="+strconv.Itoa(seconds), path(p, "cpu"))
		}()
	}
	err := measure()
	for range portals {
		if perr := <-profiled; err == nil && perr != nil {
			err = fmt.Errorf("-profile: %w", perr)
		}
	}
	if err != nil {
		return err
	}
	for _, p := range portals {
		if err := download(ctx, p.env.pprofURL+"allocs", path(p, "allocs_after")); err != nil {
			return fmt.Errorf("-profile: %w", err)
		}
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
