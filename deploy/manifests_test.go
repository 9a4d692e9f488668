package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

const manifestDir = "kubernetes"

// Names the portal's manifests use; the checks below tie them together.
const (
	portalName   = "cpq-portal"
	postgresName = "cpq-portal-postgres"
	configName   = "cpq-portal-config"
	secretName   = "cpq-portal-secrets"
	portalImage  = "cpq-portal"
	// operationsDoc tells how to create the Secret; the URL it gives must reach the manifests' PostgreSQL.
	operationsDoc = "../docs/operations.md"
)

// kustomization is the part of kustomize's Kustomization we use. Decoded strictly like the rest: a
// field kustomize would not know fails here too.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Labels     []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors,omitempty"`
		IncludeTemplates bool              `json:"includeTemplates,omitempty"`
	} `json:"labels"`
	Resources []string `json:"resources"`
	Images    []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images"`
}

// manifests are all decoded objects, by kind and name.
type manifests struct {
	kustomization kustomization
	namespaces    map[string]*corev1.Namespace
	deployments   map[string]*appsv1.Deployment
	statefulSets  map[string]*appsv1.StatefulSet
	services      map[string]*corev1.Service
	configMaps    map[string]*corev1.ConfigMap
	secrets       map[string]*corev1.Secret
	pdbs          map[string]*policyv1.PodDisruptionBudget
	hpas          map[string]*autoscalingv2.HorizontalPodAutoscaler
	ingresses     map[string]*networkingv1.Ingress
	netpols       map[string]*networkingv1.NetworkPolicy
	pvcs          map[string]*corev1.PersistentVolumeClaim
}

// decodeStrict turns one YAML document into v: duplicate keys (YAMLToJSONStrict) and fields the type
// does not have (DisallowUnknownFields) are errors, so a typo such as "readinesProbe" cannot hide.
func decodeStrict(doc []byte, v any) error {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the object")
	}
	return nil
}

// documents splits a YAML stream at "---" lines, dropping empty documents.
func documents(data []byte) [][]byte {
	var docs [][]byte
	for _, part := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(part, "")) != "" {
			docs = append(docs, []byte(part))
		}
	}
	return docs
}

// add decodes doc by its apiVersion and kind into its API type.
func (m *manifests) add(doc []byte) error {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	var obj interface {
		GetName() string
		GetNamespace() string
	}
	switch meta.APIVersion + " " + meta.Kind {
	case "v1 Namespace":
		o := &corev1.Namespace{}
		obj, m.namespaces[nameOf(doc)] = o, o
	case "apps/v1 Deployment":
		o := &appsv1.Deployment{}
		obj, m.deployments[nameOf(doc)] = o, o
	case "apps/v1 StatefulSet":
		o := &appsv1.StatefulSet{}
		obj, m.statefulSets[nameOf(doc)] = o, o
	case "v1 Service":
		o := &corev1.Service{}
		obj, m.services[nameOf(doc)] = o, o
	case "v1 ConfigMap":
		o := &corev1.ConfigMap{}
		obj, m.configMaps[nameOf(doc)] = o, o
	case "v1 Secret":
		o := &corev1.Secret{}
		obj, m.secrets[nameOf(doc)] = o, o
	case "v1 PersistentVolumeClaim":
		o := &corev1.PersistentVolumeClaim{}
		obj, m.pvcs[nameOf(doc)] = o, o
	case "policy/v1 PodDisruptionBudget":
		o := &policyv1.PodDisruptionBudget{}
		obj, m.pdbs[nameOf(doc)] = o, o
	case "autoscaling/v2 HorizontalPodAutoscaler":
		o := &autoscalingv2.HorizontalPodAutoscaler{}
		obj, m.hpas[nameOf(doc)] = o, o
	case "networking.k8s.io/v1 Ingress":
		o := &networkingv1.Ingress{}
		obj, m.ingresses[nameOf(doc)] = o, o
	case "networking.k8s.io/v1 NetworkPolicy":
		o := &networkingv1.NetworkPolicy{}
		obj, m.netpols[nameOf(doc)] = o, o
	default:
		return fmt.Errorf("unexpected apiVersion/kind %q %q (add it to this test)", meta.APIVersion, meta.Kind)
	}
	if err := decodeStrict(doc, obj); err != nil {
		return fmt.Errorf("%s %s: %w", meta.Kind, nameOf(doc), err)
	}
	if obj.GetName() == "" {
		return fmt.Errorf("%s without metadata.name", meta.Kind)
	}
	if obj.GetNamespace() != "" {
		return fmt.Errorf("%s %s sets metadata.namespace; kustomization.yaml decides it", meta.Kind, obj.GetName())
	}
	return nil
}

