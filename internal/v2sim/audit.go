package v2sim

import (
	"context"
	"net/http"
	"time"
)

// Audit actions of docs/v2-assumptions.md A7.
const (
	auditQuoteCreated      = "QUOTE_CREATED"
	auditCartAdded         = "CART_ADDED"
	auditCartRemoved       = "CART_REMOVED"
	auditItemAdded         = "ITEM_ADDED"
	auditItemRemoved       = "ITEM_REMOVED"
	auditQuantityChanged   = "QUANTITY_CHANGED"
	auditDiscountsApplied  = "DISCOUNTS_APPLIED"
	auditRepriced          = "REPRICED"
	auditPackageAdded      = "PACKAGE_ADDED"
	auditPricelistChanged  = "PRICELIST_CHANGED"
	auditAttachmentAdded   = "ATTACHMENT_ADDED"
	auditAttachmentDeleted = "ATTACHMENT_DELETED"
	auditContractGenerated = "CONTRACT_GENERATED"
	auditSignatureRequest  = "SIGNATURE_REQUESTED"
	auditSignatureRemoved  = "SIGNATURE_REMOVED"
	auditContractArchived  = "CONTRACT_ARCHIVED"
)

// seedActor is the actor of entries made while seeding.
const seedActor = "system"

type auditEntry struct {
	EntryID int64     `json:"entryId"`
	At      time.Time `json:"at"`
	Actor   string    `json:"actor"`
	Action  string    `json:"action"`
	Summary string    `json:"summary"`
	Changes []change  `json:"changes"`
}

// change is one field's change. Before and after are strings, other values written as compact JSON, so a
// reader decodes every entry the same way (docs/v2-assumptions.md A7).
type change struct {
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

type actorKey struct{}

// withActor stores the acting user (A1) in the request context.
func withActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// actorOf answers the acting user of the request, or seedActor outside a request.
func actorOf(r *http.Request) string {
	if r == nil {
		return seedActor
	}
	if a, ok := r.Context().Value(actorKey{}).(string); ok && a != "" {
		return a
	}
	return anonymousActor
}

// audit appends an entry to the quote's validation audit and marks the quote updated. Caller holds s.mu.
func (s *Server) audit(r *http.Request, q *quote, action, summary string, changes ...change) {
	if changes == nil {
		changes = []change{}
	}
	s.nextAuditID++
	now := s.stamp()
	q.Audit = append(q.Audit, auditEntry{EntryID: s.nextAuditID, At: now, Actor: actorOf(r), Action: action, Summary: summary, Changes: changes})
	q.UpdatedAt = now
}
