package handlers

import (
	"github.com/gin-gonic/gin"
)

// formBodyLimit bounds request bodies of the page routes (forms, htmx posts). Attachment uploads
// get their own group with Config.UploadLimit.
const formBodyLimit = 1 << 20

// Routes registers every route of the portal on r. This is the one place to see the whole
// surface: add new routes under their area's section below.
//
// Middleware of every response, outermost first (why this order: see middleware.go):
// request id, access log, (metrics), recovery, security headers, language (the request's
// translator in its context), cross-origin protection, gzip.
func (h *Handler) Routes(r *gin.Engine) {
	r.Use(h.requestID, h.accessLog)
	if h.metrics != nil {
		r.Use(h.metrics.observe)
	}
	r.Use(h.recovery, h.securityHeaders, h.language, h.crossOrigin, h.compress)
	r.NoRoute(h.notFound)
	r.NoMethod(h.notFound)

	// --- Health (no session, no cookie) ---
	r.GET("/healthz", h.healthz)
	r.HEAD("/healthz", h.healthz)
	r.GET("/readyz", h.readyz)
	r.HEAD("/readyz", h.readyz)

	// --- Static assets (hashed URLs, see web.Assets) ---
	r.GET("/static/*path", h.static)
	r.HEAD("/static/*path", h.static)

	// --- Sign-in (internal/auth) ---
	authRoutes := r.Group("/auth", limitBody(formBodyLimit))
	authRoutes.GET("/login", h.auth.Login)
	authRoutes.GET("/callback", h.auth.Callback)
	authRoutes.POST("/logout", h.auth.Logout)
	authRoutes.GET("/logged-out", h.auth.LoggedOut)
	authRoutes.POST("/logout-everywhere", h.auth.LogoutEverywhere)
	// OpenID Connect back-channel logout: server to server, no session, exempt from cross-origin
	// protection (handler.go); the signed logout token alone decides.
	authRoutes.POST("/backchannel-logout", h.auth.BackChannelLogout)

	// --- Extra routes from cmd/portal (the demo OpenID provider under /idp/) ---
	if h.extraRoutes != nil {
		h.extraRoutes(r)
	}

	// --- Language (the header's menu; signed in or not, so the sign-in pages follow it too) ---
	r.POST("/language", limitBody(formBodyLimit), h.setLanguage)

	// Signed-in pages (full pages and their htmx partials). Every route below needs a session;
	// request bodies are limited to formBodyLimit.
	pages := r.Group("/", h.auth.RequireLogin(), limitBody(formBodyLimit), h.requireValidUTF8, h.keepWatchToken)
	// Attachment uploads: signed in, with PORTAL_UPLOAD_LIMIT instead of formBodyLimit (a limit can
	// only be lowered once set, so uploads need their own group). Register upload routes on it, e.g.
	// uploads.POST("/quotes/:quoteId/attachments", h.uploadAttachment).
	uploads := r.Group("/", h.auth.RequireLogin(), limitBody(h.cfg.UploadLimit), h.requireValidUTF8, h.keepWatchToken)

	// --- The demo's "Sent mail" (internal/demomail; 404 outside the demo) ---
	pages.GET("/demo/mail", h.showDemoMail)
	pages.GET("/demo/mail/:mailId/attachments/:n", h.downloadDemoMailAttachment)

	// --- Home: the figures by role (internal/pipeline, docs/home.md) ---
	pages.GET("/", h.showHome)

	// --- Customers ---
	pages.GET("/customers", h.showCustomerList)       // page, or the results region for htmx
	pages.GET("/customers/export", h.exportCustomers) // ?format=csv|xlsx and the list's search and order
	pages.GET("/customers/new", h.showCustomerNew)
	// Hand customers over to another owner (issue 34, docs/backoffice.md): choose, preview, run as
	// a job (internal/handover on internal/jobs), live progress, cancel, retry, the result as CSV.
	pages.GET("/customers/handover", h.requireTool(toolHandover), h.showHandoverNew)
	pages.POST("/customers/handover", h.requireTool(toolHandover), h.createHandover)
	pages.GET("/customers/handover/:jobId", h.requireTool(toolHandover), h.showJob(handoverJobs))
	pages.GET("/customers/handover/:jobId/progress", h.requireTool(toolHandover), h.showJobProgress(handoverJobs))
	pages.POST("/customers/handover/:jobId/start", h.requireTool(toolHandover), h.startJob(handoverJobs))
	pages.POST("/customers/handover/:jobId/cancel", h.requireTool(toolHandover), h.cancelJob(handoverJobs))
	pages.POST("/customers/handover/:jobId/retry", h.requireTool(toolHandover), h.retryJob(handoverJobs))
	pages.GET("/customers/handover/:jobId/result.csv", h.requireTool(toolHandover), h.downloadHandoverResult)
	// Customer import (back office, docs/backoffice.md): upload and dry run, the preview by verdict
	// (paged), the person's choices of lines; the upload has its own body limit (the file's plus
	// the form's).
	pages.GET("/customers/import", h.requireTool(toolImport), h.showImportNew)
	uploads.POST("/customers/import", h.requireTool(toolImport), limitBody(importBodyLimit), h.checkImport)
	pages.GET("/customers/import/:importId", h.requireTool(toolImport), h.showImport)
	pages.POST("/customers/import/:importId/lines", h.requireTool(toolImport), h.saveImportLines)
	pages.POST("/customers/import/:importId/include", h.requireTool(toolImport), h.includeImportVerdict)
	pages.POST("/customers/import/:importId/delete", h.requireTool(toolImport), h.deleteImport)
	// The mapping step and the dry run's repairs (customer_import_mapping.go).
	pages.GET("/customers/import/:importId/mapping", h.requireTool(toolImport), h.showImportMapping)
	pages.POST("/customers/import/:importId/mapping", h.requireTool(toolImport), h.confirmImportMapping)
	pages.POST("/customers/import/:importId/values", h.requireTool(toolImport), h.mapImportValue)
	pages.POST("/customers/import/:importId/fix", h.requireTool(toolImport), h.fixImportLine)
	// The import's run: a job (internal/customerimport.Kind on internal/jobs), live progress,
	// cancel, retry, the result as CSV or XLSX.
	pages.POST("/customers/import/:importId/run", h.requireTool(toolImport), h.runImport)
	pages.GET("/customers/import-runs/:jobId", h.requireTool(toolImport), h.showJob(importRunJobs))
	pages.GET("/customers/import-runs/:jobId/progress", h.requireTool(toolImport), h.showJobProgress(importRunJobs))
	pages.POST("/customers/import-runs/:jobId/start", h.requireTool(toolImport), h.startJob(importRunJobs))
	pages.POST("/customers/import-runs/:jobId/cancel", h.requireTool(toolImport), h.cancelJob(importRunJobs))
	pages.POST("/customers/import-runs/:jobId/retry", h.requireTool(toolImport), h.retryJob(importRunJobs))
	pages.GET("/customers/import-runs/:jobId/result", h.requireTool(toolImport), h.downloadImportRunResult)
	pages.POST("/customers", h.createCustomer)
	pages.GET("/customers/:customerId", h.showCustomer)
	pages.GET("/customers/:customerId/edit", h.showCustomerEdit)
	pages.POST("/customers/:customerId", h.updateCustomer)
	pages.POST("/customers/:customerId/owners", h.replaceCustomerOwners)
	pages.GET("/customers/:customerId/owners/confirm", h.confirmReplaceOwners)
	// The customer page's folded sections, loaded when opened (customer_folded.go).
	pages.GET("/customers/:customerId/owners/manage", h.showOwnersManage)
	pages.GET("/customers/:customerId/attributes", h.showCustomerAttributes)
	pages.GET("/customers/:customerId/other-fields", h.showCustomerOtherFields)
	pages.POST("/customers/:customerId/owners/add", h.addCustomerOwner)
	pages.POST("/customers/:customerId/owners/change", h.changeCustomerOwner)
	pages.GET("/customers/:customerId/owners/change/confirm", h.confirmChangeOwner)
	pages.POST("/customers/:customerId/profiles", h.createCustomerProfile)
	pages.POST("/customers/:customerId/profiles/:profileId/delete", h.deleteCustomerProfile)
	pages.GET("/customers/:customerId/profiles/:profileId/delete/confirm", h.confirmDeleteProfile)

	// --- Quotes ---
	// Start a quote: configurator, customer, session (call 2), offer type, main product (call 3).
	pages.GET("/quotes", h.showQuoteStart)
	pages.GET("/quotes/new", h.showQuoteStart) // ?customerId=&cpqId= from the customers area
	pages.GET("/quotes/new/customers", h.searchQuoteCustomers)
	pages.POST("/quotes/new", h.startQuoteSession)
	pages.GET("/quotes/new/:cpqId/:customerId/tofs/:tofId/products", h.showStartProducts)
	pages.POST("/quotes/new/:cpqId/:customerId/tofs/:tofId", h.createQuote)
	pages.GET("/quotes/open", h.openQuote)
	// The quote page (its own address, call 10) and its actions (calls 4 to 9, 11 to 16).
	pages.GET("/quotes/:cpqId/:customerId/:quoteId", h.showQuote)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/session", h.restartQuoteSession)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/carts/new", h.showAddCart)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/carts", h.addCart)
	pages.DELETE("/quotes/:cpqId/:customerId/:quoteId/carts/:basketId", h.removeCart)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/carts/:basketId/confirm", h.confirmRemoveCart)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/carts/:basketId/quantity", h.setCartQuantity)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/carts/:basketId/pricelist", h.changeCartPricelist)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/carts/:basketId/items/:itemId/addons", h.showAddons)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/carts/:basketId/items/:itemId/addons", h.addItem)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/carts/:basketId/items/:itemId/reprice", h.repriceItem)
	pages.DELETE("/quotes/:cpqId/:customerId/:quoteId/carts/:basketId/items/:itemId/parent/:parentId", h.removeItem)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/carts/:basketId/items/:itemId/parent/:parentId/confirm", h.confirmRemoveItem)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/discounts", h.showDiscounts)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/discounts", h.applyDiscounts)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/packages", h.showPackages)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/packages", h.addPackage)
	// Live notice (polled, ETag/304) and "Show changes" (issue 18).
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/changes", h.pollQuoteChanges)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/current", h.showCurrentQuote)

	// --- Contracts & documents ---
	// Documents of a quote (a region of the quote page, or a page of its own).
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/documents", h.showQuoteDocuments)
	uploads.POST("/quotes/:cpqId/:customerId/:quoteId/attachments", h.uploadAttachment)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/attachments/:attachmentId", h.downloadAttachment)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/attachments/:attachmentId/confirm", h.confirmDeleteAttachment)
	pages.DELETE("/quotes/:cpqId/:customerId/:quoteId/attachments/:attachmentId", h.deleteAttachment)
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/contract/confirm", h.confirmGenerate)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/contract", h.generateContract)
	// The offer (internal/offer): shown inline (?lang=), or stored on the quote as an attachment.
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/offer", h.previewOffer)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/offer", h.sendOffer)
	// The offer sent by e-mail (offer_mail.go): the form and the mails sent, and the send.
	pages.GET("/quotes/:cpqId/:customerId/:quoteId/offer/mail", h.showOfferMail)
	pages.POST("/quotes/:cpqId/:customerId/:quoteId/offer/mail", h.sendOfferMail)
	// Contracts: search by id or number (the number only ever in the query), page, PDF, signature, archive.
	pages.GET("/contracts", h.showContractSearch)
	pages.GET("/contracts/lookup", h.lookupContract)
	pages.GET("/contracts/:contractId", h.showContract)
	pages.GET("/contracts/:contractId/pdf", h.downloadContractPDF)
	pages.POST("/contracts/:contractId/signature", h.sendSignatureRequest)
	pages.GET("/contracts/:contractId/signature/confirm", h.confirmRemoveSignatureRequest)
	pages.DELETE("/contracts/:contractId/signature", h.removeSignatureRequest)
	pages.GET("/contracts/:contractId/archive/confirm", h.confirmArchive)
	pages.POST("/contracts/:contractId/archive", h.archiveContract)
	pages.GET("/contracts/:contractId/changes", h.pollContractChanges) // live notice (issue 18)
	pages.GET("/contracts/:contractId/archive-payload", h.showArchivePayload)
	pages.GET("/contracts/:contractId/archive-payload/download", h.downloadArchivePayload)
	// Batch archive (back office, docs/backoffice.md): check a list, confirm, live progress
	// (polled), cancel, retry the failed, the result as CSV.
	pages.GET("/contracts/batch-archive", h.requireTool(toolBatchArchive), h.showBatchNew)
	pages.POST("/contracts/batch-archive", h.requireTool(toolBatchArchive), h.checkBatch)
	pages.GET("/contracts/batch-archive/:jobId", h.requireTool(toolBatchArchive), h.showJob(batchJobs))
	pages.GET("/contracts/batch-archive/:jobId/progress", h.requireTool(toolBatchArchive), h.showJobProgress(batchJobs))
	pages.POST("/contracts/batch-archive/:jobId/start", h.requireTool(toolBatchArchive), h.startJob(batchJobs))
	pages.POST("/contracts/batch-archive/:jobId/cancel", h.requireTool(toolBatchArchive), h.cancelJob(batchJobs))
	pages.POST("/contracts/batch-archive/:jobId/retry", h.requireTool(toolBatchArchive), h.retryJob(batchJobs))
	pages.GET("/contracts/batch-archive/:jobId/result.csv", h.requireTool(toolBatchArchive), h.downloadBatchResult)
	// Evidence (back office): one page, each artifact, and all of them as one ZIP.
	pages.GET("/contracts/:contractId/evidence", h.showEvidence)
	pages.GET("/contracts/:contractId/evidence.zip", h.downloadEvidenceZip)
	pages.GET("/contracts/:contractId/evidence/:artifact", h.downloadEvidenceArtifact)

	// --- Work lists (internal/workindex, docs/work-index.md) ---
	pages.GET("/work", h.showWorkStart) // the start page by role
	pages.GET("/work/quotes", h.showWorkQuotes)
	pages.GET("/work/contracts", h.showWorkContracts)
	// Exports of a list's current filters (every row, streamed) and saved views (internal/savedviews).
	pages.GET("/work/quotes/export", h.exportWorkQuotes) // ?format=csv|xlsx and the list's filters
	pages.GET("/work/contracts/export", h.exportWorkContracts)
	pages.GET("/work/views", h.showViews)
	pages.POST("/work/views", h.saveView)
	pages.POST("/work/views/:viewId/rename", h.renameView)
	pages.POST("/work/views/:viewId/delete", h.deleteView)

	// --- Audits ---
	pages.GET("/audits", h.showAuditSearch)
	// The audit worklist (back office): many quotes' audits in one table, filters, CSV/XLSX export.
	pages.GET("/audits/worklist", h.showWorklist)
	pages.GET("/audits/worklist/export", h.exportWorklist)
	pages.GET("/audits/:quoteId", h.showAudit)
	pages.GET("/audits/:quoteId/pdf", h.downloadAuditPDF)

	// --- Sessions ("sign out everywhere", one file per action: sessions_list.go, sessions_revoke.go) ---
	pages.GET("/sessions", h.showSessions)
	pages.POST("/sessions/revoke", h.revokeSession)
	pages.POST("/sessions/revoke-others", h.revokeOtherSessions)

	// --- Inbox (internal/inbox, docs/inbox.md): the list, the header's count (polled), open or
	// mark an item read, mark all read, the preference. Every change is a POST (cross-origin
	// protected like every route). ---
	pages.GET("/inbox", h.showInbox)
	pages.GET("/inbox/count", h.pollInboxCount)
	pages.POST("/inbox/read-all", h.readAllInbox)
	pages.POST("/inbox/preferences", h.saveInboxPreference)
	pages.POST("/inbox/:itemId/open", h.openInboxItem)
	pages.POST("/inbox/:itemId/read", h.readInboxItem)

	// --- Palette ---
	// The command palette (Ctrl/Cmd+K): results partial for htmx, a page otherwise; a quote opened
	// by its number alone is resolved to its address.
	pages.GET("/palette", h.showPalette)
	pages.GET("/palette/quotes/:quoteId", h.openPaletteQuote)
}

// static serves the embedded assets (web.Assets does the caching headers and gzip).
func (h *Handler) static(c *gin.Context) {
	h.assets.ServeHTTP(c.Writer, c.Request)
}
