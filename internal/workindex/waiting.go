package workindex

import (
	"context"
	"fmt"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// Waiting is a row that has been in its stage since StageSince: what a reminder needs (its
// numbers, its customer, whose it is). It carries no viewer's check: a reminder names the row to
// the people it belongs to (CreatedBy, ChangedBy), who open it with their own token.
type Waiting struct {
	Kind           Kind
	ID             int64
	QuoteID        int64
	CPQID          int32
	CustomerID     int32
	ContractID     int32
	ContractNumber string
	Customer       string
	CreatedBy      string
	ChangedBy      string
	StageSince     time.Time
}

// waitingPage bounds the rows one query of WaitingSince reads.
const waitingPage = 500

// WaitingSince calls fn with every row of kind in stage that entered it before before, oldest
// first: pages of an index range (work_rows_stage_since: kind, stage, stage_since, id), so a scan
// of many rows holds no transaction and little memory. fn's error ends the walk.
func (ix *Index) WaitingSince(ctx context.Context, kind Kind, stage Stage, before time.Time, fn func(Waiting) error) error {
	var afterSince, afterID int64 = -1, 0
	for {
		rows, err := ix.db.SQL.QueryContext(ctx, `SELECT kind, id, quote_id, cpq_id, customer_id, contract_id, contract_number,
			customer, created_by, changed_by, stage_since FROM work_rows
			WHERE kind = $1 AND stage = $2 AND stage_since < $3 AND (stage_since > $4 OR (stage_since = $4 AND id > $5))
			ORDER BY stage_since, id LIMIT $6`,
			string(kind), string(stage), statedb.Micros(before), afterSince, afterID, waitingPage)
		if err != nil {
			return fmt.Errorf("workindex: rows waiting in %s: %w", stage, err)
		}
		var page []Waiting
		for rows.Next() {
			var w Waiting
			var since int64
			if err := rows.Scan(&w.Kind, &w.ID, &w.QuoteID, &w.CPQID, &w.CustomerID, &w.ContractID, &w.ContractNumber,
				&w.Customer, &w.CreatedBy, &w.ChangedBy, &since); err != nil {
				rows.Close()
				return fmt.Errorf("workindex: rows waiting in %s: %w", stage, err)
			}
			w.StageSince = statedb.Time(since)
			page = append(page, w)
			afterSince, afterID = since, w.ID
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("workindex: rows waiting in %s: %w", stage, err)
		}
		for _, w := range page {
			if err := fn(w); err != nil {
				return err
			}
		}
		if len(page) < waitingPage {
			return nil
		}
	}
}
