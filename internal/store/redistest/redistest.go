// Package redistest starts a real, throw-away redis-server for tests.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// InstallHint is the command that installs the server (make test runs it).
const InstallHint = "apt-get install -y redis-server"

// Start runs redis-server on a free loopback port without persistence and returns its address
// (host:port). The server is stopped in t.Cleanup. A missing binary fails the test with the install
// command: a test that needs redis must not pass without it.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found (%v); install it: %s", err, InstallHint)
	}
	port, err := freePort()
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	var output bytes.Buffer
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--protected-mode", "yes")
	cmd.Stdout = &output
	cmd.Stderr = &output
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if err := client.Ping(ctx).Err(); err == nil {
			return addr
		}
		select {
		case <-exited:
			t.Fatalf("redis-server exited (%v): %s", waitErr, output.String())
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("redis-server on %s did not answer: %s", addr, output.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("unexpected address %v", l.Addr())
	}
	return addr.Port, nil
}
