package apiclient

import "context"

// SignaturesService holds the signature-request calls of spec section 4.3.
type SignaturesService service

// SignatureInput is the body of a signature request (A7).
type SignatureInput struct {
	ContractID int32  `json:"contractId"`
	Email      string `json:"email"`
	SignerName string `json:"signerName"`
	Message    string `json:"message"`
}

// Create sends a request to sign the contract by e-mail (one active request
// per contract: a second answers 409).
func (s *SignaturesService) Create(ctx context.Context, in SignatureInput) (*SignatureRequest, error) {
	out := new(SignatureRequest)
	if _, err := s.client.doJSON(ctx, &call{endpoint: EndpointSignatureCreate, json: in}, out, '{'); err != nil {
		return nil, err
	}
	return out, nil
}

// Delete removes the contract's active signature request (query parameter
// contractId: DELETE bodies are dropped by many proxies, A7).
func (s *SignaturesService) Delete(ctx context.Context, contractID int32) error {
	_, err := s.client.doJSON(ctx, &call{
		endpoint: EndpointSignatureDelete,
		query:    []param{id32("contractId", contractID)},
	}, nil, 0)
	return err
}
