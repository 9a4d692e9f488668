package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/cpqportal/portal/internal/config"
)

// The Kubernetes manifests (deploy/kubernetes) are checked against the Kubernetes API types in their
// own module (deploy/manifests_test.go). Here they are checked against the portal itself: the
// settings they give must be ones the portal knows, and must load.

const kubernetesDir = "../../deploy/kubernetes"

// kubernetesEnv returns the environment the portal container gets from the manifests: the ConfigMap's
// data, the Deployment's literal env values (with $(VAR) expanded as Kubernetes does) and the given
// stand-ins for the Secret's values.
func kubernetesEnv(t *testing.T, secrets map[string]string) map[string]string {
	t.Helper()
	var configMap struct {
		Data map[string]string `yaml:"data"`
	}
	readYAML(t, "portal-configmap.yaml", &configMap)
	var deployment struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name string `yaml:"name"`
						Env  []struct {
							Name  string `yaml:"name"`
							Value string `yaml:"value"`
						} `yaml:"env"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	readYAML(t, "portal-deployment.yaml", &deployment)

	env := map[string]string{}
	for k, v := range configMap.Data {
		env[k] = v
	}
	for k, v := range secrets {
		env[k] = v
	}
	reference := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for _, c := range deployment.Spec.Template.Spec.Containers {
		if c.Name != "portal" {
			continue
		}
		for _, e := range c.Env {
			if e.Value == "" {
				continue // from the Secret: the stand-ins above
			}
			env[e.Name] = reference.ReplaceAllStringFunc(e.Value, func(ref string) string {
				return env[reference.FindStringSubmatch(ref)[1]]
			})
		}
	}
	return env
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(kubernetesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestKubernetesSettingsLoad: every PORTAL_* variable the manifests set is a real setting, and with
// real secrets in place the configuration loads as a replicated, redis-backed, metered portal.
func TestKubernetesSettingsLoad(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"PORTAL_OIDC_CLIENT_SECRET": "client-secret-from-the-provider",
		"PORTAL_SESSION_KEYS":       testSessionKey,
		"REDIS_PASSWORD":            "0123456789abcdef0123456789abcdef",
	}
	env := kubernetesEnv(t, secrets)
	known := map[string]bool{}
	for _, s := range config.Table() {
		known[s.Env] = true
	}
	for k := range env {
		if strings.HasPrefix(k, "PORTAL_") && !known[k] {
			t.Errorf("the manifests set %s, which the portal does not know", k)
		}
	}
	cfg, err := config.Load(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the manifests' configuration does not load: %v", err)
	}
	if cfg.SessionStore != config.SessionStoreRedis || cfg.RedisURL != "redis://:"+secrets["REDIS_PASSWORD"]+"@cpq-portal-redis:6379/0" {
		t.Errorf("session store %s at %s, want redis at the cpq-portal-redis Service", cfg.SessionStore, cfg.RedisURL)
	}
	if cfg.PublicURL.Scheme != "https" || cfg.MetricsAddr == "" || cfg.Demo || len(cfg.TrustedProxies) != 0 {
		t.Errorf("public URL %s, metrics %q, demo %v, trusted proxies %v", cfg.PublicURL, cfg.MetricsAddr, cfg.Demo, cfg.TrustedProxies)
	}
	if _, err := newObservability(t.Context(), cfg, func(k string) string { return env[k] }); err != nil {
		t.Errorf("the manifests' OTEL_* settings are refused: %v", err)
	}
}

// TestKubernetesSecretPlaceholdersAreRefused: a Secret deployed without replacing its CHANGE-ME
// values stops the portal with an error naming the variable, never a weak session key.
func TestKubernetesSecretPlaceholdersAreRefused(t *testing.T) {
	t.Parallel()
	var secret struct {
		StringData map[string]string `yaml:"stringData"`
	}
	readYAML(t, "portal-secret.yaml", &secret)
	env := kubernetesEnv(t, map[string]string{
		"PORTAL_OIDC_CLIENT_SECRET": secret.StringData["oidc-client-secret"],
		"PORTAL_SESSION_KEYS":       secret.StringData["session-keys"],
		"REDIS_PASSWORD":            secret.StringData["redis-password"],
	})
	_, err := config.Load(nil, func(k string) string { return env[k] })
	if err == nil || !strings.HasPrefix(err.Error(), "PORTAL_SESSION_KEYS:") {
		t.Errorf("with the placeholder secret: err = %v, want a PORTAL_SESSION_KEYS error", err)
	}
}