func nameOf(doc []byte) string {
	var meta struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = yaml.Unmarshal(doc, &meta)
	return meta.Metadata.Name
}

func loadManifests(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{
		namespaces: map[string]*corev1.Namespace{}, deployments: map[string]*appsv1.Deployment{},
		statefulSets: map[string]*appsv1.StatefulSet{},
		services:     map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{},
		secrets: map[string]*corev1.Secret{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
		hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, ingresses: map[string]*networkingv1.Ingress{},
		netpols: map[string]*networkingv1.NetworkPolicy{},
		pvcs:    map[string]*corev1.PersistentVolumeClaim{},
	}
	raw, err := os.ReadFile(filepath.Join(manifestDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeStrict(raw, &m.kustomization); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" {
			onDisk = append(onDisk, base)
		}
	}
	listed := slices.Clone(m.kustomization.Resources)
	sort.Strings(listed)
	if !slices.Equal(listed, onDisk) {
		t.Fatalf("kustomization.yaml lists %v, the folder has %v: every manifest must be listed once", listed, onDisk)
	}
	for _, name := range m.kustomization.Resources {
		data, err := os.ReadFile(filepath.Join(manifestDir, name))
		if err != nil {
			t.Fatal(err)
		}
		docs := documents(data)
		if len(docs) == 0 {
			t.Fatalf("%s: no object", name)
		}
		for _, doc := range docs {
			if err := m.add(doc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	return m
}

// TestStrictDecodingCatchesTypos: the decoder the test relies on refuses what the API server would
// silently drop or reject.
func TestStrictDecodingCatchesTypos(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"unknown field": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: c\n          readinesProbe: {}\n",
		"duplicate key": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  A: \"1\"\n  A: \"2\"\n",
		"wrong type":    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: two\n",
	} {
		m := &manifests{deployments: map[string]*appsv1.Deployment{}, configMaps: map[string]*corev1.ConfigMap{}}
		if err := m.add([]byte(doc)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func TestKustomization(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	k := m.kustomization
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml is %s %s", k.APIVersion, k.Kind)
	}
	if _, ok := m.namespaces[k.Namespace]; !ok || k.Namespace == "" {
		t.Errorf("kustomization namespace %q has no Namespace manifest", k.Namespace)
	}
	for _, l := range k.Labels {
		if l.IncludeSelectors {
			t.Error("kustomization labels must not change selectors (immutable on Deployments)")
		}
	}
	found := false
	for _, img := range k.Images {
		found = found || (img.Name == portalImage && img.NewName != "" && img.NewTag != "")
	}
	if !found {
		t.Errorf("kustomization images does not set name and tag of %q", portalImage)
	}
	if ns := m.namespaces[k.Namespace]; ns != nil && ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace %s does not enforce the restricted Pod Security Standard", ns.Name)
	}
}

// portalContainer returns the Deployment's container named name.
func container(t *testing.T, d *appsv1.Deployment, name string) *corev1.Container {
	t.Helper()
	for i := range d.Spec.Template.Spec.Containers {
		if c := &d.Spec.Template.Spec.Containers[i]; c.Name == name {
			return c
		}
	}
	t.Fatalf("deployment %s has no container %q", d.Name, name)
	return nil
}

func namedPort(c *corev1.Container, name string) (int32, bool) {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort, true
		}
	}
	return 0, false
}

// portOf returns the port of a host:port setting.
func portOf(t *testing.T, setting, hostPort string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Fatalf("%s = %q: %v", setting, hostPort, err)
	}
	return port
}

// checkHardened asserts the pod and container security settings every workload needs (and the
// restricted Pod Security Standard demands) of the pods of workload name.
func checkHardened(t *testing.T, name string, pod corev1.PodSpec) {
	t.Helper()
	if pod.SecurityContext == nil || pod.SecurityContext.SeccompProfile == nil || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod seccompProfile is not RuntimeDefault", name)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: the service account token is mounted (nothing here talks to the Kubernetes API)", name)
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s/%s: no securityContext", name, c.Name)
			continue
		}
		nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot)
		if !nonRoot {
			t.Errorf("%s/%s: runAsNonRoot is not true", name, c.Name)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s/%s: readOnlyRootFilesystem is not true", name, c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s/%s: allowPrivilegeEscalation is not false", name, c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s/%s: privileged", name, c.Name)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
			t.Errorf("%s/%s: capabilities must drop ALL and add none: %+v", name, c.Name, sc.Capabilities)
		}
		if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s/%s: container seccompProfile is not RuntimeDefault", name, c.Name)
		}
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Requests[res]; !ok {
				t.Errorf("%s/%s: no %s request", name, c.Name, res)
			}
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			t.Errorf("%s/%s: no memory limit", name, c.Name)
		}
	}
}

