// Package handover is the job kind that hands customers over from one owner to another
// (issue 34, docs/backoffice.md "Hand customers over"): one line per customer, each line one
// PUT /v2/customer/{id}/owner/change (spec 4.5, docs/v2-assumptions.md A8) with the job owner's
// token, run by the job engine (internal/jobs) with its guarantees: a line is durably marked as
// maybe sent before its call, and a line that may have been sent is never sent again before the
// customer is read back (GET /v2/customer/{id}): the change is done when the new owner is among
// its owners and the old one is not.
//
// The v2 API's change is not idempotent by key, but it is by state: a second change of the same
// line names an old owner the customer no longer has and is refused (422). The check before a
// resend keeps that refusal from ever happening to a line of ours, so a line is never reported
// failed for a change that took effect.
package handover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
)

// MaxCustomers bounds the customers of one handover (one line each; a job's lines are rows of the
// state database, and the preview lists them).
const MaxCustomers = 10_000

// NoteChangedBeforeInterruption is the note of a line whose change the check found done.
const NoteChangedBeforeInterruption = "owner changed before the job was interrupted"

// NoteReleased is the note of a Release line done: the new owner owned the customer already, and
// the old owner was removed.
const NoteReleased = "the new owner owned it already; the old owner removed"

// Line is what one line of a handover does: customer's owner From becomes To.
type Line struct {
	CustomerID int32 `json:"customerId"`
	From       int64 `json:"from"`
	To         int64 `json:"to"`
	// Release: To owns the customer already, beside From. The owner change refuses an owner the
	// customer has, so the line sets the customer's owners to those it has without From instead
	// (PUT /v2/customer/{id}/owners); the end state is the same: To owns it, From does not.
	Release bool `json:"release,omitempty"`
	// ToEmail is the new owner's e-mail address as the v2 API's customer list names them ("" when
	// it names none): the inbox tells the person who signs in with it (NewOwner).
	ToEmail string `json:"toEmail,omitempty"`
}

// Item is the job line of l (pending), named by the customer's id and name.
func Item(position int, l Line, customer string) (jobs.Item, error) {
	payload, err := json.Marshal(l)
	if err != nil {
		return jobs.Item{}, fmt.Errorf("handover: encode a line: %w", err)
	}
	return jobs.Item{Line: position + 1, Number: strconv.FormatInt(int64(l.CustomerID), 10), Customer: customer,
		Status: jobs.ItemPending, Payload: string(payload)}, nil
}

// LineOf reads a job line's payload.
func LineOf(it jobs.Item) (Line, error) {
	var l Line
	if err := json.Unmarshal([]byte(it.Payload), &l); err != nil {
		return Line{}, fmt.Errorf("handover: decode line %d: %w", it.Line, err)
	}
	if l.CustomerID <= 0 || l.From <= 0 || l.To <= 0 {
		return Line{}, fmt.Errorf("handover: line %d names no customer or owner", it.Line)
	}
	return l, nil
}

// NewOwner is whom an ended handover gave customers to: the new owner's e-mail address as the
// v2 API named it when the handover was started, and how many of its lines took effect ("" and 0
// when none did or the list named no address). The inbox tells that person (inbox.Options.NewOwner).
func NewOwner(j *jobs.Job) (email string, customers int) {
	if j.Kind != jobs.KindHandover {
		return "", 0
	}
	for _, it := range j.Items {
		if it.Status != jobs.ItemDone {
			continue
		}
		l, err := LineOf(it)
		if err != nil || l.ToEmail == "" {
			continue
		}
		email = l.ToEmail
		customers++
	}
	return email, customers
}

// Result is what a done line records (jobs.Item.Result): the customer's owners after the change.
type Result struct {
	Owners []int64 `json:"owners"`
}

// ResultOf reads a done line's result (zero when it has none).
func ResultOf(it jobs.Item) Result {
	var r Result
	_ = json.Unmarshal([]byte(it.Result), &r)
	return r
}

// Kind is the handover as a jobs.Kind on the v2 API. What a line changed reaches the rest of the
// portal through the job engine's Effects (jobs.Outcome.Customer).
type Kind struct {
	API *apiclient.Client
}

