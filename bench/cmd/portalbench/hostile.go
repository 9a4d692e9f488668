package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/sheetread/sheettest"
)

// Hostile spreadsheets (issue 38): the files that took the portal's memory and CPU before every
// upload was read through internal/sheetread, posted to the real pages of a portal of its own:
// the batch archive's list of 5,000 rows with a cell at column XFD (42 KB: 1.6 GB and 155 s
// then), the import's 20,000 and 1,500,000 rows of blank formulas at XFD (25 CPU-seconds, and
// minutes), and three people posting the XFD list at once (4.4 GB then). Each must be refused
// with its message. hostile_xlsx_seconds is the slowest answer, hostile_xlsx_peak_rss_mb the
// portal's peak RSS (VmHWM, reset before the first upload) over all of them; the goals are 2 s
// and 100 MiB.

// hostileUsers are the bench users that post the files (three at once in the last case).
var hostileUsers = []int{43, 44, 45}

type hostileUpload struct {
	name, path, file, want string
	data                   []byte
}

func measureHostile(ctx context.Context, l *lab, rep *report) error {
	env, err := l.newPortal(ctx, "portal-hostile")
	if err != nil {
		return err
	}
	defer l.stopPortal(env)
	var cookies []string
	for _, i := range hostileUsers {
		u, err := signIn(ctx, env, benchUser(i))
		if err != nil {
			return err
		}
		cookies = append(cookies, u.cookie)
	}
	client := &http.Client{
		Timeout:       5 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	xfdList := sheettest.XFDPerRow(5000)
	uploads := []hostileUpload{
		{"batch archive, 5,000 rows with a cell at XFD", "/contracts/batch-archive", "list.xlsx", "more than 64 columns", xfdList},
		{"import, 20,000 blank formulas at XFD", "/customers/import", "hostile-customers.xlsx", "more than 64 columns", sheettest.BlankFormulaRows(20_000)},
		{"import, 1,500,000 blank formulas at XFD", "/customers/import", "hostile-customers.xlsx", "unpacks to more than", sheettest.BlankFormulaRows(1_500_000)},
	}
	post := func(u hostileUpload, cookie string) (time.Duration, error) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		part, _ := mw.CreateFormFile("file", u.file)
		_, _ = part.Write(u.data)
		_ = mw.Close()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.url+u.path, &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Cookie", cookie)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", u.name, err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(t0)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(page), u.want) {
			return took, fmt.Errorf("%s: %s, want 422 saying %q", u.name, resp.Status, u.want)
		}
		return took, nil
	}
	if err := resetPeakRSS(env.proc); err != nil {
		return err
	}
	var slowest time.Duration
	for _, u := range uploads {
		took, err := post(u, cookies[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(l.stderr, "portalbench: hostile: %s refused in %s\n", u.name, took.Round(time.Millisecond))
		slowest = max(slowest, took)
	}
	// Three people at once (each has their own read slot; the replica reads two at a time).
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	t0 := time.Now()
	for _, cookie := range cookies {
		wg.Go(func() {
			took, err := post(uploads[0], cookie)
			mu.Lock()
			defer mu.Unlock()
			slowest = max(slowest, took)
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("three at once: %v", errs)
	}
	fmt.Fprintf(l.stderr, "portalbench: hostile: three XFD lists at once refused in %s\n", time.Since(t0).Round(time.Millisecond))
	peak, err := env.proc.memoryMB("VmHWM")
	if err != nil {
		return err
	}
	rep.add("hostile_xlsx_seconds", slowest.Seconds(), "s")
	rep.add("hostile_xlsx_peak_rss_mb", peak, "MiB")
	return nil
}
