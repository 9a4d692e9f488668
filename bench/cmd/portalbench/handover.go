package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

// Hand customers over (issue 34, docs/backoffice.md): 1,000 customers of one owner handed over to
// another, one PUT /v2/customer/{id}/owner/change each, against a simulator answering every call
// in handoverLatency. The simulator is this group's own (in this process): the lab's 100,000
// customers have their owners drawn at random, and a handover changes what the other groups read.

const (
	handoverCustomers = 1000
	handoverLatency   = 30 * time.Millisecond
	handoverUser      = 41
	// handoverFrom's customers go to handoverTo (owners of the simulator's directory, A8).
	handoverFrom, handoverTo = 1003, 1004
)

var (
	handoverDoneRe   = regexp.MustCompile(`data-testid="handover-done">(\d+)<`)
	handoverFailedRe = regexp.MustCompile(`data-testid="handover-failed">(\d+)<`)
	handoverActiveRe = regexp.MustCompile(`data-testid="handover-progress" data-active="(true|false)"`)
)

func measureHandover(ctx context.Context, l *lab, rep *report) error {
	n := handoverCustomers
	if l.opts.quick {
		n = 100
	}
	sim, simURL, stop, err := handoverSim(ctx, n)
	if err != nil {
		return err
	}
	defer stop()
	env, err := l.newPortalFrom(ctx, "portal-handover", l.portalBin, []string{"PORTAL_V2_API_URL=" + simURL})
	if err != nil {
		return err
	}
	defer l.stopPortal(env)
	u, err := signIn(ctx, env, benchUser(handoverUser))
	if err != nil {
		return err
	}
	client := &http.Client{
		Timeout:       10 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	// The page that lists the owner's customers (and loads the user's list for its owners).
	if _, err := getHTML(ctx, client, env.url+"/customers/handover?from="+strconv.Itoa(handoverFrom), u.cookie, false); err != nil {
		return err
	}
	post := func(path string, form url.Values) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.url+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Cookie", u.cookie)
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			return "", fmt.Errorf("POST %s: %s: %.300s", path, resp.Status, body)
		}
		return resp.Header.Get("Location"), nil
	}
	jobURL, err := post("/customers/handover", url.Values{"from": {strconv.Itoa(handoverFrom)}, "to": {strconv.Itoa(handoverTo)}})
	if err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := post(jobURL+"/start", url.Values{}); err != nil {
		return err
	}
	var done, failed int
	for {
		page, err := getHTML(ctx, client, env.url+jobURL+"/progress", u.cookie, true)
		if err != nil {
			return err
		}
		active := handoverActiveRe.FindSubmatch(page)
		if active == nil {
			return fmt.Errorf("no progress in %.300s", page)
		}
		if string(active[1]) == "false" {
			done, _ = strconv.Atoi(string(handoverDoneRe.FindSubmatch(page)[1]))
			failed, _ = strconv.Atoi(string(handoverFailedRe.FindSubmatch(page)[1]))
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	elapsed := time.Since(t0)
	if done != n || failed != 0 {
		return fmt.Errorf("handover of %d: %d done, %d failed", n, done, failed)
	}
	changes := 0
	for _, r := range sim.Requests() {
		if r.Method == http.MethodPut && strings.HasSuffix(r.EscapedPath, "/owner/change") && r.Status == http.StatusOK {
			changes++
		}
	}
	if changes != n {
		return fmt.Errorf("handover of %d: %d owner changes on the simulator", n, changes)
	}
	name := fmt.Sprintf("handover_%d", n)
	rep.add(name+"_seconds", elapsed.Seconds(), "s")
	rep.add(name+"_per_second", float64(n)/elapsed.Seconds(), "customers/s")
	return nil
}

// handoverSim serves a simulator of n+1 customers: n owned by handoverFrom alone, one by
// handoverTo (so the list names the new owner); every call then answers in handoverLatency.
func handoverSim(ctx context.Context, n int) (*v2sim.Server, string, func(), error) {
	sim := v2sim.New(v2sim.Options{Customers: n + 1, Seed: 1})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(listener) }()
	stop := func() { _ = srv.Close(); _ = sim.Close() }
	simURL := "http://" + listener.Addr().String()
	api, err := apiclient.New(simURL)
	if err != nil {
		stop()
		return nil, "", nil, err
	}
	callCtx := apiclient.WithToken(ctx, "bench")
	var ids []int32
	if _, _, err := api.Customers.ListItems(callCtx, "", func(it *apiclient.CustomerListItem) error {
		ids = append(ids, it.ID)
		return nil
	}); err != nil {
		stop()
		return nil, "", nil, err
	}
	if len(ids) != n+1 {
		stop()
		return nil, "", nil, fmt.Errorf("handover simulator: %d customers, want %d", len(ids), n+1)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 8)
	for i, id := range ids {
		owner := int64(handoverFrom)
		if i == n {
			owner = handoverTo
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := api.Customers.SetOwners(callCtx, id, []int64{owner}); err != nil {
				mu.Lock()
				firstErr = cmpErr(firstErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		stop()
		return nil, "", nil, fmt.Errorf("handover simulator: %w", firstErr)
	}
	sim.ResetRequests()
	sim.SetFault("*", v2sim.Fault{Delay: handoverLatency})
	return sim, simURL, stop, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
