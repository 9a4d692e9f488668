// Package worksight turns v2 documents into the work index's sightings (internal/workindex): what
// a quote or contract document says, in the index's terms. The pages and the signature watcher
// (internal/signwatch) read contracts with people's tokens and record them the same way, so the
// rules that read a document live here once.
package worksight

import (
	"math"
	"slices"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/workindex"
)

// Cents is an amount of the v2 API (a decimal number of euros) in whole cents.
func Cents(v float64) int64 { return int64(math.Round(v * 100)) }

// ContractFacts are the parts of a contract document the stage rules read
// (workindex.StageOfContract).
func ContractFacts(contract *apiclient.Contract) workindex.ContractFacts {
	f := workindex.ContractFacts{Status: contract.Status, Archived: contract.Archive.Archived}
	// The rules read the latest request last: requests in the order they were sent (a v2 may list
	// them otherwise; docs/v2-assumptions.md A7).
	requests := slices.Clone(contract.SignatureRequests)
	slices.SortStableFunc(requests, func(a, b apiclient.SignatureRequest) int { return a.SentAt.Compare(b.SentAt) })
	for _, r := range requests {
		f.SignatureStatuses = append(f.SignatureStatuses, r.Status)
	}
	return f
}

// Contract is what a contract document says, for the index.
func Contract(contract *apiclient.Contract) workindex.ContractSighting {
	s := contractSighting(contract)
	if latest, ok := contract.LatestSignatureRequest(); ok {
		s.AnsweredAt = latest.AnsweredAt()
		if latest.Status == apiclient.SignatureDeclined {
			s.DeclineReason = latest.DeclineReason
		}
	}
	// When it was sent: the latest request's sentAt while it is out, answered or expired (a
	// removed one sent nothing that is still running).
	if latest, ok := contract.LatestSignatureRequest(); ok && latest.Status != apiclient.SignatureRemoved {
		s.SentAt = latest.SentAt
	}
	// When it was signed, as the signed request says (a signature stays, whatever came after),
	// and when that request was sent (the days to signature).
	for _, r := range contract.SignatureRequests {
		if r.Status == apiclient.SignatureSigned && !r.SignedAt.IsZero() {
			s.SignedAt, s.SentAt = r.SignedAt, r.SentAt
			break
		}
	}
	// When the stage the document shows began, as the v2 API dates it: the archive, else the
	// signer's answer (signed, declined, expired). A change to it is dated so, not by the read.
	switch workindex.StageOfContract(s.Facts) {
	case workindex.StageArchived:
		s.ChangedAt = contract.Archive.ArchivedAt
	case workindex.StageSigned:
		s.ChangedAt = s.SignedAt
	case workindex.StageDeclined, workindex.StageExpired:
		s.ChangedAt = s.AnsweredAt
	}
	return s
}

func contractSighting(contract *apiclient.Contract) workindex.ContractSighting {
	return workindex.ContractSighting{
		ContractID: contract.ContractID, Number: contract.ContractNumber, QuoteID: contract.QuoteID,
		CPQID: contract.CPQID, CustomerID: contract.CustomerID, Customer: contract.Customer.Name,
		Facts: ContractFacts(contract), OneOffCents: Cents(contract.Totals.NetActivation),
		MonthlyCents: Cents(contract.Totals.NetRecurring), CreatedAt: contract.CreatedAt,
	}
}