// checkSelector asserts that selector picks the pods of d (and only via labels d's pods carry).
func checkSelector(t *testing.T, what string, selector map[string]string, d *appsv1.Deployment) {
	t.Helper()
	checkSelectorOf(t, what, selector, d.Name, d.Spec.Template.Labels)
}

// checkSelectorOf asserts that selector picks pods labelled podLabels (those of workload name).
func checkSelectorOf(t *testing.T, what string, selector map[string]string, name string, podLabels map[string]string) {
	t.Helper()
	if len(selector) == 0 {
		t.Errorf("%s: empty selector", what)
	}
	for k, v := range selector {
		if podLabels[k] != v {
			t.Errorf("%s: selector %s=%s does not match the pods of %s (%v)", what, k, v, name, podLabels)
		}
	}
}

func TestPortalDeployment(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	d := m.deployments[portalName]
	if d == nil {
		t.Fatalf("no Deployment %s", portalName)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas = %v, want at least 2", d.Spec.Replicas)
	}
	if d.Spec.Selector == nil {
		t.Fatal("no selector")
	}
	checkSelector(t, "deployment selector", d.Spec.Selector.MatchLabels, d)
	if ru := d.Spec.Strategy.RollingUpdate; d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("rollouts must never drop below the wanted replicas (RollingUpdate, maxUnavailable 0): %+v", d.Spec.Strategy)
	}
	checkHardened(t, d.Name, d.Spec.Template.Spec)

	c := container(t, d, "portal")
	if c.Image != portalImage {
		t.Errorf("image %q, want %q (kustomization images sets registry and tag)", c.Image, portalImage)
	}
	httpPort, ok := namedPort(c, "http")
	if !ok {
		t.Fatal("no container port named http")
	}
	metricsPort, ok := namedPort(c, "metrics")
	if !ok {
		t.Fatal("no container port named metrics")
	}
	for probeName, want := range map[string]struct {
		probe *corev1.Probe
		path  string
	}{"readiness": {c.ReadinessProbe, "/readyz"}, "liveness": {c.LivenessProbe, "/healthz"}} {
		p := want.probe
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: not an HTTP GET", probeName)
			continue
		}
		if p.HTTPGet.Path != want.path || p.HTTPGet.Port != intstr.FromString("http") {
			t.Errorf("%s probe: GET %s on port %s, want %s on port http", probeName, p.HTTPGet.Path, p.HTTPGet.Port.String(), want.path)
		}
	}

	// Configuration: ConfigMap and Secret references resolve, $(VAR) expansions refer to earlier variables.
	env := map[string]string{}
	configRefs := 0
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			t.Errorf("envFrom other than a ConfigMap: %+v", from)
			continue
		}
		cm := m.configMaps[from.ConfigMapRef.Name]
		if cm == nil {
			t.Fatalf("envFrom ConfigMap %q does not exist", from.ConfigMapRef.Name)
		}
		configRefs++
		for k, v := range cm.Data {
			env[k] = v
		}
	}
	if configRefs != 1 {
		t.Errorf("%d ConfigMaps in envFrom, want the one %s", configRefs, configName)
	}
	secretEnv := map[string]bool{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s := m.secrets[ref.Name]
			if s == nil {
				t.Errorf("env %s: Secret %q does not exist", e.Name, ref.Name)
				continue
			}
			if _, ok := s.StringData[ref.Key]; !ok {
				if _, ok := s.Data[ref.Key]; !ok {
					t.Errorf("env %s: Secret %s has no key %q", e.Name, ref.Name, ref.Key)
				}
			}
			secretEnv[e.Name] = true
			env[e.Name] = "secret-" + ref.Key
		case e.ValueFrom != nil:
			t.Errorf("env %s: unexpected valueFrom %+v", e.Name, e.ValueFrom)
		default:
			for _, ref := range regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).FindAllStringSubmatch(e.Value, -1) {
				if _, ok := env[ref[1]]; !ok {
					t.Errorf("env %s refers to $(%s), which is not defined before it", e.Name, ref[1])
				}
			}
			env[e.Name] = e.Value
		}
	}
	for _, secret := range []string{"PORTAL_OIDC_CLIENT_SECRET", "PORTAL_SESSION_KEYS", "PORTAL_DATABASE_URL"} {
		if !secretEnv[secret] {
			t.Errorf("%s does not come from a Secret", secret)
		}
	}
	for k := range m.configMaps[configName].Data {
		if strings.Contains(k, "SECRET") || strings.Contains(k, "KEYS") || strings.Contains(k, "PASSWORD") {
			t.Errorf("the ConfigMap holds %s, a secret", k)
		}
	}

	// Several replicas share their state, sessions included, in PostgreSQL: the database store
	// (cmd/portal newSessionStore).
	if env["PORTAL_SESSION_STORE"] != "database" {
		t.Errorf("PORTAL_SESSION_STORE = %q, want database: server-side sessions in the shared state database", env["PORTAL_SESSION_STORE"])
	}
	public, err := url.Parse(env["PORTAL_PUBLIC_URL"])
	if err != nil || public.Scheme != "https" || public.Host == "" {
		t.Errorf("PORTAL_PUBLIC_URL = %q, want an https URL (Secure cookies, HSTS)", env["PORTAL_PUBLIC_URL"])
	}
	if port := portOf(t, "PORTAL_ADDR", env["PORTAL_ADDR"]); port != fmt.Sprint(httpPort) {
		t.Errorf("PORTAL_ADDR port %s is not the http container port %d", port, httpPort)
	}
	if port := portOf(t, "PORTAL_METRICS_ADDR", env["PORTAL_METRICS_ADDR"]); port != fmt.Sprint(metricsPort) {
		t.Errorf("PORTAL_METRICS_ADDR port %s is not the metrics container port %d", port, metricsPort)
	}
	if a := d.Spec.Template.Annotations; a["prometheus.io/port"] != fmt.Sprint(metricsPort) || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("prometheus annotations %v do not point at the metrics port", a)
	}

	// Graceful shutdown fits in the termination grace period.
	grace, err := time.ParseDuration(env["PORTAL_SHUTDOWN_GRACE"])
	if err != nil {
		t.Fatalf("PORTAL_SHUTDOWN_GRACE = %q: %v", env["PORTAL_SHUTDOWN_GRACE"], err)
	}
	// Batch jobs stop at SIGTERM and their calls in flight end within the v2 timeout: that must
	// fit in the grace, or a batch's last calls are cut (and checked again by the next runner).
	if v2Timeout, err := time.ParseDuration(env["PORTAL_V2_TIMEOUT"]); err != nil || v2Timeout >= grace {
		t.Errorf("PORTAL_V2_TIMEOUT = %q must be shorter than PORTAL_SHUTDOWN_GRACE %s (batch calls in flight drain within it)", env["PORTAL_V2_TIMEOUT"], grace)
	}
	var preStop time.Duration
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	}
	if preStop == 0 {
		t.Error("no preStop pause: the pod would stop accepting connections before the ingress stops sending them")
	}
	period := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if period == nil || time.Duration(*period)*time.Second <= preStop+grace {
		t.Errorf("terminationGracePeriodSeconds %v must exceed the preStop pause %s + PORTAL_SHUTDOWN_GRACE %s", period, preStop, grace)
	}

	// With a read-only root, /tmp is the one writable place.
	tmp := false
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == "/tmp" {
			for _, v := range d.Spec.Template.Spec.Volumes {
				tmp = tmp || (v.Name == vm.Name && v.EmptyDir != nil)
			}
		}
	}
	if !tmp {
		t.Error("no emptyDir volume at /tmp")
	}
}

