package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Import customers (issue 34, docs/backoffice.md): a 10,000-line CSV uploaded, its dry run, then
// its run (one POST /v2/customer a line, PORTAL_BATCH_CONCURRENCY at a time) against a simulator
// answering every call in handoverLatency (30 ms): import_10000_seconds is the run (from the Run button to
// the last line), import_10000_peak_rss_mb the portal's peak RSS (VmHWM, reset before the upload)
// over the upload, the dry run and the run. The simulator is the group's own, as the handover's.
// import_mapping_10000_rows_ms (issue 41) is the mapping step and the dry run of the uploaded file:
// its mapping page shown, the proposed mapping confirmed, every line read through it and checked.

const (
	importLines = 10_000
	importUser  = 42
)

var (
	importCreatedRe = regexp.MustCompile(`data-testid="import-run-created">(\d+)<`)
	importFailedRe  = regexp.MustCompile(`data-testid="import-run-failed">(\d+)<`)
	importActiveRe  = regexp.MustCompile(`data-testid="import-run-progress" data-active="(true|false)"`)
)

func measureImport(ctx context.Context, l *lab, rep *report) error {
	n := importLines
	if l.opts.quick {
		n = 500
	}
	// handoverSim's simulator: one customer besides the import's, every call answered in 30 ms.
	sim, simURL, stop, err := handoverSim(ctx, 1)
	if err != nil {
		return err
	}
	defer stop()
	// The bench users are reps ("sales"); the import is the back office's tool by default.
	env, err := l.newPortalFrom(ctx, "portal-import", l.portalBin, []string{"PORTAL_V2_API_URL=" + simURL})
	if err != nil {
		return err
	}
	defer l.stopPortal(env)
	u, err := signIn(ctx, env, benchUser(importUser))
	if err != nil {
		return err
	}
	client := &http.Client{
		Timeout:       10 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	var file bytes.Buffer
	file.WriteString("Name;Tax id;Segment;City;Country\n")
	for i := range n {
		fmt.Fprintf(&file, "Bench Import %05d S.r.l.;ZB%09d;Business;City %d;IT\n", i, i, i%97)
	}
	if err := resetPeakRSS(env.proc); err != nil {
		return err
	}
	send := func(path, contentType string, body io.Reader) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.url+path, body)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Cookie", u.cookie)
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		text, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			return "", fmt.Errorf("POST %s: %s: %.300s", path, resp.Status, text)
		}
		return resp.Header.Get("Location"), nil
	}
	var upload bytes.Buffer
	mw := multipart.NewWriter(&upload)
	part, _ := mw.CreateFormFile("file", "bench.csv")
	_, _ = part.Write(file.Bytes())
	_ = mw.Close()
	t0 := time.Now()
	importURL, err := send("/customers/import", mw.FormDataContentType(), &upload)
	if err != nil {
		return err
	}
	tm := time.Now()
	mappingPage, err := getHTML(ctx, client, env.url+importURL, u.cookie, false)
	if err != nil {
		return err
	}
	if !bytes.Contains(mappingPage, []byte(`data-testid="import-mapping-form"`)) {
		return fmt.Errorf("no mapping step at %s: %.300s", importURL, mappingPage)
	}
	mapping := url.Values{"field": {"name", "taxId", "segment", "city", "country"}}
	if _, err := send(importURL+"/mapping", "application/x-www-form-urlencoded", strings.NewReader(mapping.Encode())); err != nil {
		return err
	}
	mapped := time.Since(tm)
	dryRun := time.Since(t0)
	t1 := time.Now()
	runURL, err := send(importURL+"/run", "application/x-www-form-urlencoded", strings.NewReader(url.Values{}.Encode()))
	if err != nil {
		return err
	}
	var created, failed int
	for {
		page, err := getHTML(ctx, client, env.url+runURL+"/progress", u.cookie, true)
		if err != nil {
			return err
		}
		active := importActiveRe.FindSubmatch(page)
		if active == nil {
			return fmt.Errorf("no progress in %.300s", page)
		}
		if string(active[1]) == "false" {
			created, _ = strconv.Atoi(string(importCreatedRe.FindSubmatch(page)[1]))
			failed, _ = strconv.Atoi(string(importFailedRe.FindSubmatch(page)[1]))
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	elapsed := time.Since(t1)
	peak, err := env.proc.memoryMB("VmHWM")
	if err != nil {
		return err
	}
	if created != n || failed != 0 {
		return fmt.Errorf("import of %d: %d created, %d failed", n, created, failed)
	}
	creates := 0
	for _, r := range sim.Requests() {
		if r.Method == http.MethodPost && strings.TrimSuffix(r.EscapedPath, "/") == "/v2/customer" && r.Status == http.StatusCreated {
			creates++
		}
	}
	if creates != n {
		return fmt.Errorf("import of %d: %d creates on the simulator", n, creates)
	}
	name := fmt.Sprintf("import_%d", n)
	rep.add(name+"_dry_run_seconds", dryRun.Seconds(), "s")
	rep.add(fmt.Sprintf("import_mapping_%d_rows_ms", n), float64(mapped.Microseconds())/1000, "ms")
	rep.add(name+"_seconds", elapsed.Seconds(), "s")
	rep.add(name+"_per_second", float64(n)/elapsed.Seconds(), "customers/s")
	rep.add(name+"_peak_rss_mb", peak, "MiB")
	return nil
}
