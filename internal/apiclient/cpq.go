package apiclient

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// CPQService holds the configuration-flow calls of spec section 4.1. Calls
// 3 to 9 and 11 to 16 take the configuration session id (rule R4).
type CPQService service

// AddCartRequest is the body of call 3 (A5).
type AddCartRequest struct {
	ProductID       int32  `json:"productId"`
	TOFProductID    int32  `json:"tofProductId"`
	CustomerID      int32  `json:"customerId"`
	CustomerQuoteID int64  `json:"customerQuoteId"` // the customer's own reference; 0 = none
	Label           string `json:"label"`
}

// AddItemRequest is the body of call 5 (A5). ItemUniqueID is generated when
// empty; pass one to make a repeated add answer 409 instead of adding twice.
type AddItemRequest struct {
	OfferTypeID        int32  `json:"offerTypeId"` // the cart's tofId
	ProductID          int32  `json:"productId"`
	OfferTypeProductID int32  `json:"offerTypeProductId"`
	ItemUniqueID       string `json:"itemUniqueId"`
}

// QuantityRequest is the body of call 8.
type QuantityRequest struct {
	Quantity int32 `json:"quantity"`
}

// ApplyDiscountsRequest is the body of call 12: it replaces the quote's
// discounts (A5). Both lists may be empty.
type ApplyDiscountsRequest struct {
	AppliedDiscounts  []int32              `json:"appliedDiscounts"`
	ExtraDiscountList []ExtraDiscountInput `json:"extraDiscountList"`
}

// ExtraDiscountInput is an extra discount with its value.
type ExtraDiscountInput struct {
	DiscountID    int32   `json:"discountId"`
	DiscountValue float64 `json:"discountValue"`
}

// RepriceRequest is the body of call 13: new unit prices of one item.
type RepriceRequest struct {
	ActivationPrice float64 `json:"activationPrice"`
	RecurringPrice  float64 `json:"recurringPrice"`
	BasketID        int64   `json:"basketId"`
	CartItemID      int64   `json:"cartItemId"` // the item's nodeId (A5)
}

// AddPackageRequest is the body of call 15.
type AddPackageRequest struct {
	CustomerID      int32 `json:"customerId"`
	CustomerQuoteID int64 `json:"customerQuoteId"`
	PackageID       int32 `json:"packageId"`
	TOFID           int32 `json:"tofId"`
	QuoteID         int64 `json:"quoteId"`
	AssigneeUserID  int64 `json:"assigneeUserId"`
}

// ChangePricelistRequest is the body of call 16.
type ChangePricelistRequest struct {
	PricelistID int32 `json:"pricelistId"`
	CartID      int64 `json:"cartId"` // a basketId of the quote (A5)
}

// List returns the configurators (call 1, no X-SessionId).
func (s *CPQService) List(ctx context.Context) ([]Configurator, error) {
	var out []Configurator
	_, err := s.client.doJSON(ctx, &call{endpoint: EndpointCPQList}, &out, '[')
	return out, err
}

