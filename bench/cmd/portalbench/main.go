// Command portalbench measures the portal against its physical floor (`make bench`, docs/performance.md).
//
// It builds cmd/portal and cmd/v2sim, starts the simulator (100,000 customers, attachments spilled to a
// temporary directory), an OpenID provider (internal/demoidp, in this process) and the portal binary, each
// on its own loopback listener, and a bare reverse proxy (this binary again, in -serve-proxy mode) in front
// of the same simulator. Then it measures these groups (in the order of groups: watch runs beside
// the pace-bound groups from weight to import, runGroups):
//
//	overhead_*     customer detail page through the portal vs the same v2 call through the bare proxy
//	               and oauth2-proxy; overhead_postgres_* the same with the portal's state in PostgreSQL
//	page_weight_*  compressed bytes of the first load of the customers and quote pages
//	quote_action_* each quote-builder action through the portal's routes
//	latency_*      every journey with the v2 API answering in 50 ms: v2 calls, sequential round trips,
//	               time and floor, as a table on stderr (issue 27)
//	live_poll_*    100 viewers polling one quote's live notice: upstream reads per interval (issue 18)
//	list_*         first page and search keystroke over 100,000 customers, cold and warm; portal RSS
//	stream_*       1 GiB upload and download through the portal and directly; portal peak RSS and
//	               what the transfers add to it (at most 32 MiB, or the group fails)
//	backoffice_*   a 1,000-contract batch archive (time, portal RSS); the XLSX export of 100,000
//	               customers (time, peak RSS during the export, target < 64 MiB)
//	handover_*     1,000 customers handed over to another owner, the simulator answering in 30 ms
//	               (a simulator of its own, in this process): time (issue 34)
//	import_*       a 10,000-line customer import (CSV upload, dry run, run: one create a line) against
//	               the handover's simulator at 30 ms a call: the run's time, the portal's peak RSS
//	export_*       the XLSX export's own extra memory for 100,000 and 1,000,000 rows (a child
//	               process each): within 10 % of each other, or the group fails
//	hostile_xlsx_* the hostile spreadsheets of issue 38 (XFD cells, millions of blank rows) posted to the
//	               batch archive and the import, one after another and three at once: the slowest
//	               refusal and the portal's peak RSS (goals 2 s, 100 MiB)
//	mail_*, inbox_* 1,000 mails through the outbox to an SMTP server in this process; the inbox's
//	               unread count of a person with 1,000,000 items of every kind (issue 40; both engines)
//	allocs_*       allocations per request of the main handlers (go test -bench), against
//	               bench/alloc_budgets.json
//	state_*        the state database's lists, sightings and home page at 100k and 1M rows a kind,
//	               both engines, on cached fills (fillcache.go), against issue 31's budgets
//	watch_*        the signature watcher's pace and answers shown (issue 39), both engines
//
// Every figure is printed as "name: value unit" and all are written to -out as one JSON object (figure
// name to number, plus "machine"). A figure whose page does not exist yet is reported as pending on
// stderr and left out. The exit status is 1 when a measurement failed or an allocation budget was
// exceeded.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// groups are the measurement groups, in the order they start (runGroups: watch runs beside the
// groups from weight to import).
var groups = []string{"overhead", "watch", "weight", "quote", "latency", "poll", "handover", "import", "list", "stream", "backoffice", "export", "allocs", "state", "offer", "mail", "hostile"}

