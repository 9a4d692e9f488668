package handlers

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
)

// The back-office tools (docs/backoffice.md "Who may use the tools") are each open to the roles
// of one setting (PORTAL_BATCH_ARCHIVE_ROLES, PORTAL_HANDOVER_ROLES, PORTAL_IMPORT_ROLES), read
// from the ID token's roles claim like PORTAL_TEAM_ROLES. The portal checks the role before the
// handler runs, so someone without it sends nothing to the v2 API and reads no job; for those with
// it the v2 API stays the judge of every call. The same check hides the tool's links, buttons and
// palette entry, so nobody is offered what they would be refused.

// tool is one back-office tool.
type tool int

const (
	toolBatchArchive tool = iota + 1
	toolHandover
	toolImport
)

// nameKey is the tool's name in the catalogue (the 403 page says which tool and which roles).
func (t tool) nameKey() string {
	switch t {
	case toolBatchArchive:
		return "batch.title"
	case toolHandover:
		return "handover.title"
	default:
		return "import.title"
	}
}

// toolRoles are the roles that may use t.
func (h *Handler) toolRoles(t tool) []string {
	switch t {
	case toolBatchArchive:
		return h.cfg.BatchArchiveRoles
	case toolHandover:
		return h.cfg.HandoverRoles
	default:
		return h.cfg.ImportRoles
	}
}

// may reports whether the signed-in person may use t.
func (h *Handler) may(c *gin.Context, t tool) bool {
	return hasAnyRole(auth.CurrentRoles(c), h.toolRoles(t))
}

// requireTool answers 403 (a page in the person's language naming the roles the tool needs, or a
// toast for htmx) to anyone without one of t's roles, before the route's handler reads a form or
// asks anything upstream.
func (h *Handler) requireTool(t tool) gin.HandlerFunc {
	return func(c *gin.Context) {
		if h.may(c, t) {
			c.Next()
			return
		}
		roles := h.toolRoles(t)
		h.log(c).Info("back-office tool refused: role missing", slog.String("path", c.Request.URL.Path),
			slog.String("tool", t.nameKey()), slog.Any("roles", auth.CurrentRoles(c)), slog.Any("needs", roles))
		trl := tr(c)
		name := trl.T(t.nameKey())
		message := trl.T("tool.forbidden.message", name, strings.Join(roles, ", "))
		if len(roles) == 0 {
			message = trl.T("tool.forbidden.nobody", name)
		}
		h.renderError(c, http.StatusForbidden, trl.T("tool.forbidden.title"), message)
		c.Abort()
	}
}
