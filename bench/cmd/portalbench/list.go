package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// List samples (docs/performance.md). Each cold sample is a user who just signed in (their customer
// cache is empty); warm samples rotate over five users whose lists are cached.
const (
	listColdSamples  = 8 // of each: first page, search, bare decode (interleaved)
	listWarmUsers    = 5
	listWarmPages    = 50
	listWarmSearches = 100
	// Users bench10.. are cold users, bench50.. the warm ones (benchUsers is the limit).
	listColdFirstUser = 10
	listWarmFirstUser = 50
)

// searchKeystrokes are the texts of successive keystrokes (typing a surname, a city, a tax id prefix).
var searchKeystrokes = []string{"r", "ro", "ros", "ross", "rossi", "m", "mi", "mil", "mila", "milano", "it0", "bian", "gmbh"}

// measureList measures the customer list over 100,000 customers on a fresh portal process: first page
// and a search keystroke, cold and warm; a bare GET + json-decode of the same list for comparison; the
// portal's resident memory once five users' lists are cached.
func measureList(ctx context.Context, l *lab, rep *report) error {
	coldN, warmPages, warmSearches := listColdSamples, listWarmPages, listWarmSearches
	if l.opts.quick {
		coldN, warmPages, warmSearches = 2, 10, 20
	}
	// Without the portal's default soft memory limit (cmd/portal/memlimit.go): the resident size
	// with five users' lists cached must hold by itself, not because the collector is pressed to
	// run more often near a limit (issue 17).
	env, err := l.newPortalFrom(ctx, "portal-list", l.portalBin, []string{"PORTAL_MEMORY_LIMIT=off"})
	if err != nil {
		return err
	}
	defer l.stopPortal(env)
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		Timeout:       5 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	firstPage := func(u *signedIn) error { return loadCustomerList(ctx, client, env.url, u.cookie) }
	search := func(u *signedIn, i int) error {
		q := searchKeystrokes[i%len(searchKeystrokes)]
		return customerSearch(ctx, client, env.url, u.cookie, q)
	}

	// Cold: every sample a user who has never loaded the list (sign-in itself not timed). Interleaved
	// with the floor of a cold load: GET the whole list from the simulator and decode it with
	// encoding/json, so that drift of the machine falls on both.
	var coldPage, coldSearch, decode []time.Duration
	for i := range coldN {
		for j, sample := range []func(*signedIn) error{firstPage, func(u *signedIn) error { return search(u, 4) }} {
			u, err := signIn(ctx, env, benchUser(listColdFirstUser+2*i+j))
			if err != nil {
				return err
			}
			t0 := time.Now()
			if err := sample(u); err != nil {
				return fmt.Errorf("cold sample: %w", err)
			}
			if j == 0 {
				coldPage = append(coldPage, time.Since(t0))
			} else {
				coldSearch = append(coldSearch, time.Since(t0))
			}
			if j == 0 {
				t0 = time.Now()
				if err := bareDecode(ctx, client, l.simURL, u.accessToken); err != nil {
					return fmt.Errorf("bare decode: %w", err)
				}
				decode = append(decode, time.Since(t0))
			}
		}
	}

	// Warm: five users whose lists are cached; then the portal's resident memory.
	var warm []*signedIn
	for i := range listWarmUsers {
		u, err := signIn(ctx, env, benchUser(listWarmFirstUser+i))
		if err != nil {
			return err
		}
		if err := firstPage(u); err != nil { // loads the user's list
			return err
		}
		warm = append(warm, u)
	}
	warmPage, err := timeIt(warmPages, func(i int) error { return firstPage(warm[i%len(warm)]) })
	if err != nil {
		return fmt.Errorf("warm first page: %w", err)
	}
	warmSearch, err := timeIt(warmSearches, func(i int) error { return search(warm[i%len(warm)], i) })
	if err != nil {
		return fmt.Errorf("warm search: %w", err)
	}
	rss, err := env.proc.memoryMB("VmRSS")
	if err != nil {
		return err
	}
	peak, err := env.proc.memoryMB("VmHWM")
	if err != nil {
		return err
	}
	if err := memorySnapshot(ctx, l, env, "list_"); err != nil {
		return err
	}

	addP := func(name string, d []time.Duration) []float64 {
		p := percentiles(d, 50, 99)
		rep.add(name+"_p50_ms", p[0], "ms")
		rep.add(name+"_p99_ms", p[1], "ms")
		return p
	}
	cold := addP("list_first_page_cold", coldPage)
	addP("list_first_page_warm", warmPage)
	addP("list_search_cold", coldSearch)
	addP("list_search_warm", warmSearch)
	bare := addP("list_bare_decode", decode)
	rep.add("list_first_page_vs_decode_ratio", cold[0]/bare[0], "ratio")
	rep.add("list_portal_rss_mb", rss, "MiB")
	rep.add("list_portal_peak_rss_mb", peak, "MiB")
	return nil
}

