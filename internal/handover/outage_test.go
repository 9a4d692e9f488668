package handover

import (
	"testing"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// TestHandoverDatabaseOutageNeverLosesOrDoublesAChange takes the database away at a random moment
// of a handover run by two replicas, for a random time: PostgreSQL is stopped (every connection
// cut) and started again on the same data; SQLite's write lock is held by another connection. The
// runners send nothing without a committed in-flight mark, pause, and resume once the database
// answers: every customer ends owned by the new owner with one owner change each, and the job
// finishes with nothing pending, nothing left marked as maybe sent, and no token.
func TestHandoverDatabaseOutageNeverLosesOrDoublesAChange(t *testing.T) {
	statedbtest.EachOutage(t, statedbtest.Runs{Full: 3, Short: 1}, statedbtest.Runs{Full: 2, Short: 1}, outageRun)
}

// outageRun runs a 90-customer handover on two replicas of db against the simulator and calls
// down, then up, at random moments of it.
func outageRun(t *testing.T, db *statedb.DB, down, up func()) {
	const n = 90
	sim, v2URL, ids := simWithCustomers(t, n)
	changed := func() int {
		ok, _ := changeCalls(sim)
		return len(ok)
	}
	kind.Outage(t, db, v2URL, lines(t, ids), n, down, up, changed)
	checkHandedOver(t, sim, v2URL, ids)
}
