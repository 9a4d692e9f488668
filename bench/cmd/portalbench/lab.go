package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cpqportal/portal/internal/config"
)

// Lab sizes (docs/performance.md).
const (
	simCustomers  = 100_000
	simMemoryCap  = 1 << 20 // attachments above 1 MiB spill to the lab's temporary directory
	simMaxUpload  = 2 << 30
	portalUpload  = "2GiB" // a 1 GiB file plus its multipart framing must pass PORTAL_UPLOAD_LIMIT
	startDeadline = 90 * time.Second
	stopDeadline  = 15 * time.Second
)

// labless are the groups that need no lab processes (they start what they measure themselves).
var labless = map[string]bool{"export": true, "state": true, "offer": true, "mail": true}

// lab is everything a run starts: the binaries, the simulator, the bare proxy and the main portal.
// Each process listens on its own loopback port.
type lab struct {
	opts   options
	dir    string // temporary directory: binaries, logs, the simulator's spill
	stderr io.Writer

	portalBin, simBin string

	sim      *proc
	simURL   string
	proxy    *proc
	proxyURL string
	portal   *portalEnv // the main portal (overhead, page weight, quote actions)
	peer     *proc      // oauth2-proxy, a client of the main portal's provider (overhead)
	peerURL  string

	fills *fillCache // the filled databases the state and mail groups reuse (nil: none)

	mu    sync.Mutex
	procs []*proc
	envs  []*portalEnv
}

// newLab builds the binaries and starts the simulator, the bare proxy and the main portal. On error the
// returned lab (if not nil) still needs close.
func newLab(ctx context.Context, opts options, stderr io.Writer) (*lab, error) {
	root, err := filepath.Abs(opts.root)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return nil, fmt.Errorf("-root %s is not the repository root (no go.mod): %w", root, err)
	}
	opts.root = root
	dir, err := os.MkdirTemp("", "portalbench-")
	if err != nil {
		return nil, err
	}
	l := &lab{opts: opts, dir: dir, stderr: stderr}
	if opts.only != nil && !slices.ContainsFunc(groups, func(g string) bool { return opts.only[g] && !labless[g] }) {
		return l, nil // only groups that start what they measure themselves
	}

	l.portalBin = filepath.Join(dir, "portal")
	l.simBin = filepath.Join(dir, "v2sim")
	builds := map[string]string{l.portalBin: "./cmd/portal", l.simBin: "./cmd/v2sim"}
	if opts.portalBin != "" {
		l.portalBin = opts.portalBin
		builds = map[string]string{l.simBin: "./cmd/v2sim"}
	}
	for bin, pkg := range builds {
		// The binaries as released (make build): no race detector, trimmed paths; with -profile
		// the portal has its pprof listener (cmd/portal/pprof.go), nothing else changes.
		args := []string{"build", "-trimpath", "-o", bin}
		if opts.profile != "" && bin == l.portalBin {
			args = append(args, "-tags", "pprof")
		}
		build := exec.CommandContext(ctx, "go", append(args, pkg)...)
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return l, fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}

	spill := filepath.Join(dir, "sim-spill")
	if err := os.Mkdir(spill, 0o700); err != nil {
		return l, err
	}
	var simAddr string
	l.sim, simAddr, err = l.start(ctx, "v2sim", l.simBin, []string{
		"-addr", "127.0.0.1:0", "-customers", strconv.Itoa(simCustomers), "-seed", "1", "-admin", // request log for live_poll_*
		"-memory-cap", strconv.Itoa(simMemoryCap), "-max-upload", strconv.Itoa(simMaxUpload),
	}, []string{"TMPDIR=" + spill}, regexp.MustCompile(`serving the v2 API on (http://[^/\s]+)`))
	if err != nil {
		return l, err
	}
	l.simURL = simAddr

	self, err := os.Executable()
	if err != nil {
		return l, err
	}
	l.proxy, l.proxyURL, err = l.start(ctx, "bare-proxy", self, []string{proxyMode, "-upstream", l.simURL}, nil,
		regexp.MustCompile(`proxy listening on (http://\S+)`))
	if err != nil {
		return l, err
	}
	peerBin, err := l.ensureOAuth2Proxy(ctx)
	if err != nil {
		return l, err
	}
	peerAddr, err := reserveAddr()
	if err != nil {
		return l, err
	}
	l.portal, err = l.newPortal(ctx, "portal", "http://"+peerAddr+oauth2ProxyCallback)
	if err != nil {
		return l, err
	}
	l.peer, l.peerURL, err = l.startOAuth2Proxy(ctx, peerBin, peerAddr, l.portal)
	return l, err
}

