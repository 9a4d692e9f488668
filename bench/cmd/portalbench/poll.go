package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Live notice polling (issue 18): how many upstream reads 100 viewers of one quote cause on one
// replica. Each viewer polls GET .../changes every 1.5 s (as app.js does while the tab is visible)
// with If-None-Match: the page's change tag; the quote does not change meanwhile. The simulator's
// request log (-admin) counts the reads of call 10 the portal made.

const (
	pollViewers  = 100
	pollEvery    = 1500 * time.Millisecond
	pollInterval = 2 * time.Second // the portal's liveNoticeInterval (internal/handlers/handler.go)
)

// measurePolling reports live_poll_upstream_reads_per_interval_100_viewers and what the viewers saw.
func measurePolling(ctx context.Context, l *lab, rep *report) error {
	user, err := signIn(ctx, l.portal, benchUser(6))
	if err != nil {
		return err
	}
	browser, err := user.browser(l.portal.url)
	if err != nil {
		return err
	}
	q, err := newBenchQuote(ctx, l, user)
	if err != nil {
		return err
	}
	page := l.portal.url + q.pagePath()
	_, body, err := portalAction(ctx, browser, http.MethodGet, page, nil, l.portal.url)
	if err != nil {
		return pending("quote page: %v", err)
	}
	m := digestPattern.FindSubmatch(body)
	if m == nil {
		return pending("the quote page has no change tag (#quote-digest data-tag)")
	}
	tag := string(m[2])

	duration := 20 * time.Second
	if l.opts.quick {
		duration = 6 * time.Second
	}
	if err := simAdmin(ctx, l, http.MethodPost, "/_sim/reset-requests", nil); err != nil {
		return err
	}
	var polls, notModified, failed atomic.Int64
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for range pollViewers {
		wg.Go(func() {
			// Viewers opened the page at different moments.
			time.Sleep(rand.N(pollEvery))
			for time.Now().Before(deadline) && ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, page+"/changes", nil)
				req.Header.Set("If-None-Match", `"`+tag+`"`)
				req.Header.Set("HX-Request", "true")
				resp, err := browser.Do(req)
				polls.Add(1)
				if err != nil {
					failed.Add(1)
				} else {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusNotModified {
						notModified.Add(1)
					} else {
						failed.Add(1)
					}
				}
				time.Sleep(pollEvery)
			}
		})
	}
	wg.Wait()
	var reads []json.RawMessage
	if err := simAdmin(ctx, l, http.MethodGet, "/_sim/requests?endpoint=cpq.toflist", &reads); err != nil {
		return err
	}
	if failed.Load() > 0 {
		return fmt.Errorf("%d of %d polls did not answer 304", failed.Load(), polls.Load())
	}
	intervals := duration.Seconds() / pollInterval.Seconds()
	rep.add("live_poll_upstream_reads_per_interval_100_viewers", float64(len(reads))/intervals, "reads")
	rep.add("live_poll_upstream_reads_per_hour_100_viewers", float64(len(reads))*3600/duration.Seconds(), "reads/h")
	rep.add("live_poll_requests_per_second_100_viewers", float64(polls.Load())/duration.Seconds(), "req/s")
	rep.add("live_poll_not_modified_ratio", float64(notModified.Load())/float64(max(polls.Load(), 1)), "")
	return measureIdlePolling(ctx, l, rep, browser, page, tag)
}

// measureIdlePolling: the same 100 viewers, all idle (app.js: no input for 2 minutes, or a hidden
// tab), each polling once a minute with idle=1 at its own moment of the minute (issue 27). The
// figure is the v2 reads an hour this costs; one idle page alone costs at most one read a minute
// (its one poll), 60 an hour, by construction of the cadence.
func measureIdlePolling(ctx context.Context, l *lab, rep *report, browser *http.Client, page, tag string) error {
	window := time.Minute
	if l.opts.quick {
		window = 10 * time.Second
	}
	// The first read after the active run's last one is the shared read of the minute.
	time.Sleep(pollInterval)
	if err := simAdmin(ctx, l, http.MethodPost, "/_sim/reset-requests", nil); err != nil {
		return err
	}
	var failed atomic.Int64
	var wg sync.WaitGroup
	for range pollViewers {
		wg.Go(func() {
			time.Sleep(rand.N(window))
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, page+"/changes?idle=1", nil)
			req.Header.Set("If-None-Match", `"`+tag+`"`)
			req.Header.Set("HX-Request", "true")
			resp, err := browser.Do(req)
			if err != nil {
				failed.Add(1)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotModified {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		return fmt.Errorf("%d of %d idle polls did not answer 304", failed.Load(), pollViewers)
	}
	var reads []json.RawMessage
	if err := simAdmin(ctx, l, http.MethodGet, "/_sim/requests?endpoint=cpq.toflist", &reads); err != nil {
		return err
	}
	rep.add("live_poll_idle_upstream_reads_per_hour_100_viewers", float64(len(reads))*3600/window.Seconds(), "reads/h")
	rep.add("live_poll_idle_upstream_reads_per_hour_one_page", 3600/idlePollEvery.Seconds(), "reads/h")
	return nil
}

// idlePollEvery is app.js's pace of an idle or hidden page (SLOW_MS).
const idlePollEvery = time.Minute

// simAdmin calls the simulator's control API (the lab starts it with -admin); out, when set,
// receives the JSON answer.
func simAdmin(ctx context.Context, l *lab, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, l.simURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("simulator %s %s: %s", method, path, resp.Status)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
