package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
)

// V2 is the Archiver of the v2 API (spec 4.4: GET /v2/contract/contractNumber/{n}/archive and
// GET /v2/contract/bycontractnumber/{n}); the client escapes the number as one path segment.
type V2 struct {
	API *apiclient.Client
}

// Archive implements Archiver.
func (v V2) Archive(ctx context.Context, token, number string) (string, time.Time, error) {
	res, err := v.API.Contracts.Archive(apiclient.WithToken(ctx, token), number)
	if err != nil {
		return "", time.Time{}, v2Error(err)
	}
	return string(res.ArchiveID), res.ArchivedAt, nil
}

// ArchiveID implements Archiver.
func (v V2) ArchiveID(ctx context.Context, token, number string) (string, bool, error) {
	c, err := v.API.Contracts.GetByNumber(apiclient.WithToken(ctx, token), number)
	if err != nil {
		return "", false, v2Error(err)
	}
	return string(c.Archive.ArchiveID), c.Archive.Archived || c.Status == "ARCHIVED", nil
}

// ErrRefused is what a Lookup returns for a contract the v2 API does not let the person read
// (403): one refused line of a batch, not a refused batch.
var ErrRefused = errors.New("jobs: contract refused to this person")

// Lookup is Validate's lookup on the v2 API: unknown numbers (404, or a number the service
// refuses with 400) are ErrUnknown, numbers the person may not read (403) ErrRefused.
func (v V2) Lookup(token string) func(ctx context.Context, number string) (Found, error) {
	return func(ctx context.Context, number string) (Found, error) {
		c, err := v.API.Contracts.GetByNumber(apiclient.WithToken(ctx, token), number)
		switch {
		case errors.Is(err, apiclient.ErrNotFound), errors.Is(err, apiclient.ErrBadRequest):
			return Found{}, ErrUnknown
		case errors.Is(err, apiclient.ErrForbidden):
			return Found{}, fmt.Errorf("%w: %w", ErrRefused, err)
		case err != nil:
			return Found{}, fmt.Errorf("jobs: look up contract %q: %w", number, err)
		}
		customer := c.Customer.Name
		if customer == "" {
			customer = fmt.Sprintf("customer %d", c.CustomerID)
		}
		return Found{Customer: customer, Archived: c.Archive.Archived || c.Status == "ARCHIVED", ArchiveID: string(c.Archive.ArchiveID)}, nil
	}
}

// v2Error is the message an item shows for a v2 failure; a refused token pauses the job.
func v2Error(err error) error {
	if errors.Is(err, apiclient.ErrUnauthorized) {
		return fmt.Errorf("%w: %w", ErrTokenRejected, err)
	}
	var apiErr *apiclient.APIError
	if errors.As(err, &apiErr) {
		// The status and the v2 API's own code and message, shown as they come.
		detail := fmt.Sprintf("%d %s", apiErr.Status, http.StatusText(apiErr.Status))
		if apiErr.Code != "" {
			detail += " (" + apiErr.Code + ")"
		}
		if apiErr.Message != "" {
			detail += ": " + apiErr.Message
		}
		return &ProblemError{i18n.M("batch.line.v2_status", detail), errors.New("v2 API answered " + detail)}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &ProblemError{i18n.M("batch.line.v2_timeout"), errors.New("the v2 API did not answer in time")}
	}
	return &ProblemError{i18n.M("batch.line.v2_unreachable"), fmt.Errorf("the v2 API could not be reached: %w", err)}
}
