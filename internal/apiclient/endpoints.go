package apiclient

import "net/http"

// Stable endpoint names, used in errors, metrics and the conformance suite.
const (
	// Section 4.1, numbered as in the spec.
	EndpointCPQList                = "cpq.list"                // 1
	EndpointCPQInit                = "cpq.init"                // 2
	EndpointCPQAddCart             = "cpq.addcart"             // 3
	EndpointCPQAddCartToQuote      = "cpq.addcart.toquote"     // 4
	EndpointCPQAddItem             = "cpq.additem"             // 5
	EndpointCPQRemoveItem          = "cpq.item.delete"         // 6
	EndpointCPQRemoveCart          = "cpq.cart.delete"         // 7
	EndpointCPQQuantity            = "cpq.quantity"            // 8
	EndpointCPQValidProducts       = "cpq.validproducts"       // 9
	EndpointCPQTOFList             = "cpq.toflist"             // 10
	EndpointCPQApplicableDiscounts = "cpq.applicablediscounts" // 11
	EndpointCPQApplyDiscounts      = "cpq.applydiscounts"      // 12
	EndpointCPQReprice             = "cpq.reprice"             // 13
	EndpointCPQPackageGet          = "cpq.package.get"         // 14
	EndpointCPQPackageAdd          = "cpq.package.add"         // 15
	EndpointCPQChangePricelist     = "cpq.pricelist.change"    // 16

	// Section 4.2.
	EndpointAttachmentUpload   = "attachments.upload"
	EndpointAttachmentDelete   = "attachments.delete"
	EndpointAttachmentDownload = "attachments.download"
	EndpointContractGenerate   = "contracts.generate"

	// Section 4.3.
	EndpointSignatureCreate = "signatures.create"
	EndpointSignatureDelete = "signatures.delete"

	// Section 4.4. EndpointContractGet also serves the contract PDF
	// (Accept: application/pdf, docs/v2-assumptions.md A7).
	EndpointContractGet                   = "contracts.get"
	EndpointContractGetByNumber           = "contracts.getbynumber"
	EndpointContractArchive               = "contracts.archive"
	EndpointContractDigitalArchivePayload = "contracts.digitalarchivepayload"
	EndpointContractValidationAudit       = "contracts.validationaudit"
	EndpointContractValidationAuditPDF    = "contracts.validationaudit.pdf"

	// Section 4.5.
	EndpointCustomerGet           = "customers.get"
	EndpointCustomerList          = "customers.list"
	EndpointCustomerSearch        = "customers.onlinesearch"
	EndpointCustomerCreate        = "customers.create"
	EndpointCustomerUpdate        = "customers.update"
	EndpointCustomerOwnersUpdate  = "customers.owners.update"
	EndpointCustomerOwnerAdd      = "customers.owner.add"
	EndpointCustomerOwnerChange   = "customers.owner.change"
	EndpointCustomerProfileCreate = "customers.profile.create"
	EndpointCustomerProfileDelete = "customers.profile.delete"
)

// SessionRule says how an endpoint treats the X-SessionId header (rule R4,
// spec section 5, docs/v2-assumptions.md A3).
type SessionRule int

const (
	// SessionNotUsed: sections 4.2 to 4.5; the client does not send it.
	SessionNotUsed SessionRule = iota
	// SessionRequired: calls 3 to 9 and 11 to 16 carry it.
	SessionRequired
	// SessionForbidden: calls 1, 2 and 10 are made without it.
	SessionForbidden
)

// String names the rule.
func (r SessionRule) String() string {
	switch r {
	case SessionRequired:
		return "required"
	case SessionForbidden:
		return "forbidden"
	default:
		return "not used"
	}
}

// Endpoint describes one v2 endpoint.
type Endpoint struct {
	// Name is stable ("customers.get"); see the Endpoint* constants.
	Name string
	// Section of the spec ("4.1" to "4.5") and, in 4.1, the call's number.
	Section string
	Number  int
	// Method and Path as in the spec; Path keeps the {name} placeholders,
	// without their types, in the order the client fills them.
	Method string
	Path   string
	// Query lists the query parameters the client sends (A5, A7, A8).
	Query []string
	// Session is the X-SessionId rule.
	Session SessionRule
}

