package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/signal"
	"syscall"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
)

// proxyMode is the first argument that makes this binary the bare reverse proxy: the floor the portal
// is measured against. It runs as its own process, like the portal, so both pay the same hops.
const proxyMode = "-serve-proxy"

// serveProxy runs net/http/httputil.ReverseProxy in front of -upstream with the portal's own v2
// transport (apiclient.NewTransport) and the portal's server settings, until SIGTERM.
func serveProxy(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("portalbench "+proxyMode, flag.ContinueOnError)
	upstream := fs.String("upstream", "", "base URL of the v2 API")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	target, err := url.Parse(*upstream)
	if err != nil || target.Scheme == "" || target.Host == "" {
		return fmt.Errorf("-upstream %q must be an absolute URL", *upstream)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: apiclient.NewTransport(),
		ErrorLog:  log.New(io.Discard, "", 0),
	}
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	// The portal's server settings (cmd/portal).
	server := &http.Server{
		Handler:           proxy,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	fmt.Fprintf(stdout, "proxy listening on http://%s\n", listener.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	select {
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return server.Shutdown(shutdown)
}