func TestPortalServicePDBAndHPA(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	d := m.deployments[portalName]
	if d == nil {
		t.Fatalf("no Deployment %s", portalName)
	}
	c := container(t, d, "portal")

	svc := m.services[portalName]
	if svc == nil {
		t.Fatalf("no Service %s", portalName)
	}
	checkSelector(t, "service "+svc.Name, svc.Spec.Selector, d)
	for _, p := range svc.Spec.Ports {
		if _, ok := namedPort(c, p.TargetPort.String()); !ok {
			t.Errorf("service port %s targets %q, not a named container port", p.Name, p.TargetPort.String())
		}
	}

	pdb := m.pdbs[portalName]
	if pdb == nil || pdb.Spec.Selector == nil {
		t.Fatalf("no PodDisruptionBudget %s with a selector", portalName)
	}
	checkSelector(t, "pdb", pdb.Spec.Selector.MatchLabels, d)
	if pdb.Spec.MaxUnavailable == nil && pdb.Spec.MinAvailable == nil {
		t.Error("the PodDisruptionBudget sets neither maxUnavailable nor minAvailable")
	}
	if pdb.Spec.MaxUnavailable != nil && pdb.Spec.MaxUnavailable.IntValue() >= int(*d.Spec.Replicas) {
		t.Errorf("PDB maxUnavailable %s lets a drain take every replica", pdb.Spec.MaxUnavailable.String())
	}

	hpa := m.hpas[portalName]
	if hpa == nil {
		t.Fatalf("no HorizontalPodAutoscaler %s", portalName)
	}
	ref := hpa.Spec.ScaleTargetRef
	if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != d.Name {
		t.Errorf("the HPA scales %s %s %s, want apps/v1 Deployment %s", ref.APIVersion, ref.Kind, ref.Name, d.Name)
	}
	if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 2 || hpa.Spec.MaxReplicas < *hpa.Spec.MinReplicas {
		t.Errorf("HPA replicas %v..%d, want a minimum of at least 2 and max >= min", hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas)
	}
	cpu := false
	for _, metric := range hpa.Spec.Metrics {
		cpu = cpu || (metric.Type == autoscalingv2.ResourceMetricSourceType && metric.Resource != nil && metric.Resource.Name == corev1.ResourceCPU)
	}
	if !cpu {
		t.Error("the HPA does not scale on CPU")
	}
	if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
		t.Error("CPU utilization needs a CPU request on the portal container")
	}

	ing := m.ingresses[portalName]
	if ing == nil {
		t.Fatalf("no Ingress %s", portalName)
	}
	public, _ := url.Parse(m.configMaps[configName].Data["PORTAL_PUBLIC_URL"])
	tlsHost := false
	for _, tls := range ing.Spec.TLS {
		tlsHost = tlsHost || (slices.Contains(tls.Hosts, public.Hostname()) && tls.SecretName != "")
	}
	if !tlsHost {
		t.Errorf("the Ingress does not terminate TLS for %s (PORTAL_PUBLIC_URL)", public.Hostname())
	}
	for _, rule := range ing.Spec.Rules {
		if rule.Host != public.Hostname() {
			t.Errorf("Ingress host %q is not PORTAL_PUBLIC_URL's host %q", rule.Host, public.Hostname())
		}
		for _, path := range rule.HTTP.Paths {
			b := path.Backend.Service
			if b == nil || b.Name != svc.Name || b.Port.Name != "http" {
				t.Errorf("Ingress path %s goes to %+v, want Service %s port http (never metrics)", path.Path, b, svc.Name)
			}
		}
	}
}

