package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
)

// Back office (docs/backoffice.md): a batch archive of 1,000 contracts against the simulator (total
// time, portal RSS), and the XLSX export of 100,000 customers (time, peak RSS during the export).

const (
	batchContracts     = 1000
	backofficeUser     = 40
	exportPeakTargetMB = 64
)

var (
	batchDoneRe   = regexp.MustCompile(`data-testid="batch-done">(\d+)<`)
	batchFailedRe = regexp.MustCompile(`data-testid="batch-failed">(\d+)<`)
	batchStatusRe = regexp.MustCompile(`data-testid="batch-progress" data-status="([^"]*)"`)
)

func measureBackoffice(ctx context.Context, l *lab, rep *report) error {
	n := batchContracts
	if l.opts.quick {
		n = 100
	}
	env, err := l.newPortal(ctx, "portal-backoffice")
	if err != nil {
		return err
	}
	defer l.stopPortal(env)
	u, err := signIn(ctx, env, benchUser(backofficeUser))
	if err != nil {
		return err
	}
	numbers, err := makeContracts(ctx, l, u.accessToken, n)
	if err != nil {
		return err
	}
	client := &http.Client{
		Timeout:       10 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
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
	// The contracts are only generated: included explicitly, as the check leaves out contracts never
	// sent for signature by default (docs/backoffice.md).
	batchURL, err := post("/contracts/batch-archive", url.Values{"numbers": {strings.Join(numbers, "\n")}, "include_unsent": {"1"}})
	if err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := post(batchURL+"/start", url.Values{}); err != nil {
		return err
	}
	var done, failed int
	for {
		page, err := getHTML(ctx, client, env.url+batchURL+"/progress", u.cookie, true)
		if err != nil {
			return err
		}
		status := batchStatusRe.FindSubmatch(page)
		if status == nil {
			return fmt.Errorf("no progress in %.300s", page)
		}
		if s := string(status[1]); strings.HasPrefix(s, "Finished") || s == "Cancelled" {
			done, _ = strconv.Atoi(string(batchDoneRe.FindSubmatch(page)[1]))
			failed, _ = strconv.Atoi(string(batchFailedRe.FindSubmatch(page)[1]))
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
		return fmt.Errorf("batch of %d: %d done, %d failed", n, done, failed)
	}
	rss, err := env.proc.memoryMB("VmRSS")
	if err != nil {
		return err
	}
	peak, err := env.proc.memoryMB("VmHWM")
	if err != nil {
		return err
	}
	name := fmt.Sprintf("backoffice_batch_%d", n)
	rep.add(name+"_seconds", elapsed.Seconds(), "s")
	rep.add(name+"_per_second", float64(n)/elapsed.Seconds(), "contracts/s")
	rep.add(name+"_portal_rss_mb", rss, "MiB")
	rep.add(name+"_portal_peak_rss_mb", peak, "MiB")

	// The export: the user's list of 100,000 customers is cached first (the list page), then the
	// peak resident size is reset, so the figure is what the export itself needs on top.
	if err := loadCustomerList(ctx, client, env.url, u.cookie); err != nil {
		return err
	}
	if err := resetPeakRSS(env.proc); err != nil {
		return err
	}
	before, err := env.proc.memoryMB("VmRSS")
	if err != nil {
		return err
	}
	t0 = time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.url+"/customers/export?format=xlsx&sort=name&dir=asc", nil)
	req.Header.Set("Cookie", u.cookie)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	head := make([]byte, 4)
	_, _ = io.ReadFull(resp.Body, head)
	size, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	exportTime := time.Since(t0)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(head, []byte("PK\x03\x04")) {
		return fmt.Errorf("export: %s, not an XLSX", resp.Status)
	}
	exportPeak, err := env.proc.memoryMB("VmHWM")
	if err != nil {
		return err
	}
	rep.add("backoffice_export_xlsx_100k_seconds", exportTime.Seconds(), "s")
	rep.add("backoffice_export_xlsx_100k_mb", float64(size+4)/(1<<20), "MiB")
	rep.add("backoffice_export_rss_before_mb", before, "MiB")
	rep.add("backoffice_export_xlsx_100k_peak_rss_mb", exportPeak, "MiB")
	if exportPeak >= exportPeakTargetMB {
		fmt.Fprintf(l.stderr, "portalbench: backoffice: the export's peak RSS %.1f MiB is over the %d MiB target\n", exportPeak, exportPeakTargetMB)
	}
	return nil
}

// resetPeakRSS resets the process's VmHWM (Linux: writing 5 to /proc/<pid>/clear_refs).
func resetPeakRSS(p *proc) error {
	path := fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid)
	if err := os.WriteFile(path, []byte("5"), 0); err != nil {
		return fmt.Errorf("reset the peak RSS: %w", err)
	}
	return nil
}

// makeContracts makes n contracts of customer 1 (configurator 1) on the simulator: one session,
// then a quote with one cart and its contract each, 8 at a time.
func makeContracts(ctx context.Context, l *lab, token string, n int) ([]string, error) {
	api, err := l.v2Client()
	if err != nil {
		return nil, err
	}
	ctx = apiclient.WithToken(ctx, token)
	const cpqID, customerID = 1, 1
	init, err := api.CPQ.Init(ctx, cpqID, customerID)
	if err != nil || len(init.TOFList) == 0 {
		return nil, fmt.Errorf("bench contracts: init: %v", err)
	}
	tof := init.TOFList[0]
	products, err := api.CPQ.ValidProducts(ctx, init.SessionID, cpqID, tof.ID)
	if err != nil {
		return nil, fmt.Errorf("bench contracts: %w", err)
	}
	main := pickProduct(products, "MAIN", 0)
	if main == nil {
		return nil, errors.New("bench contracts: no main product")
	}
	numbers := make([]string, n)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int)
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				q, err := api.CPQ.AddCart(ctx, init.SessionID, cpqID, tof.ID, apiclient.AddCartRequest{
					ProductID: main.ProductID, TOFProductID: main.TOFProductID, CustomerID: customerID, Label: "Bench batch"})
				var res *apiclient.GenerateResult
				if err == nil {
					res, err = api.Contracts.Generate(ctx, q.QuoteID)
				}
				if err == nil && res.PDF != nil {
					res.PDF.Close()
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("bench contracts: %w", err)
				} else if err == nil {
					numbers[i] = res.ContractNumber
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return numbers, firstErr
}
