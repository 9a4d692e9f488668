package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The per-stage breakdown of the portal's CPU per page (docs/performance.md): a portal built with
// the pprof tag (cmd/portal/pprof.go), started for this alone, serves the customer page to the
// overhead group's load for a few seconds while its CPU profile is taken; every sample is put in
// the stage its stack belongs to, and each stage's CPU is divided by the pages served meanwhile.
const (
	stagesRound   = 6 * time.Second
	stagesProfile = 5 // seconds, inside the round
)

// stages in the order they are printed; classifyStack returns one of them.
var stages = []string{
	"read_request", "middleware", "language", "session", "cross_origin", "upstream_call", "decode",
	"view_model", "render", "compress", "write", "access_log", "gc", "other",
}

// stageRules name the stage of a frame. A sample belongs to the stage of the frame nearest to its
// leaf that any rule names: the CPU spent in a template's strings or in deflate's tables is render
// or compress, whichever middleware and handler are above it. Where a frame matches several rules
// the first wins (the access log's deferred function is a handler's method too).
var stageRules = []struct {
	stage   string
	pattern *regexp.Regexp
}{
	{"compress", regexp.MustCompile(`klauspost/compress|^compress/|andybalholm/brotli`)},
	{"write", regexp.MustCompile(`^net/http\.\(\*response\)\.(Write|write|finishRequest|FlushError)$|^net/http\.\(\*chunkWriter\)\.|^net/http\.\(\*conn\)\.finalFlush$`)},
	{"access_log", regexp.MustCompile(`handlers\.\(\*Handler\)\.accessLog\.func|^log/slog\.`)},
	{"decode", regexp.MustCompile(`internal/apiclient\.(\(\*Client\)\.decodeJSON|.*[Dd]ecode|.*UnmarshalJSON)`)},
	{"upstream_call", regexp.MustCompile(`internal/apiclient\.|^net/http\.\(\*persistConn\)\.|^net/http\.\(\*Transport\)\.|^net/http\.\(\*Client\)\.`)},
	{"session", regexp.MustCompile(`internal/session\.|internal/auth\.|gorilla/`)},
	{"cross_origin", regexp.MustCompile(`CrossOriginProtection|handlers\.\(\*Handler\)\.crossOrigin$`)},
	{"language", regexp.MustCompile(`internal/i18n\.|handlers\.\(\*Handler\)\.language$|x/text/`)},
	{"render", regexp.MustCompile(`a-h/templ|portal/web/templates/|handlers\.\(\*Handler\)\.render$`)},
	{"middleware", regexp.MustCompile(`handlers\.\(\*Handler\)\.(requestID|securityHeaders|recovery|compress|requireValidUTF8|accessLog)$|handlers\.limitBody|handlers\.\(\*Handler\)\.Routes\.|^github\.com/gin-gonic/`)},
	{"view_model", regexp.MustCompile(`internal/handlers\.`)},
	{"read_request", regexp.MustCompile(`^net/http\.\(\*conn\)\.readRequest$|^net/http\.readRequest$|^net/http\.\(\*connReader\)\.|^net/http\.\(\*conn\)\.serve$`)},
	{"gc", regexp.MustCompile(`^runtime\.gcBgMarkWorker|^runtime\.bgsweep|^runtime\.bgscavenge`)},
}

// classifyStack names the stage of a sample from its frames (leaf first, as pprof -traces prints).
func classifyStack(frames []string) string {
	for _, f := range frames {
		for _, rule := range stageRules {
			if rule.pattern.MatchString(f) {
				return rule.stage
			}
		}
	}
	return "other"
}

// stackSample is one stack of a CPU profile with the CPU time spent in it.
type stackSample struct {
	cpu    time.Duration
	frames []string
}

// parseTraces reads the output of `go tool pprof -traces`: blocks separated by lines of dashes,
// each starting with "<duration>   <leaf frame>" followed by one frame a line.
func parseTraces(r io.Reader) ([]stackSample, error) {
	var out []stackSample
	var cur *stackSample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----") {
			cur = nil
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if cur == nil {
			if len(fields) < 2 {
				continue // the header (File:, Type:, ...) has no duration first
			}
			d, err := time.ParseDuration(fields[0])
			if err != nil {
				continue
			}
			out = append(out, stackSample{cpu: d})
			cur = &out[len(out)-1]
			fields = fields[1:]
		}
		cur.frames = append(cur.frames, fields[0])
	}
	return out, sc.Err()
}

// stageBreakdown sums the samples by stage.
func stageBreakdown(samples []stackSample) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, s := range samples {
		out[classifyStack(s.frames)] += s.cpu
	}
	return out
}

// measureStages starts a profiling portal, loads its customer page with workers for stagesRound
// while a CPU profile of stagesProfile seconds is taken, and reports each stage's CPU per page.
func measureStages(ctx context.Context, l *lab, rep *report, workers int) error {
	bin := filepath.Join(l.dir, "portal-pprof")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", "pprof", "-o", bin, "./cmd/portal")
	build.Dir = l.opts.root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build -tags pprof ./cmd/portal: %v\n%s", err, out)
	}
	env, err := l.newPortalFrom(ctx, "portal-stages", bin, []string{"PPROF_ADDR=127.0.0.1:0"})
	if err != nil {
		return err
	}
	defer l.stopPortal(env)
	if env.pprofURL == "" {
		return fmt.Errorf("portal-stages: no pprof line in its log")
	}
	pprofURL := env.pprofURL
	user, err := signIn(ctx, env, benchUser(5))
	if err != nil {
		return err
	}
	page := func(ctx context.Context, i int64) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.url+customerDetailPath(1+i%overheadCustomerIDs), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Cookie", user.cookie)
		req.Header.Set("Accept", "text/html")
		req.Header.Set("Accept-Encoding", chromiumAcceptEncoding)
		return req, nil
	}
	gen := newLoadGen(workers)
	defer gen.close()
	gen.round(ctx, time.Second, page) // warm-up

	profilePath := filepath.Join(l.dir, "portal-stages.cpu.prof")
	profiled := make(chan error, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		profiled <- download(ctx, pprofURL+"profile?seconds="+strconv.Itoa(stagesProfile), profilePath)
	}()
	s := gen.round(ctx, stagesRound, page)
	if err := <-profiled; err != nil {
		return fmt.Errorf("portal-stages profile: %w", err)
	}
	if err := s.errorCheck("portal-stages"); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-traces", bin, profilePath).Output()
	if err != nil {
		return fmt.Errorf("go tool pprof -traces: %w", err)
	}
	samples, err := parseTraces(strings.NewReader(string(out)))
	if err != nil {
		return err
	}
	pages := s.rps() * stagesProfile // steady load: the pages served while the profile ran
	perPage := func(d time.Duration) float64 { return d.Seconds() * 1e6 / max(pages, 1) }
	breakdown := stageBreakdown(samples)
	var total time.Duration
	for _, stage := range stages {
		total += breakdown[stage]
		rep.add("overhead_stage_us_"+stage, perPage(breakdown[stage]), "µs")
	}
	rep.add("overhead_stage_us_total", perPage(total), "µs")
	return nil
}

// download GETs url into path.
// pprofLine is what a profiling build prints first (cmd/portal/pprof.go).
var pprofLine = regexp.MustCompile(`pprof listening on (http://\S+)`)

func download(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// (a profile takes as long as it was asked for: the overhead group's -profile about 80 s)
	resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
