package workindex

import "slices"

// Stage is where a quote or contract stands in the deal. The v2 API has no quote states and no
// list calls (spec sections 3 and 4.1: "not shown"), so the stage is derived, and only from what
// the v2 API's own documents say (docs/work-index.md, "Stage rules"). Each rule is one branch of
// StageOfContract or StageOfQuote and has its own unit test.
type Stage string

// The stages, in the order a deal passes through them.
const (
	// StageDraft: a quote without a contract (the quote document's contract is null).
	StageDraft Stage = "draft"
	// StageGenerated: a contract exists and is neither out for signature nor archived (also after
	// its signature request was removed).
	StageGenerated Stage = "generated"
	// StageSignature: the contract has an active (SENT) signature request.
	StageSignature Stage = "signature"
	// StageSigned: the signer signed (a signature request SIGNED, the contract's status SIGNED).
	StageSigned Stage = "signed"
	// StageDeclined: the signer declined the latest signature request (DECLINED).
	StageDeclined Stage = "declined"
	// StageExpired: the latest signature request ran out unanswered (EXPIRED).
	StageExpired Stage = "expired"
	// StageArchived: the contract is archived.
	StageArchived Stage = "archived"
)

// Stages lists every stage in deal order (for filters and their labels).
func Stages() []Stage {
	return []Stage{StageDraft, StageGenerated, StageSignature, StageSigned, StageDeclined, StageExpired, StageArchived}
}

// ContractStages lists the stages a contract can have.
func ContractStages() []Stage {
	return []Stage{StageGenerated, StageSignature, StageSigned, StageDeclined, StageExpired, StageArchived}
}

// ParseStage returns the stage named s, or false.
func ParseStage(s string) (Stage, bool) {
	for _, st := range Stages() {
		if string(st) == s {
			return st, true
		}
	}
	return "", false
}

// ContractFacts are the parts of a v2 contract document (GET /v2/contract/{id}, A7) the stage is
// derived from.
type ContractFacts struct {
	// Status is the contract's status: GENERATED, SIGNATURE_REQUESTED, SIGNED or ARCHIVED.
	Status string
	// Archived is archive.archived.
	Archived bool
	// SignatureStatuses are the statuses of the contract's signature requests (SENT, REMOVED,
	// SIGNED, DECLINED or EXPIRED), oldest first (the last is the latest request); nil when the
	// document lists none.
	SignatureStatuses []string
}

// The v2 statuses the rules read (docs/v2-assumptions.md A7).
const (
	v2StatusArchived           = "ARCHIVED"
	v2StatusSignatureRequested = "SIGNATURE_REQUESTED"
	v2StatusSigned             = "SIGNED"
	v2SignatureSent            = "SENT"
	v2SignatureSigned          = "SIGNED"
	v2SignatureDeclined        = "DECLINED"
	v2SignatureExpired         = "EXPIRED"
)

// StageOfContract derives a contract's stage from its v2 document:
//
//  1. archived wins: archive.archived is true or the status is ARCHIVED;
//  2. signed: the status is SIGNED, or a signature request is SIGNED (a signature stays signed,
//     whatever came after it);
//  3. out for signature: a signature request has status SENT;
//  4. out for signature: the status is SIGNATURE_REQUESTED and the document lists no request at
//     all (a v2 that reports the status without the requests);
//  5. declined: the latest request is DECLINED; expired: the latest request is EXPIRED (a request
//     sent after it decides instead);
//  6. otherwise generated: status GENERATED, or the latest request is REMOVED (a removed
//     signature request takes the contract back to generated, whatever the status says).
func StageOfContract(f ContractFacts) Stage {
	if f.Archived || f.Status == v2StatusArchived {
		return StageArchived
	}
	if f.Status == v2StatusSigned || slices.Contains(f.SignatureStatuses, v2SignatureSigned) {
		return StageSigned
	}
	if slices.Contains(f.SignatureStatuses, v2SignatureSent) {
		return StageSignature
	}
	if len(f.SignatureStatuses) == 0 {
		if f.Status == v2StatusSignatureRequested {
			return StageSignature
		}
		return StageGenerated
	}
	switch f.SignatureStatuses[len(f.SignatureStatuses)-1] {
	case v2SignatureDeclined:
		return StageDeclined
	case v2SignatureExpired:
		return StageExpired
	}
	return StageGenerated
}

// StageOfQuote derives a quote's stage: draft when the quote names no contract; otherwise the
// stage of its contract as last seen (contractStage), or generated when the portal has not seen
// the contract itself yet (the quote document says only that one exists).
func StageOfQuote(hasContract bool, contractStage Stage) Stage {
	if !hasContract {
		return StageDraft
	}
	if contractStage == "" || contractStage == StageDraft {
		return StageGenerated
	}
	return contractStage
}
