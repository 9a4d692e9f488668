package jobs

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// tokenCheckingV2 archives slowly and records the tokens it was called with.
type tokenCheckingV2 struct {
	*strictV2
	mu     sync.Mutex
	tokens map[string]int
}

func (v *tokenCheckingV2) archiveOld(ctx context.Context, token, number string) (string, error) {
	v.mu.Lock()
	v.tokens[token]++
	v.mu.Unlock()
	return v.strictV2.archiveOld(ctx, token, number)
}

// Archive implements Archiver (the archive's time unsaid).
func (v *tokenCheckingV2) Archive(ctx context.Context, token, number string) (string, time.Time, error) {
	id, err := v.archiveOld(ctx, token, number)
	return id, time.Time{}, err
}

// TestTokenSealedAtRestAndTakenAwayAtSignOut: the database never holds the access token; the
// owner's sign-out pauses the batch and deletes its token; their next token resumes it; the
// finished batch holds no token.
func TestTokenSealedAtRestAndTakenAwayAtSignOut(t *testing.T) {
	statedbtest.Each(t, testTokenSealedAtRestAndTakenAwayAtSignOut)
}

func testTokenSealedAtRestAndTakenAwayAtSignOut(t *testing.T, db *statedb.DB) {
	sealer, err := session.NewSealer([]string{strings.Repeat("5a", 32)}, "batch token")
	if err != nil {
		t.Fatal(err)
	}
	v2 := &tokenCheckingV2{strictV2: &strictV2{archived: map[string]bool{}, delay: 5 * time.Millisecond}, tokens: map[string]int{}}
	m := NewManager(Options{DB: db, Archiver: v2, Concurrency: 2, Sealer: sealer})
	defer m.Close()
	ctx := context.Background()
	const first, second = "eyJ.first-access-token.sig", "eyJ.second-access-token.sig"
	j, _ := m.Create(ctx, "alice", "", items(200))
	if _, err := m.Start(ctx, j.ID, "alice", first, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, m, j.ID, func(j *Job) bool { return j.Counts().Done >= 5 })
	rawHolds := func(token string) bool {
		// Every column of the job's row, as text or bytes.
		var raw []byte
		var tokenID, owner string
		if err := db.SQL.QueryRowContext(ctx, `SELECT token, token_id, owner FROM jobs WHERE id = $1`, j.ID).Scan(&raw, &tokenID, &owner); err != nil {
			t.Fatal(err)
		}
		raw = append(append(raw, tokenID...), owner...)
		return bytes.Contains(raw, []byte(token)) || bytes.Contains(raw, []byte("access-token"))
	}
	if rawHolds(first) {
		t.Fatal("the database holds the access token")
	}

	if err := m.PauseOwner(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	paused := waitFor(t, m, j.ID, func(j *Job) bool { return j.WaitingForSignIn && j.Counts().Running == 0 })
	if paused.Token != "" || !paused.Active() || paused.Counts().Left == 0 {
		t.Fatalf("after sign-out: token kept %v, %s, %+v", paused.Token != "", paused.Status, paused.Counts())
	}
	v2.mu.Lock()
	callsAtPause := v2.tokens[first]
	v2.mu.Unlock()
	time.Sleep(4 * flushInterval) // a paused batch sends nothing
	v2.mu.Lock()
	if v2.tokens[first] != callsAtPause || v2.tokens[""] != 0 {
		t.Fatalf("calls after sign-out: %v (had %d)", v2.tokens, callsAtPause)
	}
	v2.mu.Unlock()

	if err := m.HandOverToken(ctx, j.ID, "alice", second, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	end := waitFor(t, m, j.ID, func(j *Job) bool { return j.Status == StatusFinished })
	if end.Token != "" || end.TokenID != "" || rawHolds(second) {
		t.Fatal("the finished batch keeps its token")
	}
	v2.mu.Lock()
	defer v2.mu.Unlock()
	if v2.tokens[second] == 0 || v2.doubles != 0 || len(v2.archived) != 200 {
		t.Fatalf("tokens %v, %d archived, %d twice", v2.tokens, len(v2.archived), v2.doubles)
	}
}
