package auth

import (
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
)

// maxRoles bounds the roles kept in a session (a provider that sends hundreds of groups must not
// grow the session cookie without limit).
const maxRoles = 32

// rolesOf reads the user's roles from the ID token claim named by Config.RolesClaim: a list of
// strings or one string, at a top-level name (roles: Entra app roles and the demo provider;
// groups: Dex) or at a dotted path into nested objects (realm_access.roles: Keycloak realm
// roles). A missing or malformed claim gives no roles (docs/work-index.md, "Roles").
func (a *Authenticator) rolesOf(idToken *oidc.IDToken) []string {
	var claims map[string]any
	if err := idToken.Claims(&claims); err != nil {
		return nil
	}
	return RolesFromClaims(claims, a.cfg.RolesClaim)
}

// RolesFromClaims reads the roles at path (a claim name, or a dotted path) in claims.
func RolesFromClaims(claims map[string]any, path string) []string {
	if path == "" {
		path = "roles"
	}
	var value any = claims
	for part := range strings.SplitSeq(path, ".") {
		obj, ok := value.(map[string]any)
		if !ok {
			return nil
		}
		if value, ok = obj[part]; !ok {
			return nil
		}
	}
	var roles []string
	switch v := value.(type) {
	case string:
		roles = strings.Fields(v)
	case []any:
		for _, item := range v {
			if s, ok := item.(string); ok && s != "" {
				roles = append(roles, s)
			}
		}
	}
	if len(roles) > maxRoles {
		roles = roles[:maxRoles]
	}
	return roles
}