// close stops every process (SIGTERM, then SIGKILL) and removes the temporary directory.
func (l *lab) close() {
	l.mu.Lock()
	envs, procs := l.envs, l.procs
	l.envs, l.procs = nil, nil
	l.mu.Unlock()
	for _, e := range envs {
		e.close()
	}
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].stop()
	}
	if l.opts.keep {
		fmt.Fprintf(l.stderr, "portalbench: kept %s\n", l.dir)
		return
	}
	_ = os.RemoveAll(l.dir)
}

// dumpLogs prints the end of every process's log (after a failure).
func (l *lab) dumpLogs(w io.Writer) {
	l.mu.Lock()
	procs := append([]*proc(nil), l.procs...)
	l.mu.Unlock()
	for _, p := range procs {
		fmt.Fprintf(w, "----- last lines of %s's log -----\n%s\n", p.name, p.tail(40))
	}
}

// proc is a child process whose output goes to a log file.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
}

// start runs bin with args and extra environment (on top of ours, without PORTAL_* and OTEL_*), and
// waits until a line of its output matches ready; it returns the first submatch. With ready nil it
// returns once the process started (the caller checks readiness itself).
func (l *lab) start(ctx context.Context, name, bin string, args, env []string, ready *regexp.Regexp) (*proc, string, error) {
	logPath := filepath.Join(l.dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PORTAL_") && !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, "", err
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, "", fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	l.mu.Lock()
	l.procs = append(l.procs, p)
	l.mu.Unlock()

	if ready == nil {
		go func() {
			_, _ = io.Copy(logFile, stdout)
			_ = cmd.Wait()
			logFile.Close()
			close(p.exited)
		}()
		return p, "", nil
	}
	matched := make(chan string, 1)
	go func() {
		// Copy stdout into the log, looking for the ready line.
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if !found {
				if m := ready.FindStringSubmatch(line); m != nil {
					found = true
					matched <- m[1]
				}
			}
		}
		_ = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()

	timer := time.NewTimer(startDeadline)
	defer timer.Stop()
	select {
	case url := <-matched:
		return p, strings.TrimRight(url, "/"), nil
	case <-p.exited:
		return p, "", fmt.Errorf("%s exited before it was ready:\n%s", name, p.tail(30))
	case <-timer.C:
		return p, "", fmt.Errorf("%s: no ready line within %s:\n%s", name, startDeadline, p.tail(30))
	case <-ctx.Done():
		return p, "", ctx.Err()
	}
}

// stop sends SIGTERM and kills the process if it lingers.
func (p *proc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopDeadline):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// tail returns the last n lines of the process's log.
func (p *proc) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// memoryMB returns a memory field of /proc/<pid>/status (VmRSS: resident now, VmHWM: peak resident),
// in MiB.
func (p *proc) memoryMB(field string) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	return statusFieldMB(string(data), field)
}

// cpuSeconds returns the CPU time (user + system) the process has used so far.
func (p *proc) cpuSeconds() (float64, error) { return cpuSecondsOf(strconv.Itoa(p.cmd.Process.Pid)) }

// cpuSecondsOf reads utime + stime of /proc/<pid>/stat ("self" for this process), in seconds
// (USER_HZ is 100 on Linux).
func cpuSecondsOf(pid string) (float64, error) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(data))
}

// parseStatCPU extracts utime + stime (fields 14 and 15) of a /proc/<pid>/stat line, in seconds. The
// command name (field 2) may contain spaces and parentheses, so fields are counted after its last ')'.
func parseStatCPU(stat string) (float64, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("malformed /proc stat %q", stat)
	}
	fields := strings.Fields(stat[end+1:])
	// fields[0] is field 3 (state): utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("malformed /proc stat %q", stat)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc stat %q", stat)
	}
	return (utime + stime) / 100, nil
}

// statusFieldMB parses "VmRSS:   123456 kB" out of a /proc/<pid>/status text, in MiB.
func statusFieldMB(status, field string) (float64, error) {
	for _, line := range strings.Split(status, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok || key != field {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", field, line)
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", field, err)
		}
		return kb / 1024, nil
	}
	return 0, fmt.Errorf("no %s in /proc status", field)
}