// statefulContainer returns the StatefulSet's container named name.
func statefulContainer(t *testing.T, s *appsv1.StatefulSet, name string) *corev1.Container {
	t.Helper()
	for i := range s.Spec.Template.Spec.Containers {
		if c := &s.Spec.Template.Spec.Containers[i]; c.Name == name {
			return c
		}
	}
	t.Fatalf("statefulset %s has no container %q", s.Name, name)
	return nil
}

func envValue(c *corev1.Container, name string) (value string, secretKey string) {
	for _, e := range c.Env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == secretName {
			return "", e.ValueFrom.SecretKeyRef.Key
		}
		return e.Value, ""
	}
	return "", ""
}

// TestPostgres: the optional PostgreSQL of the manifests keeps every commit (the portal marks a
// batch line in flight durably before its v2 call), on a volume that outlives the pod, with the
// password from the Secret, reachable by the portal's pods only.
func TestPostgres(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	s := m.statefulSets[postgresName]
	if s == nil || s.Spec.Selector == nil {
		t.Fatalf("no StatefulSet %s with a selector", postgresName)
	}
	pods := s.Spec.Template.Labels
	checkSelectorOf(t, "postgres statefulset selector", s.Spec.Selector.MatchLabels, s.Name, pods)
	if s.Spec.Replicas == nil || *s.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1 (one primary; several pods would be several databases)", s.Spec.Replicas)
	}
	checkHardened(t, s.Name, s.Spec.Template.Spec)
	c := statefulContainer(t, s, "postgres")
	if !strings.HasPrefix(c.Image, "postgres:15") {
		t.Errorf("image %q, want postgres:15", c.Image)
	}
	if port, ok := namedPort(c, "postgres"); !ok || port != 5432 {
		t.Errorf("container port = %d, %v; want 5432 named postgres", port, ok)
	}
	if _, key := envValue(c, "POSTGRES_PASSWORD"); key == "" || m.secrets[secretName] == nil || m.secrets[secretName].StringData[key] == "" {
		t.Errorf("POSTGRES_PASSWORD does not come from a key of Secret %s (%q)", secretName, key)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.Exec == nil || !slices.Contains(c.ReadinessProbe.Exec.Command, "pg_isready") {
		t.Errorf("readiness probe %+v is not pg_isready: the Service would send connections to a database still starting", c.ReadinessProbe)
	}

	// Durability: fsync and synchronous_commit on, said explicitly; nothing turns them off.
	settings := map[string]string{}
	args := append(slices.Clone(c.Command), c.Args...)
	for i, a := range args {
		if a == "-c" && i+1 < len(args) {
			k, v, _ := strings.Cut(args[i+1], "=")
			settings[k] = v
		}
	}
	for _, k := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		if settings[k] != "on" {
			t.Errorf("%s = %q, want on: a commit the portal heard of must survive a crash", k, settings[k])
		}
	}

	// The data directory is on the volume claim template, below its mount point.
	pgdata, _ := envValue(c, "PGDATA")
	var claimMount string
	for _, vm := range c.VolumeMounts {
		for _, tpl := range s.Spec.VolumeClaimTemplates {
			if vm.Name == tpl.Name {
				claimMount = vm.MountPath
			}
		}
	}
	if claimMount == "" || !strings.HasPrefix(pgdata, claimMount+"/") {
		t.Errorf("PGDATA %q is not a directory on the volume claim template (mounted at %q)", pgdata, claimMount)
	}

	// The Service governs the StatefulSet and reaches its pods on 5432.
	svc := m.services[s.Spec.ServiceName]
	if svc == nil || s.Spec.ServiceName != postgresName {
		t.Fatalf("serviceName %q is not the Service %s", s.Spec.ServiceName, postgresName)
	}
	checkSelectorOf(t, "postgres service", svc.Spec.Selector, s.Name, pods)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 5432 || svc.Spec.Ports[0].TargetPort != intstr.FromString("postgres") {
		t.Errorf("service ports %+v, want 5432 to the postgres port", svc.Spec.Ports)
	}

	np := m.netpols[postgresName]
	if np == nil {
		t.Fatalf("no NetworkPolicy %s", postgresName)
	}
	checkSelectorOf(t, "network policy pod selector", np.Spec.PodSelector.MatchLabels, s.Name, pods)
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 || np.Spec.Ingress[0].From[0].PodSelector == nil {
		t.Fatalf("the NetworkPolicy must admit exactly the portal's pods: %+v", np.Spec.Ingress)
	}
	checkSelector(t, "network policy from", np.Spec.Ingress[0].From[0].PodSelector.MatchLabels, m.deployments[portalName])
}

