package signwatch

import "github.com/cpqportal/portal/internal/lease"

// leaseName is the watcher's row in watch_leases.
const leaseName = "signatures"

// leaseColumns are watch_leases' columns (internal/lease takes, renews and releases the row).
var leaseColumns = lease.Columns{Table: "watch_leases", Key: "name", Holder: "holder", Until: "until_at"}