// Send implements jobs.Kind: PUT /v2/customer/{id}/owner/change {"currentOwnerId", "newOwnerId"}.
func (k *Kind) Send(ctx context.Context, token string, it jobs.Item) (jobs.Outcome, error) {
	l, err := LineOf(it)
	if err != nil {
		return jobs.Outcome{}, err
	}
	if l.Release {
		return k.release(ctx, token, l)
	}
	c, err := k.API.Customers.ChangeOwner(apiclient.WithToken(ctx, token), l.CustomerID, l.From, l.To)
	if err != nil {
		return jobs.Outcome{}, v2Error(err)
	}
	return jobs.Outcome{Result: resultOf(c), Customer: c}, nil
}

// release removes l.From from the owners of a customer l.To owns already: the customer is read,
// and its owners set to those it has without From. When To no longer owns it (someone removed
// them since the preview), the line is an owner change after all.
func (k *Kind) release(ctx context.Context, token string, l Line) (jobs.Outcome, error) {
	ctx = apiclient.WithToken(ctx, token)
	c, err := k.API.Customers.Get(ctx, l.CustomerID)
	if err != nil {
		return jobs.Outcome{}, v2Error(err)
	}
	if Done(c, l) {
		return jobs.Outcome{Result: resultOf(c), Note: NoteReleased, Customer: c}, nil
	}
	owners := make([]int64, 0, len(c.Owners))
	hasTo := false
	for _, o := range c.Owners {
		hasTo = hasTo || o.OwnerID == l.To
		if o.OwnerID != l.From {
			owners = append(owners, o.OwnerID)
		}
	}
	if !hasTo {
		c, err = k.API.Customers.ChangeOwner(ctx, l.CustomerID, l.From, l.To)
		if err != nil {
			return jobs.Outcome{}, v2Error(err)
		}
		return jobs.Outcome{Result: resultOf(c), Customer: c}, nil
	}
	if c, err = k.API.Customers.SetOwners(ctx, l.CustomerID, owners); err != nil {
		return jobs.Outcome{}, v2Error(err)
	}
	return jobs.Outcome{Result: resultOf(c), Note: NoteReleased, Customer: c}, nil
}

// Check implements jobs.Kind: GET /v2/customer/{id}; done when To is an owner and From is not.
func (k *Kind) Check(ctx context.Context, token string, it jobs.Item) (jobs.Outcome, bool, error) {
	l, err := LineOf(it)
	if err != nil {
		return jobs.Outcome{}, false, err
	}
	c, err := k.API.Customers.Get(apiclient.WithToken(ctx, token), l.CustomerID)
	if errors.Is(err, apiclient.ErrNotFound) {
		// Gone: nothing to change; the change call says so in the line's words.
		return jobs.Outcome{}, false, nil
	}
	if err != nil {
		return jobs.Outcome{}, false, v2Error(err)
	}
	if !Done(c, l) {
		return jobs.Outcome{}, false, nil
	}
	return jobs.Outcome{Result: resultOf(c), Note: NoteChangedBeforeInterruption, Customer: c}, true, nil
}

// Done reports whether customer c is handed over as l says: To owns it, From does not.
func Done(c *apiclient.Customer, l Line) bool {
	var to, from bool
	for _, o := range c.Owners {
		to = to || o.OwnerID == l.To
		from = from || o.OwnerID == l.From
	}
	return to && !from
}

func resultOf(c *apiclient.Customer) string {
	ids := make([]int64, 0, len(c.Owners))
	for _, o := range c.Owners {
		ids = append(ids, o.OwnerID)
	}
	slices.Sort(ids)
	raw, _ := json.Marshal(Result{Owners: ids})
	return string(raw)
}

// NoteMessage is a handover line's note for a person (zero when none).
func NoteMessage(it jobs.Item) i18n.Message {
	switch it.Note {
	case NoteChangedBeforeInterruption:
		return i18n.M("handover.note.changed_before_interruption")
	case NoteReleased:
		return i18n.M("handover.note.released")
	}
	return it.NoteMessage()
}

// v2Error is jobs.V2Error in the handover's words (the customer service, not the contract one).
func v2Error(err error) error {
	err = jobs.V2Error(err)
	var pe *jobs.ProblemError
	if errors.As(err, &pe) {
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