// TestPostgresRefusesThePlaceholderPassword runs the container's start script as the pod would,
// with the Secret's placeholder and with a real password: the placeholder stops it, a real
// password goes on to the image's entrypoint.
func TestPostgresRefusesThePlaceholderPassword(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	s := m.statefulSets[postgresName]
	if s == nil {
		t.Fatalf("no StatefulSet %s", postgresName)
	}
	c := statefulContainer(t, s, "postgres")
	if len(c.Command) < 3 || c.Command[0] != "sh" || c.Command[1] != "-c" {
		t.Fatalf("command %q is not sh -c SCRIPT", c.Command)
	}
	_, key := envValue(c, "POSTGRES_PASSWORD")
	placeholder := m.secrets[secretName].StringData[key]
	run := func(password string) (string, error) {
		// An empty PATH but a fake entrypoint: reaching it is what a good password does.
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "docker-entrypoint.sh"), []byte("#!/bin/sh\necho entrypoint \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", append(c.Command[1:], c.Args...)...)
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "POSTGRES_PASSWORD=" + password}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(placeholder)
	if err == nil || !strings.Contains(out, key) {
		t.Errorf("with the placeholder %q: %v, %q; want a refusal naming %s", placeholder, err, out, key)
	}
	out, err = run("0123456789abcdef0123456789abcdef")
	if err != nil || !strings.HasPrefix(out, "entrypoint postgres -c") {
		t.Errorf("with a real password: %v, %q; want the entrypoint run with the server's arguments", err, out)
	}
}

