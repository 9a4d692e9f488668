package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// formBodyLimit bounds request bodies of the page routes (forms, htmx posts). Attachment uploads
// get their own group with Config.UploadLimit.
const formBodyLimit = 1 << 20

// Routes registers every route of the portal on r. This is the one place to see the whole
// surface: add new routes under their area's section below.
//
// Middleware of every response, outermost first (why this order: see middleware.go):
// request id, access log, (metrics), recovery, security headers, cross-origin protection, gzip.
func (h *Handler) Routes(r *gin.Engine) {
	r.Use(h.requestID, h.accessLog)
	if h.metrics != nil {
		r.Use(h.metrics.observe)
	}
	r.Use(h.recovery, h.securityHeaders, h.crossOrigin, h.compress)
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

	// --- Extra routes from cmd/portal (the demo OpenID provider under /idp/) ---
	if h.extraRoutes != nil {
		h.extraRoutes(r)
	}

	// --- Start ---
	r.GET("/", h.showHome)

	// Signed-in pages (full pages and their htmx partials). Every route below needs a session;
	// request bodies are limited to formBodyLimit.
	pages := r.Group("/", h.auth.RequireLogin(), limitBody(formBodyLimit))
	// Attachment uploads: signed in, with PORTAL_UPLOAD_LIMIT instead of formBodyLimit (a limit can
	// only be lowered once set, so uploads need their own group). Register upload routes on it, e.g.
	// uploads.POST("/quotes/:quoteId/attachments", h.uploadAttachment).
	uploads := r.Group("/", h.auth.RequireLogin(), limitBody(h.cfg.UploadLimit))
	_ = uploads // no upload route yet (contracts & documents area)

	// --- Customers ---
	pages.GET("/customers", h.showCustomerList)

	// --- Quotes ---
	pages.GET("/quotes", h.showQuotesPlaceholder)

	// --- Contracts & documents ---
	pages.GET("/contracts", h.showContractsPlaceholder)

	// --- Audits ---
	pages.GET("/audits", h.showAuditsPlaceholder)
}

// static serves the embedded assets (web.Assets does the caching headers and gzip).
func (h *Handler) static(c *gin.Context) {
	h.assets.ServeHTTP(c.Writer, c.Request)
}

// showHome sends the start page to the customer list (the portal's first task).
func (h *Handler) showHome(c *gin.Context) {
	c.Redirect(http.StatusSeeOther, "/customers")
}
