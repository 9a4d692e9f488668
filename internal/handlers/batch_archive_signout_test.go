package handlers

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/internal/v2sim"
)

// jwtShape is a JWT's start: a base64url header beginning "eyJ", then a dot.
var jwtShape = regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.`)

// TestBatchArchiveSignOutPausesTheBatchAndDeletesItsToken: while a batch runs, the raw store holds
// its token sealed only; the owner signs out, and the batch pauses (waiting for a sign-in) with
// no token left in the store and no archive call sent after the calls in flight.
func TestBatchArchiveSignOutPausesTheBatchAndDeletesItsToken(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	var numbers []string
	for range 10 {
		_, c := e.newContract(t)
		numbers = append(numbers, c.ContractNumber)
	}
	posted := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {strings.Join(numbers, "\n")}, "include_unsent": {"1"}})
	batchPath := posted.Header.Get("Location")
	if posted.StatusCode != http.StatusSeeOther {
		t.Fatalf("check: %d", posted.StatusCode)
	}
	id := batchPath[strings.LastIndex(batchPath, "/")+1:]
	e.sim.SetFault("contracts.archive", v2sim.Fault{Delay: 300 * time.Millisecond})
	if started := postForm(t, e.p, e.user, batchPath+"/start", url.Values{}); started.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", started.StatusCode)
	}
	// The token as the database holds it, and the job.
	raw := func() (string, *jobs.Job) {
		var token []byte
		if err := e.p.db.SQL.QueryRowContext(context.Background(), `SELECT token FROM jobs WHERE id = $1`, id).Scan(&token); err != nil {
			t.Fatal(err)
		}
		j, err := e.p.jobs.Get(context.Background(), id, "demo-backoffice")
		if err != nil {
			t.Fatal(err)
		}
		return string(token), j
	}
	text, _ := raw()
	// A JWT is base64url parts joined by dots, starting "eyJ"; the sealed form's base64url has no
	// dot, so "eyJ" alone may occur in it by chance (about once in 400 runs), a JWT's "eyJ…." never.
	if !strings.HasPrefix(text, "sealed1.") || jwtShape.MatchString(strings.TrimPrefix(text, "sealed1.")) {
		t.Fatalf("the running batch's token is not sealed in the database: %.400s", text)
	}
	if out := e.p.do(t, e.user, http.MethodPost, "/auth/logout", nil, map[string]string{"Origin": e.p.URL}); out.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %d", out.StatusCode)
	}
	deadline := time.Now().Add(10 * time.Second)
	var running *jobs.Job
	for {
		text, running = raw()
		if running.WaitingForSignIn && running.Counts().Running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the batch did not pause after sign-out: %s %+v", running.Status, running.Counts())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if text != "" || running.Token != "" || !running.Active() || running.Counts().Left == 0 {
		t.Fatalf("after sign-out: token kept %v, %s, %+v", text != "", running.Status, running.Counts())
	}
	sent := len(e.requestsTo("contracts.archive"))
	time.Sleep(700 * time.Millisecond) // a paused batch sends nothing
	if now := len(e.requestsTo("contracts.archive")); now != sent {
		t.Fatalf("%d archive calls after the batch paused", now-sent)
	}
}
