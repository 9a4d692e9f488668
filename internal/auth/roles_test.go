package auth

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestRolesFromClaims(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, claims, path string
		want               []string
	}{
		{"demo and Entra app roles", `{"roles":["sales","team-lead"]}`, "roles", []string{"sales", "team-lead"}},
		{"default path", `{"roles":["backoffice"]}`, "", []string{"backoffice"}},
		{"Dex groups", `{"groups":["backoffice"],"roles":["x"]}`, "groups", []string{"backoffice"}},
		{"Keycloak realm roles", `{"realm_access":{"roles":["offline_access","backoffice"]}}`, "realm_access.roles", []string{"offline_access", "backoffice"}},
		{"one string", `{"roles":"sales team-lead"}`, "roles", []string{"sales", "team-lead"}},
		{"missing", `{"sub":"x"}`, "roles", nil},
		{"not a list", `{"roles":{"a":1}}`, "roles", nil},
		{"path through a non-object", `{"realm_access":"x"}`, "realm_access.roles", nil},
		{"non-strings dropped", `{"roles":["a",1,null,""]}`, "roles", []string{"a"}},
	}
	for _, tt := range tests {
		var claims map[string]any
		if err := json.Unmarshal([]byte(tt.claims), &claims); err != nil {
			t.Fatal(err)
		}
		if got := RolesFromClaims(claims, tt.path); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
