package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// loadGen is the in-repo load generator: n workers, each with its own keep-alive client (one
// connection each, kept across rounds), sending requests back to back for a fixed duration and
// recording every latency.
type loadGen struct {
	clients []*http.Client
}

func newLoadGen(workers int) *loadGen {
	g := &loadGen{}
	for range workers {
		g.clients = append(g.clients, &http.Client{
			Transport: &http.Transport{
				MaxIdleConnsPerHost: 1,
				IdleConnTimeout:     5 * time.Minute,
				// Accept-Encoding is set by the request builder (as a browser does) and the
				// compressed bytes are read as they come.
				DisableCompression: true,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       30 * time.Second,
		})
	}
	return g
}

func (g *loadGen) close() {
	for _, c := range g.clients {
		c.CloseIdleConnections()
	}
}

// sample is the outcome of one round.
type sample struct {
	requests  int
	errors    int
	firstErr  error
	elapsed   time.Duration
	latencies []time.Duration
}

func (s *sample) merge(o sample) {
	s.requests += o.requests
	s.errors += o.errors
	if s.firstErr == nil {
		s.firstErr = o.firstErr
	}
	s.elapsed += o.elapsed
	s.latencies = append(s.latencies, o.latencies...)
}

// rps is requests per second over the rounds merged into s.
func (s *sample) rps() float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.requests) / s.elapsed.Seconds()
}

// errorCheck fails when more than one request in a thousand failed (a benchmark of errors measures
// nothing).
func (s *sample) errorCheck(name string) error {
	if s.requests == 0 {
		return fmt.Errorf("%s: no request completed (%v)", name, s.firstErr)
	}
	if s.errors*1000 > s.requests {
		return fmt.Errorf("%s: %d of %d requests failed, first: %v", name, s.errors, s.requests, s.firstErr)
	}
	return nil
}

// requestFunc builds the i-th request of a round.
type requestFunc func(ctx context.Context, i int64) (*http.Request, error)

// round sends requests from every worker for d and returns what happened. A request counts when it
// answered 200 and its body was read to the end.
func (g *loadGen) round(ctx context.Context, d time.Duration, build requestFunc) sample {
	var next atomic.Int64
	results := make([]sample, len(g.clients))
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w, client := range g.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[w]
			res.latencies = make([]time.Duration, 0, 4096)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				req, err := build(ctx, next.Add(1))
				if err != nil {
					res.errors++
					res.firstErr = err
					return
				}
				t0 := time.Now()
				err = doRead(client, req)
				lat := time.Since(t0)
				res.requests++
				if err != nil {
					res.errors++
					if res.firstErr == nil {
						res.firstErr = err
					}
					continue
				}
				res.latencies = append(res.latencies, lat)
			}
		}()
	}
	wg.Wait()
	total := sample{elapsed: time.Since(start)}
	for _, r := range results {
		total.requests += r.requests
		total.errors += r.errors
		if total.firstErr == nil {
			total.firstErr = r.firstErr
		}
		total.latencies = append(total.latencies, r.latencies...)
	}
	return total
}

// doRead sends req, reads the whole body and fails on any status but 200.
func doRead(client *http.Client, req *http.Request) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
	}
	return nil
}

// percentiles returns the p-th percentiles (0 < p <= 100, nearest rank) of latencies, in ms.
func percentiles(latencies []time.Duration, ps ...float64) []float64 {
	out := make([]float64, len(ps))
	if len(latencies) == 0 {
		return out
	}
	sorted := slices.Clone(latencies)
	slices.Sort(sorted)
	for i, p := range ps {
		rank := int(float64(len(sorted))*p/100+0.999999) - 1
		rank = max(0, min(rank, len(sorted)-1))
		out[i] = float64(sorted[rank]) / float64(time.Millisecond)
	}
	return out
}

// timeIt runs fn n times and returns each duration.
func timeIt(n int, fn func(i int) error) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for i := range n {
		t0 := time.Now()
		if err := fn(i); err != nil {
			return out, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}
