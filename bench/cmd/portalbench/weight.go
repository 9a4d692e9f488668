package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/brotli"
)

// measurePageWeight reports what a browser downloads on the first load of the customers page and of a
// quote page: the compressed bytes of the document and of every stylesheet and script it references
// (kB = 1024 bytes; headers not counted).
func measurePageWeight(ctx context.Context, l *lab, rep *report) error {
	user, err := signIn(ctx, l.portal, benchUser(2))
	if err != nil {
		return err
	}
	var pendingParts []string
	kb, err := pageWeight(ctx, l.portal.url, "/customers", user.cookie)
	if err != nil {
		return err
	}
	rep.add("page_weight_customers_kb", kb, "kB")

	q, err := newBenchQuote(ctx, l, user)
	if err != nil {
		return err
	}
	kb, err = pageWeight(ctx, l.portal.url, q.pagePath(), user.cookie)
	if err != nil {
		pendingParts = append(pendingParts, fmt.Sprintf("quote page: %v", err))
	} else {
		rep.add("page_weight_quote_kb", kb, "kB")
	}
	if len(pendingParts) > 0 {
		return pending("%s", strings.Join(pendingParts, "; "))
	}
	return nil
}

// pageWeight loads path like a browser on its first visit (Accept-Encoding: gzip, empty cache) and
// returns the transferred body bytes of the document plus its stylesheets and scripts, in kB.
func pageWeight(ctx context.Context, base, path, cookie string) (float64, error) {
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		Timeout:       time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	fetch := func(target string, partial bool) ([]byte, int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return nil, 0, err
		}
		req.Header.Set("Cookie", cookie)
		if partial {
			req.Header.Set("HX-Request", "true")
		}
		req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd") // what Chromium sends
		resp, err := client.Do(req)
		if err != nil {
			return nil, 0, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, 0, fmt.Errorf("GET %s: %s", target, resp.Status)
		}
		body := raw
		switch resp.Header.Get("Content-Encoding") {
		case "":
		case "gzip":
			body, err = gunzip(raw)
			if err != nil {
				return nil, 0, fmt.Errorf("GET %s: %w", target, err)
			}
		case "br":
			body, err = io.ReadAll(brotli.NewReader(bytes.NewReader(raw)))
			if err != nil {
				return nil, 0, fmt.Errorf("GET %s: brotli: %w", target, err)
			}
		default:
			return nil, 0, fmt.Errorf("GET %s: unexpected Content-Encoding %q", target, resp.Header.Get("Content-Encoding"))
		}
		return body, len(raw), nil
	}
	doc, total, err := fetch(base+path, false)
	if err != nil {
		return 0, err
	}
	parsed, err := goquery.NewDocumentFromReader(bytes.NewReader(doc))
	if err != nil {
		return 0, err
	}
	var refs []string
	parsed.Find(`link[rel="stylesheet"][href], script[src]`).Each(func(_ int, s *goquery.Selection) {
		if href, ok := s.Attr("href"); ok {
			refs = append(refs, href)
		} else {
			refs = append(refs, s.AttrOr("src", ""))
		}
	})
	if len(refs) == 0 {
		return 0, fmt.Errorf("GET %s: no stylesheet or script referenced (not the portal's page?)", path)
	}
	baseURL, _ := url.Parse(base + path)
	// A region that loads itself right away (the customer list while the user's list is still being
	// fetched) is part of the first load too.
	var loaders []string
	parsed.Find(`[hx-trigger="load"][hx-get]`).Each(func(_ int, s *goquery.Selection) {
		loaders = append(loaders, s.AttrOr("hx-get", ""))
	})
	for _, ref := range loaders {
		u, err := baseURL.Parse(ref)
		if err != nil {
			return 0, err
		}
		_, n, err := fetch(u.String(), true)
		if err != nil {
			return 0, err
		}
		total += n
	}
	seen := map[string]bool{}
	for _, ref := range refs {
		u, err := baseURL.Parse(ref)
		if err != nil {
			return 0, err
		}
		if seen[u.String()] {
			continue
		}
		seen[u.String()] = true
		_, n, err := fetch(u.String(), false)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return float64(total) / 1024, nil
}