// loadCustomerList loads GET /customers as a browser does on a first visit: the page, and when the
// list was still being fetched, the results region that the page then loads by itself (htmx).
func loadCustomerList(ctx context.Context, client *http.Client, base, cookie string) error {
	page, err := getHTML(ctx, client, base+"/customers", cookie, false)
	if err != nil {
		return err
	}
	for range 10 {
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(page))
		if err != nil {
			return err
		}
		loader := doc.Find(`[hx-trigger="load"][hx-get]`)
		if loader.Length() == 0 {
			if doc.Find(`a[href^="/customers/"]`).Length() == 0 {
				return fmt.Errorf("GET /customers: the page lists no customer")
			}
			return nil
		}
		next, err := url.Parse(loader.AttrOr("hx-get", ""))
		if err != nil || next.IsAbs() {
			return fmt.Errorf("GET /customers: unexpected loader %q", loader.AttrOr("hx-get", ""))
		}
		page, err = getHTML(ctx, client, base+next.String(), cookie, true)
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("GET /customers: still loading after 10 rounds")
}

// customerSearch is one keystroke in the search box: the htmx request of the results region.
func customerSearch(ctx context.Context, client *http.Client, base, cookie, text string) error {
	q := url.Values{"q": {text}, "cpqId": {""}}
	page, err := getHTML(ctx, client, base+"/customers?"+q.Encode(), cookie, true)
	if err != nil {
		return err
	}
	if !bytes.Contains(page, []byte("customer")) {
		return fmt.Errorf("search %q: no results region in the answer", text)
	}
	return nil
}

// getHTML GETs target with the session cookie (htmx headers when partial), gzip accepted, and returns
// the decompressed body; any status but 200 fails.
func getHTML(ctx context.Context, client *http.Client, target, cookie string, partial bool) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Cookie", cookie)
	req.Header.Set("Accept-Encoding", "gzip")
	if partial {
		req.Header.Set("HX-Request", "true")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		if data, err = gunzip(data); err != nil {
			return nil, err
		}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.200s", req.URL.RequestURI(), resp.Status, data)
	}
	return data, nil
}

// bareCustomer is the customer document of docs/v2-assumptions.md A8 as plain structs.
type bareCustomer struct {
	ID      int32  `json:"id"`
	Name    string `json:"name"`
	TaxID   string `json:"taxId"`
	Email   string `json:"email"`
	Phone   string `json:"phone"`
	Segment string `json:"segment"`
	Status  string `json:"status"`
	Address struct {
		Street, City, PostalCode, Country string
	} `json:"address"`
	Owners []struct {
		OwnerID int64  `json:"ownerId"`
		Name    string `json:"name"`
		Email   string `json:"email"`
	} `json:"owners"`
	Profiles []struct {
		ProfileID   int32     `json:"profileId"`
		CustomerID  int32     `json:"customerId"`
		ProfileType string    `json:"profileType"`
		ContactName string    `json:"contactName"`
		Email       string    `json:"email"`
		Phone       string    `json:"phone"`
		CreatedAt   time.Time `json:"createdAt"`
	} `json:"profiles"`
	CPQIDs     []int32         `json:"cpqIds"`
	Attributes json.RawMessage `json:"attributes"`
	Version    int64           `json:"version"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

// bareDecode is the floor of a cold list: GET /v2/customer/ and decode the whole array into structs
// with the standard library.
func bareDecode(ctx context.Context, client *http.Client, simURL, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, simURL+"/v2/customer/", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v2/customer/: %s", resp.Status)
	}
	var list []bareCustomer
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return err
	}
	if len(list) != simCustomers {
		return fmt.Errorf("GET /v2/customer/: %d customers, want %d", len(list), simCustomers)
	}
	return nil
}
