package apiclient

import (
	"context"
	"fmt"
	"net/http"
)

// ContractsService holds contract generation (4.2), retrieval, archiving and
// the validation audits (4.4).
type ContractsService service

// GenerateResult is the answer of a contract generation: the contract
// document, or the PDF itself when the service answers with it (A7). Exactly
// one of Contract and PDF is set; the caller must Close the result.
type GenerateResult struct {
	// Created is true when the contract was generated now (201), false when
	// the quote already had one (200).
	Created  bool
	Contract *Contract
	PDF      *Download
	// ContractID and ContractNumber come from the document, or from the
	// X-Contract-Id and X-Contract-Number headers of a PDF answer (zero and
	// "" when absent).
	ContractID     int32
	ContractNumber string
}

// Close closes the PDF body, if any.
func (g *GenerateResult) Close() error {
	if g == nil || g.PDF == nil {
		return nil
	}
	return g.PDF.Close()
}

// Generate generates the contract of a quote (empty body). It asks for JSON
// or PDF and copes with both (A7).
func (s *ContractsService) Generate(ctx context.Context, quoteID int64) (*GenerateResult, error) {
	req, resp, err := s.client.doStream(ctx, &call{
		endpoint:  EndpointContractGenerate,
		params:    []param{id64("quoteId", quoteID)},
		emptyBody: true,
		accept:    "application/json, application/pdf",
	})
	if err != nil {
		return nil, err
	}
	res := &GenerateResult{Created: resp.StatusCode == http.StatusCreated}
	if isMediaType(resp.Header.Get("Content-Type"), "application/pdf") {
		res.PDF = newDownload(resp)
		if id, err := ParseID32(resp.Header.Get("X-Contract-Id")); err == nil {
			res.ContractID = id
		}
		if n := resp.Header.Get("X-Contract-Number"); segment("contractNumber", n).err == nil {
			res.ContractNumber = n
		}
		return res, nil
	}
	defer closeBody(resp.Body)
	contract := new(Contract)
	if err := s.client.decodeJSON(resp.Body, resp.ContentLength, contract, '{'); err != nil {
		return nil, fmt.Errorf("apiclient: %s %s (%s): %w", req.Method, req.URL.EscapedPath(), EndpointContractGenerate, err)
	}
	res.Contract = contract
	res.ContractID, res.ContractNumber = contract.ContractID, contract.ContractNumber
	return res, nil
}

// Get returns a contract by id.
func (s *ContractsService) Get(ctx context.Context, contractID int32) (*Contract, error) {
	return s.contract(ctx, &call{endpoint: EndpointContractGet, params: []param{id32("contractId", contractID)}})
}

// GetByNumber returns a contract by its number, sent as one escaped path
// segment.
func (s *ContractsService) GetByNumber(ctx context.Context, contractNumber string) (*Contract, error) {
	return s.contract(ctx, &call{
		endpoint: EndpointContractGetByNumber,
		params:   []param{segment("contractnumber", contractNumber)},
	})
}

// DownloadPDF streams a contract's PDF: GET /v2/contract/{contractId} with
// Accept: application/pdf (content negotiation, A7). The caller must close
// the result.
func (s *ContractsService) DownloadPDF(ctx context.Context, contractID int32) (*Download, error) {
	return s.pdf(ctx, &call{
		endpoint: EndpointContractGet,
		params:   []param{id32("contractId", contractID)},
		accept:   "application/pdf",
	})
}

// Archive archives a contract (a GET, idempotent: archiving again answers the
// same archive, A7).
func (s *ContractsService) Archive(ctx context.Context, contractNumber string) (*ArchiveResult, error) {
	out := new(ArchiveResult)
	if _, err := s.client.doJSON(ctx, &call{
		endpoint: EndpointContractArchive,
		params:   []param{segment("contractNumber", contractNumber)},
	}, out, '{'); err != nil {
		return nil, err
	}
	return out, nil
}

// DigitalArchivePayload returns the archive payload of an archived contract
// (409 before it is archived, A7).
func (s *ContractsService) DigitalArchivePayload(ctx context.Context, contractNumber string) (*DigitalArchivePayload, error) {
	out := new(DigitalArchivePayload)
	if _, err := s.client.doJSON(ctx, &call{
		endpoint: EndpointContractDigitalArchivePayload,
		params:   []param{segment("contractNumber", contractNumber)},
	}, out, '{'); err != nil {
		return nil, err
	}
	return out, nil
}

// ValidationAudit returns the JSON validation audit of a quote.
func (s *ContractsService) ValidationAudit(ctx context.Context, quoteID int64) (*ValidationAudit, error) {
	out := new(ValidationAudit)
	if _, err := s.client.doJSON(ctx, &call{
		endpoint: EndpointContractValidationAudit,
		params:   []param{id64("quoteId", quoteID)},
	}, out, '{'); err != nil {
		return nil, err
	}
	return out, nil
}

// ValidationAuditPDF streams the PDF validation audit of a quote. The caller
// must close the result.
func (s *ContractsService) ValidationAuditPDF(ctx context.Context, quoteID int64) (*Download, error) {
	return s.pdf(ctx, &call{
		endpoint: EndpointContractValidationAuditPDF,
		params:   []param{id64("quoteId", quoteID)},
		accept:   "application/pdf",
	})
}

func (s *ContractsService) contract(ctx context.Context, cl *call) (*Contract, error) {
	out := new(Contract)
	if _, err := s.client.doJSON(ctx, cl, out, '{'); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *ContractsService) pdf(ctx context.Context, cl *call) (*Download, error) {
	req, resp, err := s.client.doStream(ctx, cl)
	if err != nil {
		return nil, err
	}
	return expectPDF(cl.endpoint, req, newDownload(resp))
}
