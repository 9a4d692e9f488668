package main

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/statedb"
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

// realSecrets stand in for the Secret's values as docs/operations.md has operators create them.
var realSecrets = map[string]string{
	"PORTAL_OIDC_CLIENT_SECRET": "client-secret-from-the-provider",
	"PORTAL_SESSION_KEYS":       testSessionKey,
	"PORTAL_DATABASE_URL":       "postgres://portal:0123456789abcdef0123456789abcdef@cpq-portal-postgres:5432/portal?sslmode=disable",
}

// TestKubernetesSettingsLoad: every PORTAL_* variable the manifests set is a real setting, and with
// real secrets in place the configuration loads as a replicated portal whose state, sessions
// included, is in PostgreSQL (no Redis), and metered.
func TestKubernetesSettingsLoad(t *testing.T) {
	t.Parallel()
	secrets := realSecrets
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
	// The database store (newSessionStore): on PostgreSQL, every replica reads every session.
	if cfg.SessionStore != config.SessionStoreDatabase || cfg.DatabaseURL != secrets["PORTAL_DATABASE_URL"] || cfg.RedisURL != "" {
		t.Errorf("session store %s, database %q, redis %q; want sessions in the PostgreSQL state database and no redis",
			cfg.SessionStore, cfg.StateDatabase(), cfg.RedisURL)
	}
	if cfg.PublicURL.Scheme != "https" || cfg.MetricsAddr == "" || cfg.Demo || len(cfg.TrustedProxies) != 0 {
		t.Errorf("public URL %s, metrics %q, demo %v, trusted proxies %v", cfg.PublicURL, cfg.MetricsAddr, cfg.Demo, cfg.TrustedProxies)
	}
	if _, err := newObservability(t.Context(), cfg, func(k string) string { return env[k] }); err != nil {
		t.Errorf("the manifests' OTEL_* settings are refused: %v", err)
	}
}

// TestKubernetesSecretPlaceholdersAreRefused: a Secret deployed without replacing its CHANGE-ME
// values stops the portal with an error naming the variable, never a weak session key or a
// database the portal was not meant to use; each placeholder on its own, the others being real.
// (The client secret is the provider's to refuse; postgres-password is refused by the database's
// pod: deploy/manifests_test.go.)
func TestKubernetesSecretPlaceholdersAreRefused(t *testing.T) {
	t.Parallel()
	var secret struct {
		StringData map[string]string `yaml:"stringData"`
	}
	readYAML(t, "portal-secret.yaml", &secret)
	for variable, key := range map[string]string{"PORTAL_SESSION_KEYS": "session-keys", "PORTAL_DATABASE_URL": "database-url"} {
		placeholder, ok := secret.StringData[key]
		if !ok || !strings.Contains(placeholder, "CHANGE-ME") {
			t.Errorf("portal-secret.yaml: %s = %q, want a CHANGE-ME placeholder", key, placeholder)
			continue
		}
		secrets := maps.Clone(realSecrets)
		secrets[variable] = placeholder
		env := kubernetesEnv(t, secrets)
		_, err := config.Load(nil, func(k string) string { return env[k] })
		if err == nil || !strings.HasPrefix(err.Error(), variable+":") {
			t.Errorf("with the placeholder %s: err = %v, want a %s error", key, err, variable)
		}
	}
}

// TestKubernetesPostgresConnections: the manifests' PostgreSQL accepts the connections of the
// most replicas the HorizontalPodAutoscaler and a rollout's surge can run, each with its pool
// (statedb.DefaultPostgresMaxOpenConns), and some to spare for psql and pg_dump.
func TestKubernetesPostgresConnections(t *testing.T) {
	t.Parallel()
	var statefulSet struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	readYAML(t, "postgres-statefulset.yaml", &statefulSet)
	var hpa struct {
		Spec struct {
			MaxReplicas int `yaml:"maxReplicas"`
		} `yaml:"spec"`
	}
	readYAML(t, "portal-hpa.yaml", &hpa)
	var deployment struct {
		Spec struct {
			Strategy struct {
				RollingUpdate struct {
					MaxSurge int `yaml:"maxSurge"`
				} `yaml:"rollingUpdate"`
			} `yaml:"strategy"`
		} `yaml:"spec"`
	}
	readYAML(t, "portal-deployment.yaml", &deployment)
	maxConnections := 100 // PostgreSQL's default
	for _, c := range statefulSet.Spec.Template.Spec.Containers {
		for _, arg := range c.Args {
			if v, ok := strings.CutPrefix(arg, "max_connections="); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("max_connections=%q", v)
				}
				maxConnections = n
			}
		}
	}
	replicas := hpa.Spec.MaxReplicas + deployment.Spec.Strategy.RollingUpdate.MaxSurge
	const reserved = 3 + 10 // superuser_reserved_connections, and psql, pg_dump, monitoring
	perReplica := statedb.DefaultPostgresMaxOpenConns + statedb.DedicatedConnsPerReplica
	if need := replicas*perReplica + reserved; maxConnections < need || replicas < 2 {
		t.Errorf("max_connections %d < %d replicas x %d connections + %d: a replica's queries would be refused",
			maxConnections, replicas, perReplica, reserved)
	}
}
