package jobs

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cpqportal/portal/internal/session/redistest"
	"github.com/cpqportal/portal/internal/store"
)

// durableRedis is a redis-server persisting every write (append-only file, fsync always) in dir,
// as the manifests run it, that a test can SIGKILL and start again on the same port and dir.
type durableRedis struct {
	t    *testing.T
	port int
	dir  string
	cmd  *exec.Cmd
}

func startDurableRedis(t *testing.T) *durableRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server not found (%v); install it: %s", err, redistest.InstallHint)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	r := &durableRedis{t: t, port: port, dir: t.TempDir()}
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *durableRedis) url() string { return "redis://127.0.0.1:" + strconv.Itoa(r.port) + "/0" }

func (r *durableRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--maxmemory-policy", "noeviction")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.port), MaxRetries: -1})
	defer client.Close()
	for deadline := time.Now().Add(10 * time.Second); client.Ping(context.Background()).Err() != nil; {
		if time.Now().After(deadline) {
			r.t.Fatal("redis-server did not answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *durableRedis) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

// TestRedisKilledMidBatchNeverArchivesTwice: two replicas share a real, persistent redis-server
// that is SIGKILLed at a random moment of the batch and started again a moment later on the same
// data: the batch finishes with every contract archived exactly once.
func TestRedisKilledMidBatchNeverArchivesTwice(t *testing.T) {
	runs := 3
	if testing.Short() {
		runs = 1
	}
	for run := range runs {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			r := startDurableRedis(t)
			v2 := &strictV2{archived: map[string]bool{}, delay: 2 * time.Millisecond}
			newReplica := func() *Manager {
				st, err := store.NewRedis(r.url(), "cpq:state:")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = st.Close() })
				m := NewManager(Options{Store: st, Archiver: v2, Concurrency: 4, LeaseTerm: 600 * time.Millisecond, ScanInterval: 50 * time.Millisecond})
				t.Cleanup(m.Close)
				return m
			}
			a, b := newReplica(), newReplica()
			ctx := context.Background()
			j, err := a.Create(ctx, "alice", "", items(150))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Start(ctx, j.ID, "alice", "token", time.Time{}); err != nil {
				t.Fatal(err)
			}
			a.Run()
			b.Run()
			waitFor(t, a, j.ID, func(j *Job) bool { return j.Counts().Done >= 10+run*30 })
			r.kill()
			time.Sleep(time.Duration(200+run*300) * time.Millisecond)
			r.start()
			var end *Job
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if got, err := a.Get(ctx, j.ID, "alice"); err == nil && got.Status == StatusFinished {
					end = got
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the batch did not finish after redis came back")
				}
			}
			v2.mu.Lock()
			defer v2.mu.Unlock()
			if v2.doubles != 0 || len(v2.archived) != 150 || end.Counts().Done != 150 {
				t.Fatalf("%d archived, %d twice, counts %+v", len(v2.archived), v2.doubles, end.Counts())
			}
			t.Logf("resumes %d, lines checked %d", end.Resumes, end.Verified())
		})
	}
}
