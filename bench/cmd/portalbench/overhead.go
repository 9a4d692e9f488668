package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Overhead rounds (docs/performance.md): warm-up, then alternating short rounds of each path, the order
// swapped every round (portal, bare, bare, portal, ...) so that drift of the machine falls on both.
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

// measureOverhead compares the customer detail page through the portal (signed-in session, one v2
// call, templ render) with the same v2 call through a bare reverse proxy, same load generator, same
// concurrency, interleaved.
func measureOverhead(ctx context.Context, l *lab, rep *report) error {
	user, err := signIn(ctx, l.portal, benchUser(1))
	if err != nil {
		return err
	}
	if err := checkPage(ctx, l.portal.url+customerDetailPath(1), user.cookie); err != nil {
		return pending("customer detail page: %v", err)
	}

	portalReq := func(ctx context.Context, i int64) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.portal.url+customerDetailPath(1+i%overheadCustomerIDs), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Cookie", user.cookie)
		req.Header.Set("Accept", "text/html")
		req.Header.Set("Accept-Encoding", "gzip")
		return req, nil
	}
	bareReq := func(ctx context.Context, i int64) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet,
			l.proxyURL+"/v2/customer/"+strconv.FormatInt(1+i%overheadCustomerIDs, 10), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+user.accessToken)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Accept-Encoding", "gzip")
		return req, nil
	}

	rounds, round, warmup, idleRound := overheadRounds, overheadRound, overheadWarmup, overheadIdleRound
	if l.opts.quick {
		rounds, round, warmup, idleRound = 2, time.Second, 500*time.Millisecond, 500*time.Millisecond
	}
	// CPU seconds each process spent during the portal rounds and during the bare rounds: where the
	// machine's two cores go on each path.
	var portalCPU, bareCPU cpuUse
	measure := func(workers, rounds int, round time.Duration) (portal, bare sample, err error) {
		gen := newLoadGen(workers)
		defer gen.close()
		gen.round(ctx, warmup, portalReq)
		gen.round(ctx, warmup, bareReq)
		for r := range rounds {
			for _, isPortal := range []bool{r%2 == 0, r%2 == 1} {
				before := l.cpuSnapshot()
				if isPortal {
					portal.merge(gen.round(ctx, round, portalReq))
					portalCPU.add(before, l.cpuSnapshot())
				} else {
					bare.merge(gen.round(ctx, round, bareReq))
					bareCPU.add(before, l.cpuSnapshot())
				}
			}
		}
		if err := portal.errorCheck("portal"); err != nil {
			return portal, bare, err
		}
		return portal, bare, bare.errorCheck("bare proxy")
	}

	c := l.opts.concurrent
	portal, bare, err := measure(c, rounds, round)
	if err != nil {
		return err
	}
	pp := percentiles(portal.latencies, 50, 99)
	bp := percentiles(bare.latencies, 50, 99)
	rep.add("overhead_portal_rps", portal.rps(), "req/s")
	rep.add("overhead_bare_rps", bare.rps(), "req/s")
	rep.add("overhead_throughput_ratio", portal.rps()/bare.rps(), "ratio")
	rep.add("overhead_portal_p50_ms", pp[0], "ms")
	rep.add("overhead_portal_p99_ms", pp[1], "ms")
	rep.add("overhead_bare_p50_ms", bp[0], "ms")
	rep.add("overhead_bare_p99_ms", bp[1], "ms")
	rep.add("overhead_added_p50_ms", pp[0]-bp[0], "ms")
	rep.add("overhead_concurrency", float64(c), "workers")
	perRequest := func(seconds float64, n int) float64 { return seconds * 1e6 / float64(max(n, 1)) }
	rep.add("overhead_cpu_us_per_req_portal", perRequest(portalCPU.server, portal.requests), "µs")
	rep.add("overhead_cpu_us_per_req_bare_proxy", perRequest(bareCPU.server, bare.requests), "µs")
	rep.add("overhead_cpu_us_per_req_sim_portal_path", perRequest(portalCPU.sim, portal.requests), "µs")
	rep.add("overhead_cpu_us_per_req_sim_bare_path", perRequest(bareCPU.sim, bare.requests), "µs")
	rep.add("overhead_cpu_us_per_req_loadgen_portal_path", perRequest(portalCPU.loadgen, portal.requests), "µs")
	rep.add("overhead_cpu_us_per_req_loadgen_bare_path", perRequest(bareCPU.loadgen, bare.requests), "µs")

	// One user on an idle portal: the latency the portal adds to a single click.
	portalCPU, bareCPU = cpuUse{}, cpuUse{}
	portal, bare, err = measure(1, overheadIdleRounds, idleRound)
	if err != nil {
		return err
	}
	pp = percentiles(portal.latencies, 50, 99)
	bp = percentiles(bare.latencies, 50, 99)
	rep.add("overhead_c1_portal_p50_ms", pp[0], "ms")
	rep.add("overhead_c1_bare_p50_ms", bp[0], "ms")
	rep.add("overhead_c1_added_p50_ms", pp[0]-bp[0], "ms")
	rep.add("overhead_c1_portal_p99_ms", pp[1], "ms")
	rep.add("overhead_c1_bare_p99_ms", bp[1], "ms")
	return nil
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

// cpuSnapshot is the CPU time used so far by the portal, the bare proxy, the simulator and this
// process (the load generator); a process that cannot be read counts 0.
type cpuSnapshot struct{ portal, proxy, sim, self float64 }

func (l *lab) cpuSnapshot() cpuSnapshot {
	var s cpuSnapshot
	s.portal, _ = l.portal.proc.cpuSeconds()
	s.proxy, _ = l.proxy.cpuSeconds()
	s.sim, _ = l.sim.cpuSeconds()
	s.self, _ = cpuSecondsOf("self")
	return s
}

// cpuUse sums CPU seconds over rounds of one path: server is the portal or the bare proxy.
type cpuUse struct{ server, sim, loadgen float64 }

func (u *cpuUse) add(before, after cpuSnapshot) {
	u.server += (after.portal - before.portal) + (after.proxy - before.proxy)
	u.sim += after.sim - before.sim
	u.loadgen += after.self - before.self
}
