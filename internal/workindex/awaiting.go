package workindex

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Awaiting is a contract whose next stage the v2 API decides by itself (out for signature: the
// signer answers, or the request runs out), with the people whose token may read it again.
type Awaiting struct {
	ContractID int32
	Number     string
	// Readers are person keys (PersonKey) among those asked about whose token read the contract
	// and was not refused since: its last changer first (who sent it), then its creator, then
	// the others in key order.
	Readers []string
}

// maxAwaiting bounds one answer of AwaitingAnswer (the watcher's budget reads far fewer a minute).
const maxAwaiting = 100_000

// AwaitingAnswer lists the contracts out for signature that at least one of persons (person
// keys) read with their token, for the signature watcher (internal/signwatch): it reads each
// again with one of those readers' tokens. A contract none of them read is not listed: nobody the
// watcher may speak for has seen it.
func (ix *Index) AwaitingAnswer(ctx context.Context, persons []string) ([]Awaiting, error) {
	if len(persons) == 0 {
		return nil, nil
	}
	byID := map[int32]*Awaiting{}
	var order []int32
	type preference struct{ changedBy, createdBy string }
	prefs := map[int32]preference{}
	for batch := range chunks(persons, 500) {
		args := []any{string(KindContract), string(StageSignature)}
		in := placeholders(&args, batch)
		// work_rows_stage_since finds the contracts out for signature, work_viewers' key each reader.
		rows, err := ix.db.SQL.QueryContext(ctx, `SELECT r.id, r.contract_number, r.changed_by, r.created_by, v.person
			FROM work_rows r JOIN work_viewers v ON v.kind = r.kind AND v.id = r.id
			WHERE r.kind = $1 AND r.stage = $2 AND v.person IN (`+in+`)
			ORDER BY r.id LIMIT `+fmt.Sprint(maxAwaiting), args...)
		if err != nil {
			return nil, fmt.Errorf("workindex: contracts awaiting an answer: %w", err)
		}
		for rows.Next() {
			var id int64
			var number, changedBy, createdBy, person string
			if err := rows.Scan(&id, &number, &changedBy, &createdBy, &person); err != nil {
				rows.Close()
				return nil, fmt.Errorf("workindex: contracts awaiting an answer: %w", err)
			}
			a, ok := byID[int32(id)]
			if !ok {
				a = &Awaiting{ContractID: int32(id), Number: number}
				byID[int32(id)] = a
				order = append(order, int32(id))
				prefs[int32(id)] = preference{changedBy, createdBy}
			}
			a.Readers = append(a.Readers, person)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("workindex: contracts awaiting an answer: %w", err)
		}
	}
	slices.Sort(order)
	out := make([]Awaiting, 0, len(order))
	for _, id := range order {
		a := byID[id]
		p := prefs[id]
		rank := func(key string) int {
			switch key {
			case p.changedBy:
				return 0
			case p.createdBy:
				return 1
			}
			return 2
		}
		slices.SortFunc(a.Readers, func(x, y string) int {
			if d := rank(x) - rank(y); d != 0 {
				return d
			}
			return cmp.Compare(x, y)
		})
		out = append(out, *a)
	}
	return out, nil
}
