// Command v2sim serves the v2 API simulator on its own:
//
//	go run ./cmd/v2sim -addr 127.0.0.1:8081
//
// It is the strict, stateful stand-in for the real v2 API (see internal/v2sim) for running the portal, the
// conformance suite or browser tests against a separate process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cpqportal/portal/internal/v2sim"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "v2sim:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	addr          string
	issuer        string
	acceptAny     bool
	customers     int
	seed          int64
	latency       time.Duration
	errorRate     float64
	malformedRate float64
	generatePDF   bool
	admin         bool
	strictArchive bool
	restrict      bool
	unrestricted  string
	maxUpload     int64
	memoryCap     int64
	sessionTTL    time.Duration
	sigExpiry     time.Duration
	signerDelay   time.Duration
	declineEvery  int
	verbose       bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("v2sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8081", "listen address")
	fs.StringVar(&cfg.issuer, "issuer", "", "OpenID issuer URL whose JWTs are verified (empty: any non-empty bearer token is accepted)")
	fs.BoolVar(&cfg.acceptAny, "accept-any-token", false, "with -issuer, accept tokens that fail verification as api-user instead of 401")
	fs.IntVar(&cfg.customers, "customers", v2sim.DefaultCustomers, fmt.Sprintf("number of seeded customers (1 to %d)", v2sim.MaxCustomers))
	fs.Int64Var(&cfg.seed, "seed", 1, "seed of the generated data and random faults")
	fs.DurationVar(&cfg.latency, "latency", 0, "latency added to every answer")
	fs.Float64Var(&cfg.errorRate, "error-rate", 0, "probability (0 to 1) of answering 500 INTERNAL")
	fs.Float64Var(&cfg.malformedRate, "malformed-rate", 0, "probability (0 to 1) of answering a malformed JSON body")
	fs.BoolVar(&cfg.generatePDF, "generate-pdf", false, "contract generation answers the PDF instead of the contract document")
	fs.BoolVar(&cfg.strictArchive, "strict-archive", false, "a second archive of a contract answers 409 CONFLICT (and is counted) instead of the same archive")
	fs.BoolVar(&cfg.restrict, "restrict-to-owners", false, "restrict every user to the customers they own (and their quotes and contracts): 403 FORBIDDEN otherwise; needs -issuer to tell users apart")
	fs.StringVar(&cfg.unrestricted, "unrestricted-roles", v2sim.DefaultUnrestrictedRole, "with -restrict-to-owners, comma-separated token roles (claim roles) that see every customer")
	fs.BoolVar(&cfg.admin, "admin", false, "serve the control API under /_sim/ (request log, faults)")
	fs.Int64Var(&cfg.maxUpload, "max-upload", v2sim.DefaultMaxUpload, "largest attachment accepted, in bytes")
	fs.Int64Var(&cfg.memoryCap, "memory-cap", v2sim.DefaultMemoryCap, "largest attachment kept in memory, in bytes")
	fs.DurationVar(&cfg.sessionTTL, "session-ttl", v2sim.DefaultSessionTTL, "configuration session lifetime without use")
	fs.DurationVar(&cfg.sigExpiry, "signature-expiry", v2sim.DefaultSignatureExpiry, "how long a signature request waits for its signer before it expires")
	fs.DurationVar(&cfg.signerDelay, "signer-delay", 0, "signers answer a signature request by themselves after this delay (0: only the signing page and the control API answer)")
	fs.IntVar(&cfg.declineEvery, "signer-decline-every", 3, "with -signer-delay, every n-th request is declined with a reason (0: all sign)")
	fs.BoolVar(&cfg.verbose, "v", false, "log every request")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.customers < 1 || cfg.customers > v2sim.MaxCustomers:
		return cfg, fmt.Errorf("-customers must be between 1 and %d, got %d", v2sim.MaxCustomers, cfg.customers)
	case cfg.errorRate < 0 || cfg.errorRate > 1:
		return cfg, fmt.Errorf("-error-rate must be between 0 and 1, got %g", cfg.errorRate)
	case cfg.malformedRate < 0 || cfg.malformedRate > 1:
		return cfg, fmt.Errorf("-malformed-rate must be between 0 and 1, got %g", cfg.malformedRate)
	case cfg.latency < 0:
		return cfg, fmt.Errorf("-latency must not be negative")
	case cfg.maxUpload < 1:
		return cfg, fmt.Errorf("-max-upload must be at least 1 byte")
	case cfg.memoryCap < 1:
		return cfg, fmt.Errorf("-memory-cap must be at least 1 byte")
	case cfg.sessionTTL <= 0:
		return cfg, fmt.Errorf("-session-ttl must be positive")
	case cfg.sigExpiry <= 0:
		return cfg, fmt.Errorf("-signature-expiry must be positive")
	case cfg.signerDelay < 0 || cfg.declineEvery < 0:
		return cfg, fmt.Errorf("-signer-delay and -signer-decline-every must not be negative")
	}
	return cfg, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	level := slog.LevelInfo
	if cfg.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	sim := v2sim.New(v2sim.Options{
		IssuerURL:         cfg.issuer,
		AcceptAnyToken:    cfg.acceptAny,
		Customers:         cfg.customers,
		Seed:              cfg.seed,
		SessionTTL:        cfg.sessionTTL,
		MaxUpload:         cfg.maxUpload,
		MemoryCap:         cfg.memoryCap,
		GeneratePDF:       cfg.generatePDF,
		StrictArchive:     cfg.strictArchive,
		RestrictToOwners:  cfg.restrict,
		UnrestrictedRoles: splitList(cfg.unrestricted),
		Admin:             cfg.admin,
		SignatureExpiry:   cfg.sigExpiry,
		Signers:           v2sim.AutoSigners{Delay: cfg.signerDelay, DeclineEvery: cfg.declineEvery},
		Logger:            logger,
		Faults:            v2sim.Faults{Latency: cfg.latency, ErrorRate: cfg.errorRate, MalformedRate: cfg.malformedRate},
	})
	defer sim.Close()

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}

	sum := sim.Summary()
	fmt.Fprintf(stdout, "v2sim serving the v2 API on http://%s/v2/ (%d endpoints)\n", ln.Addr(), sum.Endpoints)
	fmt.Fprintf(stdout, "  seeded: %d configurators, %d TOFs, %d products, %d owners, %d customers, %d quotes, %d contracts (seed %d)\n",
		sum.Configurators, sum.TOFs, sum.Products, sum.Owners, sum.Customers, sum.Quotes, sum.Contracts, cfg.seed)
	fmt.Fprintf(stdout, "  auth: %s\n", sum.AuthMode)
	fmt.Fprintf(stdout, "  sessions expire after %s idle; uploads up to %d bytes\n", cfg.sessionTTL, cfg.maxUpload)
	if cfg.latency > 0 || cfg.errorRate > 0 || cfg.malformedRate > 0 {
		fmt.Fprintf(stdout, "  random faults: latency %s, error rate %g, malformed rate %g\n", cfg.latency, cfg.errorRate, cfg.malformedRate)
	}
	if cfg.generatePDF {
		fmt.Fprintln(stdout, "  contract generation answers the PDF")
	}
	if cfg.restrict {
		fmt.Fprintf(stdout, "  restricted to owners: each user sees the customers they own (unrestricted roles: %s)\n", cfg.unrestricted)
	}
	if cfg.admin {
		fmt.Fprintf(stdout, "  control API: http://%s/_sim/ (requests, reset-requests, faults, endpoints, signatures)\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "  signature requests expire after %s; signers answer on http://%s/sign/<token>", cfg.sigExpiry, ln.Addr())
	if cfg.signerDelay > 0 {
		fmt.Fprintf(stdout, " and by themselves after %s", cfg.signerDelay)
	}
	fmt.Fprintln(stdout)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "v2sim shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// splitList reads a comma-separated list, dropping empty items; an empty flag is an empty (not a nil) list.
func splitList(s string) []string {
	out := []string{}
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