// TestDatabaseURLOfTheDocs: the Secret that docs/operations.md tells operators to create gives the
// portal a PORTAL_DATABASE_URL that reaches the manifests' PostgreSQL: its host is their Service, its
// port the Service's, its user, database and password the ones the StatefulSet initialises.
func TestDatabaseURLOfTheDocs(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	doc, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	s := m.statefulSets[postgresName]
	if s == nil {
		t.Fatalf("no StatefulSet %s", postgresName)
	}
	c := statefulContainer(t, s, "postgres")
	_, passwordKey := envValue(c, "POSTGRES_PASSWORD")
	_, urlKey := envValue(container(t, m.deployments[portalName], "portal"), "PORTAL_DATABASE_URL")
	if urlKey == "" {
		t.Fatal("the portal's PORTAL_DATABASE_URL does not come from the Secret")
	}
	literal := func(key string) string {
		match := regexp.MustCompile(`--from-literal=` + regexp.QuoteMeta(key) + `="([^"]*)"`).FindSubmatch(doc)
		if match == nil {
			t.Fatalf("%s has no kubectl create secret ... --from-literal=%s=\"...\"", operationsDoc, key)
		}
		return string(match[1])
	}
	password := literal(passwordKey)
	if !strings.HasPrefix(password, "$") {
		t.Fatalf("the documented %s is %q, want a shell variable shared with %s", passwordKey, password, urlKey)
	}
	raw := literal(urlKey)
	u, err := url.Parse(strings.ReplaceAll(raw, password, "0123abcd"))
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("the documented %s %q is not a postgres URL: %v", urlKey, raw, err)
	}
	if pw, _ := u.User.Password(); pw != "0123abcd" {
		t.Errorf("the documented %s's password is not %s's %s", urlKey, passwordKey, password)
	}
	if user, _ := envValue(c, "POSTGRES_USER"); u.User.Username() != user {
		t.Errorf("the documented URL's user %q is not POSTGRES_USER %q", u.User.Username(), user)
	}
	if db, _ := envValue(c, "POSTGRES_DB"); u.Path != "/"+db {
		t.Errorf("the documented URL's database %q is not POSTGRES_DB %q", u.Path, db)
	}
	svc := m.services[u.Hostname()]
	if svc == nil {
		t.Fatalf("the documented URL's host %q is no Service of the manifests", u.Hostname())
	}
	checkSelectorOf(t, "the database URL's Service", svc.Spec.Selector, s.Name, s.Spec.Template.Labels)
	if len(svc.Spec.Ports) == 0 || fmt.Sprint(svc.Spec.Ports[0].Port) != u.Port() {
		t.Errorf("the documented URL's port %q is not the Service's %+v", u.Port(), svc.Spec.Ports)
	}
}

