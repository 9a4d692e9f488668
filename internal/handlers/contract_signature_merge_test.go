package handlers

import (
	"testing"

	"github.com/cpqportal/portal/internal/apiclient"
)

// TestContractWithRequest: the signature answer is put into a contract read before or after the
// service recorded it, the same either way; an answer that does not say what it made is not used.
func TestContractWithRequest(t *testing.T) {
	t.Parallel()
	removed := apiclient.SignatureRequest{SignatureRequestID: "1", ContractID: 7, Status: "REMOVED"}
	answer := &apiclient.SignatureRequest{SignatureRequestID: "2", ContractID: 7, Email: "sam@example.com", Status: "SENT"}
	before := &apiclient.Contract{ContractID: 7, Status: "GENERATED", SignatureRequests: []apiclient.SignatureRequest{removed}}
	after := &apiclient.Contract{ContractID: 7, Status: "SIGNATURE_REQUESTED", SignatureRequests: []apiclient.SignatureRequest{removed, *answer}}
	for name, read := range map[string]*apiclient.Contract{"read before": before, "read after": after} {
		merged, ok := contractWithRequest(read, answer)
		if !ok {
			t.Fatalf("%s: answer not used", name)
		}
		if got, want := contractChangeTag(merged), contractChangeTag(after); got != want {
			t.Errorf("%s: tag %s, want the contract's own %s (status %s, %d requests)", name, got, want, merged.Status, len(merged.SignatureRequests))
		}
		if active, ok := merged.ActiveSignatureRequest(); !ok || active.Email != "sam@example.com" {
			t.Errorf("%s: no active request", name)
		}
	}
	if len(before.SignatureRequests) != 1 || before.Status != "GENERATED" {
		t.Error("the contract read was changed in place")
	}
	archived := &apiclient.Contract{ContractID: 7, Status: "ARCHIVED", Archive: apiclient.ArchiveState{Archived: true}}
	if merged, _ := contractWithRequest(archived, answer); merged.Status != "ARCHIVED" {
		t.Errorf("an archived contract became %s", merged.Status)
	}
	for name, bad := range map[string]*apiclient.SignatureRequest{
		"no answer":        nil,
		"no id":            {ContractID: 7, Status: "SENT"},
		"no status":        {SignatureRequestID: "2", ContractID: 7},
		"another contract": {SignatureRequestID: "2", ContractID: 8, Status: "SENT"},
	} {
		if _, ok := contractWithRequest(before, bad); ok {
			t.Errorf("%s: used", name)
		}
	}
}
