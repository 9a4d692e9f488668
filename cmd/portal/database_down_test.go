package main

import (
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestDatabaseDownEveryOtherActionWorks: with the state database stopped, a signed-in person
// keeps working (customer pages, quotes), the lists say they are unavailable, and when the
// database is back the lists answer again without a restart (issue 31, "Failures").
func TestDatabaseDownEveryOtherActionWorks(t *testing.T) {
	t.Parallel()
	cluster, err := statedbtest.NewCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Remove() })
	admin, err := sql.Open("pgx", cluster.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE portal"); err != nil {
		t.Fatal(err)
	}
	_ = admin.Close()
	dbURL, _ := url.Parse(cluster.URL)
	dbURL.Path = "/portal"

	p := startPortal(t, []string{"-demo", "-addr", "127.0.0.1:0"}, getenvOf(map[string]string{"PORTAL_DATABASE_URL": dbURL.String()}))
	client := browser(t)
	signIn(t, client, p.base, "sales", "sales-demo")
	page := func(path, want string) {
		t.Helper()
		resp, body := get(t, client, p.base+path)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Fatalf("GET %s: %d, want 200 with %q; logs:\n%.3000s", path, resp.StatusCode, want, p.logs)
		}
	}
	page("/customers/1", `data-testid="customer-work"`)
	page("/work/quotes", `data-testid="work-results"`)

	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	page("/customers/2", `data-testid="customer-work"`)
	page("/work/quotes", "Lists unavailable right now")
	page("/customers", `data-testid="customer-results"`)

	if err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, client, p.base+"/work/quotes")
	if resp.StatusCode != http.StatusOK || strings.Contains(body, "Lists unavailable right now") {
		t.Fatalf("after the database is back: %d, still unavailable: %v", resp.StatusCode, strings.Contains(body, "Lists unavailable right now"))
	}
}