// TestNothingMissing: whatever a workload needs is in the manifests: every Secret and ConfigMap it
// reads, every in-cluster host its settings name (a URL's host without a dot is a Service of this
// namespace). No Redis is left: the portal's replicas, and so their readiness, depend on nothing the
// kustomization does not create (or the operator's Secret names, for a managed PostgreSQL).
func TestNothingMissing(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	pods := map[string]corev1.PodSpec{}
	for name, d := range m.deployments {
		pods["deployment "+name] = d.Spec.Template.Spec
	}
	for name, s := range m.statefulSets {
		pods["statefulset "+name] = s.Spec.Template.Spec
	}
	hostOf := regexp.MustCompile(`^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?([^:/?]+)`)
	for workload, pod := range pods {
		if len(pod.InitContainers) != 0 {
			t.Errorf("%s has init containers: nothing should wait for anything before the portal starts", workload)
		}
		for _, c := range pod.Containers {
			for _, from := range c.EnvFrom {
				if from.ConfigMapRef != nil && m.configMaps[from.ConfigMapRef.Name] == nil {
					t.Errorf("%s/%s: ConfigMap %s is missing", workload, c.Name, from.ConfigMapRef.Name)
				}
			}
			values := map[string]string{}
			for _, e := range c.Env {
				values[e.Name] = e.Value
				if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
					s := m.secrets[ref.SecretKeyRef.Name]
					if s == nil {
						t.Errorf("%s/%s: env %s: Secret %s is missing", workload, c.Name, e.Name, ref.SecretKeyRef.Name)
					} else if _, ok := s.StringData[ref.SecretKeyRef.Key]; !ok {
						t.Errorf("%s/%s: env %s: Secret %s has no key %s", workload, c.Name, e.Name, s.Name, ref.SecretKeyRef.Key)
					}
				}
			}
			for _, from := range c.EnvFrom {
				if from.ConfigMapRef != nil && m.configMaps[from.ConfigMapRef.Name] != nil {
					maps.Copy(values, m.configMaps[from.ConfigMapRef.Name].Data)
				}
			}
			for name, value := range values {
				if strings.Contains(strings.ToUpper(name), "REDIS") {
					t.Errorf("%s/%s sets %s: Redis is not part of these manifests", workload, c.Name, name)
				}
				if match := hostOf.FindStringSubmatch(value); match != nil && !strings.Contains(match[1], ".") && m.services[match[1]] == nil {
					t.Errorf("%s/%s: %s names host %q, which is no Service of the manifests", workload, c.Name, name, match[1])
				}
			}
		}
	}
	for key := range m.secrets[secretName].StringData {
		if strings.Contains(key, "redis") {
			t.Errorf("Secret %s holds %s: Redis is not part of these manifests", secretName, key)
		}
	}
}
