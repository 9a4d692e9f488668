// Package deploy holds the portal's Kubernetes manifests (kubernetes/, applied with kubectl apply -k)
// and their test: every manifest is decoded strictly into the real Kubernetes API types and checked
// for what the portal relies on (probes, security context, replicas, the PostgreSQL state database
// and its durability, secret and config references, selectors). It is its own Go module, so that
// k8s.io/api and its dependencies stay out of the portal's go.sum; run its tests with
// `cd deploy && go test ./...`.
package deploy