// Init starts a configuration session for a configurator and a customer
// (call 2: empty body, no X-SessionId).
func (s *CPQService) Init(ctx context.Context, cpqID, customerID int32) (*InitResult, error) {
	out := new(InitResult)
	_, err := s.client.doJSON(ctx, &call{
		endpoint:  EndpointCPQInit,
		params:    []param{id32("cpqId", cpqID), id32("customerId", customerID)},
		emptyBody: true,
	}, out, '{')
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AddCart creates a quote with a first cart holding the given main product
// (call 3).
func (s *CPQService) AddCart(ctx context.Context, sessionID string, cpqID, tofID int32, req AddCartRequest) (*Quote, error) {
	return s.quote(ctx, &call{
		endpoint:  EndpointCPQAddCart,
		params:    []param{id32("cpqId", cpqID), id32("tofId", tofID)},
		sessionID: sessionID,
		json:      req,
	})
}

// AddCartToQuote adds a cart with the TOF's default main product to an
// existing quote (call 4: query quoteId, body {}).
func (s *CPQService) AddCartToQuote(ctx context.Context, sessionID string, cpqID, tofID int32, quoteID int64) (*Quote, error) {
	return s.quote(ctx, &call{
		endpoint:  EndpointCPQAddCartToQuote,
		params:    []param{id32("cpqId", cpqID), id32("tofId", tofID)},
		query:     []param{id64("quoteId", quoteID)},
		sessionID: sessionID,
		json:      struct{}{},
	})
}

// AddItem adds a product or add-on under the parent item of a cart (call 5).
func (s *CPQService) AddItem(ctx context.Context, sessionID string, cpqID int32, quoteID, basketID, parentID int64, req AddItemRequest) (*Quote, error) {
	if req.ItemUniqueID == "" {
		req.ItemUniqueID = uuid.NewString()
	} else if _, err := uuid.Parse(req.ItemUniqueID); err != nil {
		return nil, fmt.Errorf("apiclient: %s: %w: itemUniqueId is not a UUID", EndpointCPQAddItem, ErrInvalidParameter)
	}
	return s.quote(ctx, &call{
		endpoint:  EndpointCPQAddItem,
		params:    []param{id32("cpqId", cpqID), id64("quoteId", quoteID), id64("basketId", basketID), id64("parentId", parentID)},
		sessionID: sessionID,
		json:      req,
	})
}

// RemoveItem removes one item (node) of a cart under its parent (call 6).
func (s *CPQService) RemoveItem(ctx context.Context, sessionID string, cpqID int32, quoteID, basketID, nodeID, parentID int64) error {
	_, err := s.client.doJSON(ctx, &call{
		endpoint: EndpointCPQRemoveItem,
		params: []param{id32("cpqId", cpqID), id64("quoteId", quoteID), id64("basketId", basketID),
			id64("nodeId", nodeID), id64("parentId", parentID)},
		sessionID: sessionID,
	}, nil, 0)
	return err
}

// RemoveCart removes a whole cart from the quote (call 7).
func (s *CPQService) RemoveCart(ctx context.Context, sessionID string, cpqID int32, quoteID, basketID int64) error {
	_, err := s.client.doJSON(ctx, &call{
		endpoint:  EndpointCPQRemoveCart,
		params:    []param{id32("cpqId", cpqID), id64("quoteId", quoteID), id64("basketId", basketID)},
		sessionID: sessionID,
	}, nil, 0)
	return err
}

// SetQuantity changes a cart's quantity (call 8).
func (s *CPQService) SetQuantity(ctx context.Context, sessionID string, cpqID int32, quoteID, basketID int64, quantity int32) (*Quote, error) {
	return s.quote(ctx, &call{
		endpoint:  EndpointCPQQuantity,
		params:    []param{id32("cpqId", cpqID), id64("quoteId", quoteID), id64("basketId", basketID)},
		sessionID: sessionID,
		json:      QuantityRequest{Quantity: quantity},
	})
}

// ValidProducts lists the products that can be added for the TOF (call 9).
func (s *CPQService) ValidProducts(ctx context.Context, sessionID string, cpqID, tofID int32) ([]Product, error) {
	var out []Product
	_, err := s.client.doJSON(ctx, &call{
		endpoint:  EndpointCPQValidProducts,
		params:    []param{id32("cpqId", cpqID), id32("tofId", tofID)},
		sessionID: sessionID,
	}, &out, '[')
	return out, err
}

// TOFList returns the quote document with its TOFs (call 10, no
// X-SessionId). It is how a quote is resumed: the spec has no "get quote"
// call (A4).
func (s *CPQService) TOFList(ctx context.Context, cpqID, customerID int32, quoteID int64) (*Quote, error) {
	return s.quote(ctx, &call{
		endpoint: EndpointCPQTOFList,
		params:   []param{id32("cpqId", cpqID), id32("customerId", customerID), id64("quoteId", quoteID)},
	})
}

// ApplicableDiscounts lists the discounts applicable to the quote (call 11).
func (s *CPQService) ApplicableDiscounts(ctx context.Context, sessionID string, cpqID int32, quoteID int64) ([]Discount, error) {
	var out []Discount
	_, err := s.client.doJSON(ctx, &call{
		endpoint:  EndpointCPQApplicableDiscounts,
		params:    []param{id32("cpqId", cpqID), id64("quoteId", quoteID)},
		sessionID: sessionID,
	}, &out, '[')
	return out, err
}

// ApplyDiscounts replaces the quote's applied and extra discounts (call 12).
func (s *CPQService) ApplyDiscounts(ctx context.Context, sessionID string, cpqID int32, quoteID int64, req ApplyDiscountsRequest) (*Quote, error) {
	// Empty lists are sent as [] rather than null: "both arrays may be empty" (A5).
	if req.AppliedDiscounts == nil {
		req.AppliedDiscounts = []int32{}
	}
	if req.ExtraDiscountList == nil {
		req.ExtraDiscountList = []ExtraDiscountInput{}
	}
	return s.quote(ctx, &call{
		endpoint:  EndpointCPQApplyDiscounts,
		params:    []param{id32("cpqId", cpqID), id64("quoteId", quoteID)},
		sessionID: sessionID,
		json:      req,
	})
}

// Reprice overrides an item's unit prices (call 13).
func (s *CPQService) Reprice(ctx context.Context, sessionID string, cpqID int32, quoteID int64, req RepriceRequest) (*Quote, error) {
	return s.quote(ctx, &call{
		endpoint:  EndpointCPQReprice,
		params:    []param{id32("cpqId", cpqID), id64("quoteId", quoteID)},
		sessionID: sessionID,
		json:      req,
	})
}

// PackageConfig returns the packages offered for the quote and TOF (call 14).
func (s *CPQService) PackageConfig(ctx context.Context, sessionID string, cpqID, tofID int32, quoteID int64) (*PackageConfig, error) {
	out := new(PackageConfig)
	_, err := s.client.doJSON(ctx, &call{
		endpoint:  EndpointCPQPackageGet,
		params:    []param{id32("cpqId", cpqID), id32("tofId", tofID), id64("quoteId", quoteID)},
		sessionID: sessionID,
	}, out, '{')
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AddPackage assigns a package configuration to the quote (call 15).
func (s *CPQService) AddPackage(ctx context.Context, sessionID string, cpqID int32, req AddPackageRequest) (*Quote, error) {
	return s.quote(ctx, &call{
		endpoint:  EndpointCPQPackageAdd,
		params:    []param{id32("cpqId", cpqID)},
		sessionID: sessionID,
		json:      req,
	})
}

// ChangePricelist changes the price list of one cart of the quote (call 16).
func (s *CPQService) ChangePricelist(ctx context.Context, sessionID string, cpqID int32, quoteID int64, req ChangePricelistRequest) (*Quote, error) {
	return s.quote(ctx, &call{
		endpoint:  EndpointCPQChangePricelist,
		params:    []param{id32("cpqId", cpqID), id64("quoteId", quoteID)},
		sessionID: sessionID,
		json:      req,
	})
}

// quote runs a call answered by the quote document (A4).
func (s *CPQService) quote(ctx context.Context, cl *call) (*Quote, error) {
	out := new(Quote)
	if _, err := s.client.doJSON(ctx, cl, out, '{'); err != nil {
		return nil, err
	}
	return out, nil
}
