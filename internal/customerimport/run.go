package customerimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
)

// The run of an import is a job of the job engine (internal/jobs, kind jobs.KindCustomerImport):
// one job line per line of the file, the included ones pending (each one POST /v2/customer with
// the job owner's token), the others left out with the dry run's reason. The engine durably marks
// a line as maybe sent before its create; before such a line is ever sent again (after a crash, a
// takeover, an outage, a retry) Check looks the customer up by tax id, and a customer found counts
// as created by the line: the v2 create has no idempotency key, the tax id is the only key the v2
// API enforces (a second customer with the same tax id is refused).

// NoteCreatedBeforeInterruption is the note of a line whose customer the check found.
const NoteCreatedBeforeInterruption = "customer created before the job was interrupted"

// RunLine is what one line of a run sends: the file's row and the customer's fields, and the
// configurator whose customer search finds the customer by tax id (Sender.CPQID).
type RunLine struct {
	// File is the uploaded file's name (the run's title).
	File   string               `json:"file,omitempty"`
	Row    int                  `json:"row"`
	Fields customerrules.Fields `json:"fields"`
	CPQID  int64                `json:"cpqId"`
}

// RunResult is what a done line records (jobs.Item.Result): the new customer's id.
type RunResult struct {
	CustomerID int32 `json:"customerId"`
}

// RunItem is the job line of stored line l: pending when it is included, else left out with the
// dry run's reason.
func RunItem(file string, l StoredLine, cpqID int64) (jobs.Item, error) {
	payload, err := json.Marshal(RunLine{File: file, Row: l.Row, Fields: l.Fields, CPQID: cpqID})
	if err != nil {
		return jobs.Item{}, fmt.Errorf("customerimport: encode row %d: %w", l.Row, err)
	}
	it := jobs.Item{Line: l.Position + 1, Number: l.Fields.TaxID, Customer: l.Fields.Name, Status: jobs.ItemPending, Payload: string(payload)}
	if !l.Included || !l.Verdict.Includable() {
		it.Status, it.Problem = jobs.ItemRejected, skipReason(l)
	}
	return it, nil
}

// skipReason is why a line is not sent.
func skipReason(l StoredLine) i18n.Message {
	switch l.Verdict {
	case VerdictInvalid:
		return i18n.M("import.run.skipped_invalid")
	case VerdictDuplicate:
		return i18n.M("import.run.skipped_duplicate")
	}
	return i18n.M("import.run.skipped")
}

// RunLineOf reads a job line's payload.
func RunLineOf(it jobs.Item) (RunLine, error) {
	var l RunLine
	if err := json.Unmarshal([]byte(it.Payload), &l); err != nil {
		return RunLine{}, fmt.Errorf("customerimport: decode line %d: %w", it.Line, err)
	}
	return l, nil
}

// RunResultOf reads a done line's result (zero when it has none).
func RunResultOf(it jobs.Item) RunResult {
	var r RunResult
	_ = json.Unmarshal([]byte(it.Result), &r)
	return r
}

// Kind is the import's run as a jobs.Kind on the v2 API. The customers it creates reach the rest
// of the portal through the job engine's Effects (jobs.Outcome.Customer).
type Kind struct {
	API *apiclient.Client
}

func resultOf(c *apiclient.Customer) string {
	raw, _ := json.Marshal(RunResult{CustomerID: c.ID})
	return string(raw)
}

// Send implements jobs.Kind: POST /v2/customer with the line's fields.
func (k *Kind) Send(ctx context.Context, token string, it jobs.Item) (jobs.Outcome, error) {
	l, err := RunLineOf(it)
	if err != nil {
		return jobs.Outcome{}, err
	}
	c, err := Sender{API: k.API, CPQID: l.CPQID}.Send(ctx, token, Line{Row: l.Row, Fields: l.Fields})
	if err != nil {
		return jobs.Outcome{}, v2Error(err)
	}
	return jobs.Outcome{Result: resultOf(c), Customer: c}, nil
}

// Check implements jobs.Kind: the customer looked up by tax id; found, the line is done with it.
// A line without a tax id (the dry run never includes one: the form requires it) cannot be
// checked: the check answers an error, so the engine never sends it again and it stays "not
// verified" for a person to check by hand.
func (k *Kind) Check(ctx context.Context, token string, it jobs.Item) (jobs.Outcome, bool, error) {
	l, err := RunLineOf(it)
	if err != nil {
		return jobs.Outcome{}, false, err
	}
	if l.Fields.TaxID == "" || l.CPQID <= 0 {
		return jobs.Outcome{}, false, &jobs.ProblemError{Message: i18n.M("import.run.unverifiable"),
			Err: fmt.Errorf("customerimport: row %d has no tax id to look up", l.Row)}
	}
	c, found, err := Sender{API: k.API, CPQID: l.CPQID}.FindByTaxID(ctx, token, l.Fields.TaxID)
	if err != nil {
		return jobs.Outcome{}, false, v2Error(err)
	}
	if !found {
		return jobs.Outcome{}, false, nil
	}
	return jobs.Outcome{Result: resultOf(c), Note: NoteCreatedBeforeInterruption, Customer: c}, true, nil
}

// RunNoteMessage is a run line's note for a person (zero when none).
func RunNoteMessage(it jobs.Item) i18n.Message {
	if it.Note == NoteCreatedBeforeInterruption {
		return i18n.M("import.run.note.created_before_interruption")
	}
	return it.NoteMessage()
}

// v2Error is jobs.V2Error in the import's words.
func v2Error(err error) error {
	err = jobs.V2Error(err)
	var pe *jobs.ProblemError
	if errors.As(err, &pe) {
		// The handover's words: the customer service, not the contract one.
		switch pe.Message.Key {
		case "batch.line.v2_status":
			pe.Message.Key = "handover.line.v2_status"
		case "batch.line.v2_timeout":
			pe.Message.Key = "handover.line.v2_timeout"
		case "batch.line.v2_unreachable":
			pe.Message.Key = "handover.line.v2_unreachable"
		}
	}
	return err
}