type options struct {
	out        string
	only       map[string]bool
	root       string
	quick      bool
	keep       bool
	budgets    string
	concurrent int
	portalBin  string
	repeat     int
	merge      bool
	// teamOnly: the state group measures only the team lead's figures (team.go) at 1M rows per
	// kind (100k with -quick), on the engines of stateEngines.
	teamOnly     bool
	stateEngines map[string]bool
	// refill makes the cached fills again (fillcache.go); noFillCache fills in place, keeping nothing.
	refill, noFillCache bool
	// profile: the directory where the overhead group writes each portal's CPU profile and
	// allocation snapshots of its loaded rounds, and the list and stream groups what their
	// portal's resident size is made of (memorySnapshot; the portal built with -tags pprof).
	profile string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == exportMemoryMode {
		if err := runExportMemory(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "portalbench export memory:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == proxyMode {
		if err := serveProxy(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "portalbench proxy:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "portalbench:", err)
		}
		os.Exit(1)
	}
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("portalbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var only string
	fs.StringVar(&o.out, "out", "bench/results.json", "where the figures are written (JSON)")
	fs.StringVar(&only, "only", "", "comma-separated groups to run ("+strings.Join(groups, ",")+"); default all")
	fs.StringVar(&o.root, "root", ".", "the repository root (go.mod)")
	fs.BoolVar(&o.quick, "quick", false, "shorter rounds and fewer samples (a smoke run; figures are noisier)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary directory (binaries, logs) for inspection")
	fs.StringVar(&o.budgets, "budgets", "bench/alloc_budgets.json", "allocation budgets of the handler benchmarks")
	fs.IntVar(&o.concurrent, "c", 32, "concurrency of the overhead load (workers)")
	fs.StringVar(&o.portalBin, "portal-bin", "", "use this portal binary instead of building cmd/portal (e.g. one built with pprof, docs/performance.md)")
	fs.IntVar(&o.repeat, "runs", 1, "run the groups this many times in one lab: each figure is the median, with <name>_min and <name>_max")
	fs.BoolVar(&o.merge, "merge", false, "keep the figures of -out that this run does not measure (e.g. with -only)")
	fs.BoolVar(&o.teamOnly, "team-only", false, "the state group measures only team_figures_* at 1M rows per kind (100k with -quick): no other size, list or batch figure")
	fs.BoolVar(&o.refill, "refill", false, "make the cached fills of the state and mail groups again (.cache/bench, docs/performance.md)")
	fs.BoolVar(&o.noFillCache, "no-fill-cache", false, "fill the state and mail groups' databases (SQLite and PostgreSQL) in place, neither using nor keeping .cache/bench")
	fs.StringVar(&o.profile, "profile", "", "write the overhead group's portal profiles (CPU, allocations during its rounds at -c; both engines) and what the list's and the stream's resident size is made of (smaps_rollup, MemStats, live heap) into this directory; builds the portal with -tags pprof")
	var engines string
	fs.StringVar(&engines, "state-engines", "sqlite,postgres", "comma-separated engines the state group fills (sqlite, postgres); team_figures_1m_ms needs both")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.stateEngines = map[string]bool{}
	for _, e := range strings.Split(engines, ",") {
		e = strings.TrimSpace(e)
		if e != "sqlite" && e != "postgres" {
			return o, fmt.Errorf("-state-engines: unknown engine %q (sqlite, postgres)", e)
		}
		o.stateEngines[e] = true
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.concurrent < 1 {
		return o, errors.New("-c must be at least 1")
	}
	if o.repeat < 1 {
		return o, errors.New("-runs must be at least 1")
	}
	if only != "" {
		o.only = map[string]bool{}
		for _, g := range strings.Split(only, ",") {
			g = strings.TrimSpace(g)
			if !contains(groups, g) {
				return o, fmt.Errorf("-only: unknown group %q (groups: %s)", g, strings.Join(groups, ", "))
			}
			o.only[g] = true
		}
	}
	return o, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (o options) runs(group string) bool { return o.only == nil || o.only[group] }

// run is the whole benchmark; it returns an error when a measurement failed or a budget was exceeded.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	started := time.Now()
	machine := machineDescription()
	fmt.Fprintf(stderr, "portalbench: %s\n", machine)

	lab, err := newLab(ctx, opts, stderr)
	if lab != nil {
		defer lab.close()
	}
	if err != nil {
		return err
	}
	if !opts.noFillCache {
		if lab.fills, err = newFillCache(lab.opts.root, opts.refill, stderr); err != nil {
			return err
		}
	}

	var failures []string
	var runs []*report
	for i := range opts.repeat {
		if opts.repeat > 1 {
			fmt.Fprintf(stderr, "portalbench: === run %d of %d\n", i+1, opts.repeat)
		}
		rep := newReport(stdout, stderr)
		rep.machine = machine
		failures = append(failures, runGroups(ctx, opts, lab, rep, stderr)...)
		runs = append(runs, rep)
	}
	rep := aggregate(runs, stdout, stderr)
	if opts.merge {
		if err := rep.mergeFrom(opts.out); err != nil {
			failures = append(failures, err.Error())
		}
	}

	if err := rep.write(opts.out); err != nil {
		failures = append(failures, err.Error())
	}
	fmt.Fprintf(stderr, "portalbench: done in %s; figures in %s\n", time.Since(started).Round(time.Second), opts.out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d group(s) failed:\n  %s", len(failures), strings.Join(failures, "\n  "))
	}
	return nil
}

// runGroups runs every group the options ask for once, into rep, and returns the failures.
func runGroups(ctx context.Context, opts options, lab *lab, rep *report, stderr io.Writer) []string {
	var failures []string
	step := func(failures *[]string, group string, fn func() error) {
		if !opts.runs(group) || ctx.Err() != nil {
			return
		}
		t0 := time.Now()
		fmt.Fprintf(stderr, "portalbench: --- %s\n", group)
		if err := fn(); err != nil {
			var p *pendingError
			if errors.As(err, &p) {
				rep.pending(group, p.reason)
				return
			}
			*failures = append(*failures, fmt.Sprintf("%s: %v", group, err))
			fmt.Fprintf(stderr, "portalbench: %s FAILED: %v\n", group, err)
			lab.dumpLogs(stderr)
		}
		fmt.Fprintf(stderr, "portalbench: --- %s took %s\n", group, time.Since(t0).Round(100*time.Millisecond))
	}
	step(&failures, "overhead", func() error { return measureOverhead(ctx, lab, rep) })
	// The watch group is four minutes of a watcher's pace (1,000 contracts at 600 reads a minute)
	// at a few percent of a core, in this process: it runs beside the groups whose time is set by
	// a pace or a simulated latency (weight to import), and it is done before the groups whose
	// figures are CPU or memory (list onwards) start; never beside overhead's rounds. Beside the
	// CPU-bound export and allocs on a loaded machine its answers showed later (docs/performance.md
	// "Where make bench's time goes").
	var watchFailures []string
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		step(&watchFailures, "watch", func() error { return measureWatch(ctx, lab, rep) })
	}()
	step(&failures, "weight", func() error { return measurePageWeight(ctx, lab, rep) })
	step(&failures, "quote", func() error { return measureQuoteActions(ctx, lab, rep) })
	step(&failures, "latency", func() error { return measureLatency(ctx, lab, rep) })
	step(&failures, "poll", func() error { return measurePolling(ctx, lab, rep) })
	step(&failures, "handover", func() error { return measureHandover(ctx, lab, rep) })
	step(&failures, "import", func() error { return measureImport(ctx, lab, rep) })
	<-watched
	failures = append(failures, watchFailures...)
	step(&failures, "list", func() error { return measureList(ctx, lab, rep) })
	step(&failures, "stream", func() error { return measureStream(ctx, lab, rep) })
	step(&failures, "backoffice", func() error { return measureBackoffice(ctx, lab, rep) })
	step(&failures, "export", func() error { return measureExportMemory(ctx, rep, stderr) })
	step(&failures, "allocs", func() error { return measureAllocs(ctx, lab, rep) })
	step(&failures, "state", func() error { return measureState(ctx, lab, rep) })
	step(&failures, "offer", func() error { return measureOfferPDF(ctx, rep) })
	step(&failures, "mail", func() error { return measureMail(ctx, lab.fills, rep) })
	step(&failures, "hostile", func() error { return measureHostile(ctx, lab, rep) })
	return failures
}

// pendingError marks a figure that cannot be measured yet because the page it needs does not exist.
type pendingError struct{ reason string }

func (e *pendingError) Error() string { return "pending: " + e.reason }

func pending(format string, args ...any) error {
	return &pendingError{reason: fmt.Sprintf(format, args...)}
}
