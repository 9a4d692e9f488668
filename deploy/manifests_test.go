package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
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
	portalName  = "cpq-portal"
	redisName   = "cpq-portal-redis"
	configName  = "cpq-portal-config"
	secretName  = "cpq-portal-secrets"
	portalImage = "cpq-portal"
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
		services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{},
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

// checkHardened asserts the pod and container security settings both workloads need (and the
// restricted Pod Security Standard demands).
func checkHardened(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	pod := d.Spec.Template.Spec
	if pod.SecurityContext == nil || pod.SecurityContext.SeccompProfile == nil || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod seccompProfile is not RuntimeDefault", d.Name)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: the service account token is mounted (nothing here talks to the Kubernetes API)", d.Name)
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s/%s: no securityContext", d.Name, c.Name)
			continue
		}
		nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot)
		if !nonRoot {
			t.Errorf("%s/%s: runAsNonRoot is not true", d.Name, c.Name)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s/%s: readOnlyRootFilesystem is not true", d.Name, c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s/%s: allowPrivilegeEscalation is not false", d.Name, c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s/%s: privileged", d.Name, c.Name)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
			t.Errorf("%s/%s: capabilities must drop ALL and add none: %+v", d.Name, c.Name, sc.Capabilities)
		}
		if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s/%s: container seccompProfile is not RuntimeDefault", d.Name, c.Name)
		}
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Requests[res]; !ok {
				t.Errorf("%s/%s: no %s request", d.Name, c.Name, res)
			}
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			t.Errorf("%s/%s: no memory limit", d.Name, c.Name)
		}
	}
}

// checkSelector asserts that selector picks the pods of d (and only via labels d's pods carry).
func checkSelector(t *testing.T, what string, selector map[string]string, d *appsv1.Deployment) {
	t.Helper()
	if len(selector) == 0 {
		t.Errorf("%s: empty selector", what)
	}
	for k, v := range selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("%s: selector %s=%s does not match the pods of %s (%v)", what, k, v, d.Name, d.Spec.Template.Labels)
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
	checkHardened(t, d)

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
	for _, secret := range []string{"PORTAL_OIDC_CLIENT_SECRET", "PORTAL_SESSION_KEYS"} {
		if !secretEnv[secret] {
			t.Errorf("%s does not come from a Secret", secret)
		}
	}
	for k := range m.configMaps[configName].Data {
		if strings.Contains(k, "SECRET") || strings.Contains(k, "KEYS") || strings.Contains(k, "PASSWORD") {
			t.Errorf("the ConfigMap holds %s, a secret", k)
		}
	}

	if env["PORTAL_SESSION_STORE"] != "redis" {
		t.Errorf("PORTAL_SESSION_STORE = %q, want redis: several replicas need server-side sessions", env["PORTAL_SESSION_STORE"])
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

	redisURL, err := url.Parse(env["PORTAL_REDIS_URL"])
	if err != nil || redisURL.Scheme != "redis" {
		t.Fatalf("PORTAL_REDIS_URL = %q: %v", env["PORTAL_REDIS_URL"], err)
	}
	redisSvc := m.services[redisURL.Hostname()]
	if redisSvc == nil {
		t.Fatalf("PORTAL_REDIS_URL names host %q, which is no Service", redisURL.Hostname())
	}
	portFound := false
	for _, p := range redisSvc.Spec.Ports {
		portFound = portFound || fmt.Sprint(p.Port) == redisURL.Port()
	}
	if !portFound {
		t.Errorf("PORTAL_REDIS_URL port %s is not a port of Service %s", redisURL.Port(), redisSvc.Name)
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

func TestRedis(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	d := m.deployments[redisName]
	if d == nil || d.Spec.Selector == nil {
		t.Fatalf("no Deployment %s with a selector", redisName)
	}
	checkSelector(t, "redis deployment selector", d.Spec.Selector.MatchLabels, d)
	checkHardened(t, d)
	c := container(t, d, "redis")
	port, ok := namedPort(c, "redis")
	if !ok || port != 6379 {
		t.Errorf("redis container port = %d, %v; want 6379 named redis", port, ok)
	}
	// The password comes from the same Secret key the portal puts into PORTAL_REDIS_URL.
	var passwordRef string
	for _, e := range c.Env {
		if e.Name == "REDIS_PASSWORD" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == secretName {
			passwordRef = e.ValueFrom.SecretKeyRef.Key
		}
	}
	if passwordRef == "" || !slices.Contains(c.Args, "--requirepass") || !slices.Contains(c.Args, "$(REDIS_PASSWORD)") {
		t.Errorf("redis does not require the password from Secret %s: env %+v args %v", secretName, c.Env, c.Args)
	}
	for _, e := range container(t, m.deployments[portalName], "portal").Env {
		if e.Name == "REDIS_PASSWORD" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Key != passwordRef) {
			t.Errorf("the portal's REDIS_PASSWORD is not the redis one (%s)", passwordRef)
		}
	}

	// The job records are the source of truth of a batch: every write is on disk before redis
	// answers it, on a volume that outlives the pod, and no key is ever evicted.
	arg := func(name string) string {
		if i := slices.Index(c.Args, name); i >= 0 && i+1 < len(c.Args) {
			return c.Args[i+1]
		}
		return ""
	}
	if arg("--appendonly") != "yes" || arg("--appendfsync") != "always" || arg("--maxmemory-policy") != "noeviction" {
		t.Errorf("redis must persist every write and never evict: args %v", c.Args)
	}
	var dataClaim string
	for _, v := range d.Spec.Template.Spec.Volumes {
		for _, vm := range c.VolumeMounts {
			if v.Name == vm.Name && vm.MountPath == arg("--dir") && v.PersistentVolumeClaim != nil {
				dataClaim = v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	if pvc := m.pvcs[dataClaim]; dataClaim == "" || pvc == nil {
		t.Errorf("redis's --dir %q is not on a PersistentVolumeClaim of the manifests (%q)", arg("--dir"), dataClaim)
	}

	svc := m.services[redisName]
	if svc == nil {
		t.Fatalf("no Service %s", redisName)
	}
	checkSelector(t, "redis service", svc.Spec.Selector, d)

	np := m.netpols[redisName]
	if np == nil {
		t.Fatalf("no NetworkPolicy %s", redisName)
	}
	checkSelector(t, "network policy pod selector", np.Spec.PodSelector.MatchLabels, d)
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 || np.Spec.Ingress[0].From[0].PodSelector == nil {
		t.Fatalf("the NetworkPolicy must admit exactly the portal's pods: %+v", np.Spec.Ingress)
	}
	checkSelector(t, "network policy from", np.Spec.Ingress[0].From[0].PodSelector.MatchLabels, m.deployments[portalName])
}
