//go:build pprof

package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
)

// A profiling build (`go build -tags pprof ./cmd/portal`, docs/performance.md) serves
// net/http/pprof on PPROF_ADDR, its own loopback listener, so a running portal under load can be
// profiled without the route or its cost in a release build (portalbench's per-stage breakdown
// uses it). Not PORTAL_*: portalbench passes its own PORTAL_* variables only. The address goes to
// standard output before the portal's own "portal listening" line.
func init() {
	addr := os.Getenv("PPROF_ADDR")
	if addr == "" {
		return
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "portal: pprof:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stdout, "pprof listening on http://%s/debug/pprof/\n", listener.Addr())
	go func() { _ = http.Serve(listener, nil) }()
}