// portalEnv is one portal process with its own OpenID provider.
type portalEnv struct {
	name         string
	proc         *proc
	url          string
	idp          *idpServer
	issuer       string // the provider's issuer URL and the portal's client secret there
	clientSecret string
	sessionKey   string
	dataDir      string // PORTAL_DATA_DIR: the state database with the sessions (the default store) lives in it
	databaseURL  string // PORTAL_DATABASE_URL when the state database is PostgreSQL instead
	pprofURL     string // a profiling build's listener (.../debug/pprof/), else empty
}

func (e *portalEnv) close() {
	if e.idp != nil {
		e.idp.close()
	}
}

// newPortal starts the portal binary in production mode (JSON logs at info, the default file sessions) against
// the lab's simulator, with an OpenID provider of its own (benchmark users), and waits for /readyz.
// extraRedirectURIs are other callbacks the provider accepts for the portal's client (a peer's).
func (l *lab) newPortal(ctx context.Context, name string, extraRedirectURIs ...string) (*portalEnv, error) {
	return l.newPortalFrom(ctx, name, l.portalBin, nil, extraRedirectURIs...)
}

// newPortalFrom is newPortal with another portal binary and extra environment.
func (l *lab) newPortalFrom(ctx context.Context, name, bin string, extraEnv []string, extraRedirectURIs ...string) (*portalEnv, error) {
	idpListener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	issuer := "http://" + idpListener.Addr().String()
	secret, key := randomToken(), randomToken()
	env := &portalEnv{name: name, issuer: issuer, clientSecret: secret, sessionKey: key, dataDir: filepath.Join(l.dir, name+"-data")}
	for _, kv := range extraEnv {
		if v, ok := strings.CutPrefix(kv, "PORTAL_DATABASE_URL="); ok {
			env.databaseURL = v
		}
	}
	if l.opts.profile != "" {
		extraEnv = append([]string{"PPROF_ADDR=127.0.0.1:0"}, extraEnv...) // extraEnv may name another
	}
	env.proc, env.url, err = l.start(ctx, name, bin, []string{"-addr", "127.0.0.1:0"}, append([]string{
		"PORTAL_V2_API_URL=" + l.simURL,
		"PORTAL_OIDC_ISSUER=" + issuer,
		"PORTAL_OIDC_CLIENT_ID=" + config.DemoClientID,
		"PORTAL_OIDC_CLIENT_SECRET=" + secret,
		"PORTAL_SESSION_KEYS=" + key,
		// Cookie sessions, as documented (docs/performance.md): signIn reads the access token
		// from the cookie with the portal's key. The file store became the default later.
		"PORTAL_UPLOAD_LIMIT=" + portalUpload,
		"PORTAL_LOG_FORMAT=json",
		"PORTAL_LOG_LEVEL=info",
		"PORTAL_DATA_DIR=" + env.dataDir, // the state database (sessions, people, recent items) and batch jobs of this process
		// The bench users are sales people; the batch archive, the handover and the customer
		// import are served to their roles only (issue 38: the back office's, and the team
		// leads' for the handover, by default), and the latency, backoffice, handover, import and
		// hostile groups use them as those users (the last two groups answered 403 when the
		// handover's and the import's roles came).
		"PORTAL_BATCH_ARCHIVE_ROLES=sales",
		"PORTAL_HANDOVER_ROLES=sales",
		"PORTAL_IMPORT_ROLES=sales",
	}, extraEnv...), regexp.MustCompile(`portal listening on (http://\S+)`))
	if err != nil {
		idpListener.Close()
		return nil, err
	}
	if m := pprofLine.FindStringSubmatch(env.proc.tail(50)); m != nil {
		env.pprofURL = m[1]
	}
	env.idp, err = startIdP(idpListener, issuer, secret, env.url, extraRedirectURIs...)
	if err != nil {
		idpListener.Close()
		return nil, err
	}
	l.mu.Lock()
	l.envs = append(l.envs, env)
	l.mu.Unlock()
	if err := waitReady(ctx, env.url+"/readyz"); err != nil {
		return env, fmt.Errorf("%s: %w", name, err)
	}
	return env, nil
}

// stopPortal stops a portal started with newPortal (and its provider) before the lab ends.
func (l *lab) stopPortal(e *portalEnv) {
	e.proc.stop()
	e.close()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, x := range l.envs {
		if x == e {
			l.envs = append(l.envs[:i], l.envs[i+1:]...)
			break
		}
	}
}

func waitReady(ctx context.Context, url string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(startDeadline)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return errors.New("GET " + url + " did not answer 200 in time (last: " + last + ")")
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.StdEncoding.EncodeToString(b)
}
