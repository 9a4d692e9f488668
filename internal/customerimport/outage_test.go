package customerimport

import (
	"math/rand/v2"
	"testing"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestImportDatabaseOutageNeverCreatesACustomerTwice takes the database away at a random moment
// of an import run by two replicas, for a random time: PostgreSQL is stopped (every connection
// cut) and started again on the same data; SQLite's write lock is held by another connection. The
// runners send nothing without a committed in-flight mark, pause, and resume once the database
// answers: every included line's customer exists once, created by one create and none sent
// again, and the job finishes with nothing pending, nothing left marked as maybe sent, and no
// token.
func TestImportDatabaseOutageNeverCreatesACustomerTwice(t *testing.T) {
	statedbtest.EachOutage(t, statedbtest.Runs{Full: 3, Short: 1}, statedbtest.Runs{Full: 2, Short: 1}, outageRun)
}

// outageRun runs a 90-line import on two replicas of db against the simulator and calls down,
// then up, at random moments of it.
func outageRun(t *testing.T, db *statedb.DB, down, up func()) {
	const n = 90
	sim, v2URL, cpqID := importSim(t)
	items, taxes := runLines(t, 90+rand.IntN(9), n, cpqID)
	created := func() int {
		ok, _ := createCalls(sim)
		return len(ok)
	}
	kind.Outage(t, db, v2URL, items, len(taxes), down, up, created)
	checkCreated(t, sim, v2URL, taxes, skippedOf(items))
}