// Endpoints returns the 38 endpoints of sections 4.1 to 4.5, in spec order.
// The slice is new on each call.
func Endpoints() []Endpoint {
	const g, p, u, d = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete
	req, forb, none := SessionRequired, SessionForbidden, SessionNotUsed
	return []Endpoint{
		{EndpointCPQList, "4.1", 1, g, "/v2/cpq/list", nil, forb},
		{EndpointCPQInit, "4.1", 2, p, "/v2/cpq/{cpqId}/customer/{customerId}/init", nil, forb},
		{EndpointCPQAddCart, "4.1", 3, p, "/v2/cpq/{cpqId}/tof/{tofId}/addcart", nil, req},
		{EndpointCPQAddCartToQuote, "4.1", 4, p, "/v2/cpq/{cpqId}/tof/{tofId}/addcart", []string{"quoteId"}, req},
		{EndpointCPQAddItem, "4.1", 5, p, "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/parent/{parentId}/additemtocart", nil, req},
		{EndpointCPQRemoveItem, "4.1", 6, d, "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/node/{nodeId}/parent/{parentId}", nil, req},
		{EndpointCPQRemoveCart, "4.1", 7, d, "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}", nil, req},
		{EndpointCPQQuantity, "4.1", 8, u, "/v2/cpq/{cpqId}/quote/{quoteId}/basket/{basketId}/quantity", nil, req},
		{EndpointCPQValidProducts, "4.1", 9, g, "/v2/cpq/{cpqId}/tof/{tofId}/validproducts", nil, req},
		{EndpointCPQTOFList, "4.1", 10, g, "/v2/cpq/{cpqId}/customer/{customerId}/quote/{quoteId}/toflist", nil, forb},
		{EndpointCPQApplicableDiscounts, "4.1", 11, g, "/v2/cpq/{cpqId}/quote/{quoteId}/applicableDiscounts", nil, req},
		{EndpointCPQApplyDiscounts, "4.1", 12, u, "/v2/cpq/{cpqId}/quote/{quoteId}/applyDiscounts", nil, req},
		{EndpointCPQReprice, "4.1", 13, u, "/v2/cpq/{cpqId}/quote/{quoteId}/reprice", nil, req},
		{EndpointCPQPackageGet, "4.1", 14, g, "/v2/cpq/{cpqId}/tof/{tofId}/package/{quoteId}", nil, req},
		{EndpointCPQPackageAdd, "4.1", 15, p, "/v2/cpq/{cpqId}/package", nil, req},
		{EndpointCPQChangePricelist, "4.1", 16, u, "/v2/cpq/{cpqId}/quote/{quoteId}/changePricelist", nil, req},

		{EndpointAttachmentUpload, "4.2", 0, p, "/v2/attachment/file/quote/{quoteId}/attachmentType/{attachmentType}", nil, none},
		{EndpointAttachmentDelete, "4.2", 0, d, "/v2/attachment/{attachmentid}/quote/{quoteId}", nil, none},
		{EndpointAttachmentDownload, "4.2", 0, g, "/v2/attachment/{attachmentid}/quote/{quoteId}", nil, none},
		{EndpointContractGenerate, "4.2", 0, p, "/v2/contract/{quoteId}/generate", nil, none},

		{EndpointSignatureCreate, "4.3", 0, p, "/v2/signature", nil, none},
		{EndpointSignatureDelete, "4.3", 0, d, "/v2/signature", []string{"contractId"}, none},

		{EndpointContractGet, "4.4", 0, g, "/v2/contract/{contractId}", nil, none},
		{EndpointContractGetByNumber, "4.4", 0, g, "/v2/contract/bycontractnumber/{contractnumber}", nil, none},
		{EndpointContractArchive, "4.4", 0, g, "/v2/contract/contractNumber/{contractNumber}/archive", nil, none},
		{EndpointContractDigitalArchivePayload, "4.4", 0, g, "/v2/contract/digitalarchivepayload/{contractNumber}", nil, none},
		{EndpointContractValidationAudit, "4.4", 0, g, "/v2/contract/getjsonvalidationaudit/{quoteId}", nil, none},
		{EndpointContractValidationAuditPDF, "4.4", 0, g, "/v2/contract/downloadvalidationauditpdf/{quoteId}", nil, none},

		{EndpointCustomerGet, "4.5", 0, g, "/v2/customer/{id}", nil, none},
		{EndpointCustomerList, "4.5", 0, g, "/v2/customer/", nil, none},
		{EndpointCustomerSearch, "4.5", 0, g, "/v2/customer/onlinesearch/{cpqId}", []string{"query"}, none},
		{EndpointCustomerCreate, "4.5", 0, p, "/v2/customer", nil, none},
		{EndpointCustomerUpdate, "4.5", 0, u, "/v2/customer", nil, none},
		{EndpointCustomerOwnersUpdate, "4.5", 0, u, "/v2/customer/{id}/owners", nil, none},
		{EndpointCustomerOwnerAdd, "4.5", 0, p, "/v2/customer/{id}/owner/{ownerId}", nil, none},
		{EndpointCustomerOwnerChange, "4.5", 0, u, "/v2/customer/{id}/owner/change", nil, none},
		{EndpointCustomerProfileCreate, "4.5", 0, p, "/v2/customer/customerprofile", nil, none},
		{EndpointCustomerProfileDelete, "4.5", 0, d, "/v2/customer/customerprofile", []string{"customerId", "profileId"}, none},
	}
}

func indexEndpoints() map[string]Endpoint {
	all := Endpoints()
	m := make(map[string]Endpoint, len(all))
	for _, e := range all {
		m[e.Name] = e
	}
	return m
}
