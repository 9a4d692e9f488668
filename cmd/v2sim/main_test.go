package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.addr != "127.0.0.1:8081" || cfg.customers != 60 || cfg.sessionTTL != 30*time.Minute || cfg.maxUpload != 2<<30 ||
		cfg.sigExpiry != 14*24*time.Hour || cfg.signerDelay != 0 || cfg.declineEvery != 3 {
		t.Fatalf("defaults = %+v, %v", cfg, err)
	}
	if cfg, err := parseFlags([]string{"-signature-expiry", "1h", "-signer-delay", "45s", "-signer-decline-every", "2"}, io.Discard); err != nil ||
		cfg.sigExpiry != time.Hour || cfg.signerDelay != 45*time.Second || cfg.declineEvery != 2 {
		t.Errorf("signer flags = %+v, %v", cfg, err)
	}
	for _, args := range [][]string{
		{"-customers", "0"}, {"-customers", "100001"}, {"-error-rate", "1.5"}, {"-malformed-rate", "-0.1"},
		{"-latency", "-1s"}, {"-max-upload", "0"}, {"-session-ttl", "0s"}, {"extra"}, {"-nope"},
		{"-signature-expiry", "0s"}, {"-signer-delay", "-1s"}, {"-signer-decline-every", "-1"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

// TestRunServesAndShutsDown starts the command on a free port, uses it, and stops it by cancelling the context
// (what SIGINT does).
func TestRunServesAndShutsDown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-customers", "25", "-admin"}, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	var banner []string
	for lines.Scan() {
		banner = append(banner, lines.Text())
		if strings.HasPrefix(lines.Text(), "  control API") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	text := strings.Join(banner, "\n")
	m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/v2/ \(38 endpoints\)`).FindStringSubmatch(text)
	if m == nil || !strings.Contains(text, "25 customers") || !strings.Contains(text, "auth: any non-empty bearer token") {
		t.Fatalf("banner:\n%s", text)
	}
	base := "http://" + m[1]
	req, _ := http.NewRequest("GET", base+"/v2/customer/", nil)
	req.Header.Set("Authorization", "Bearer t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var customers []struct{ ID int }
	err = json.NewDecoder(resp.Body).Decode(&customers)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(customers) != 25 {
		t.Fatalf("customers: status %d, %d customers, %v", resp.StatusCode, len(customers), err)
	}
	resp, err = http.Get(base + "/_sim/endpoints")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("admin API: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not stop after the context was cancelled")
	}
}

// TestRestrictToOwnersFlag: with -restrict-to-owners and no -issuer every call is api-user, who owns no customer,
// so the list is empty and a customer answers 403.
func TestRestrictToOwnersFlag(t *testing.T) {
	t.Parallel()
	cfg, err := parseFlags([]string{"-restrict-to-owners", "-unrestricted-roles", "backoffice, admin"}, io.Discard)
	if err != nil || !cfg.restrict || !slices.Equal(splitList(cfg.unrestricted), []string{"backoffice", "admin"}) {
		t.Fatalf("parseFlags = %+v, %v", cfg, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-customers", "5", "-restrict-to-owners"}, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	var banner []string
	for lines.Scan() {
		banner = append(banner, lines.Text())
		if strings.HasPrefix(lines.Text(), "  restricted to owners") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/v2/`).FindStringSubmatch(strings.Join(banner, "\n"))
	if m == nil {
		t.Fatalf("banner:\n%s", strings.Join(banner, "\n"))
	}
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+m[1]+path, nil)
		req.Header.Set("Authorization", "Bearer t")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	if status, body := get("/v2/customer/"); status != 200 || body != "[]" {
		t.Errorf("list: %d %s, want 200 []", status, body)
	}
	if status, body := get("/v2/customer/1"); status != 403 || !strings.Contains(body, `"FORBIDDEN"`) {
		t.Errorf("customer 1: %d %s, want 403 FORBIDDEN", status, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}
