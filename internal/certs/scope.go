// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package certs

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// namedOnly returns the manager as the rotator should see it: its REST
// config lists and watches Secrets of the namespace and the webhook
// configurations and CRDs only with a metadata.name field selector naming
// the one object the rotator keeps. cert-controller builds its own cache
// from that config and offers no option to scope it; with the selector,
// RBAC rules limited by resourceNames authorize its list and watch, so the
// manager needs no right to read any other Secret, webhook configuration
// or CRD.
func namedOnly(mgr ctrl.Manager, secret types.NamespacedName, webhooks []rotator.WebhookInfo) (ctrl.Manager, error) {
	names := map[string]string{
		"/api/v1/namespaces/" + secret.Namespace + "/secrets": secret.Name,
	}
	for _, w := range webhooks {
		var path string
		switch w.Type {
		case rotator.Validating:
			path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
		case rotator.Mutating:
			path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
		case rotator.CRDConversion:
			path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
		default:
			return nil, fmt.Errorf("webhook %s: type %v is not supported", w.Name, w.Type)
		}
		if other, ok := names[path]; ok {
			// A field selector names one object; the rotator's watch of a
			// kind is one list.
			return nil, fmt.Errorf("webhooks %s and %s are of the same type; the rotator keeps one of each", other, w.Name)
		}
		names[path] = w.Name
	}
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &nameSelector{next: rt, names: names} })
	return &scopedManager{Manager: mgr, config: cfg}, nil
}

// scopedManager is a manager whose REST config is replaced; everything else,
// the client that writes included, is the manager's own.
type scopedManager struct {
	ctrl.Manager
	config *rest.Config
}

// GetConfig returns the scoped REST config.
func (m *scopedManager) GetConfig() *rest.Config { return m.config }

// nameSelector adds a metadata.name field selector to the lists and watches
// of the collections it knows (by exact path; requests for one object by
// name pass unchanged).
type nameSelector struct {
	next  http.RoundTripper
	names map[string]string
}

// RoundTrip implements http.RoundTripper.
func (n *nameSelector) RoundTrip(req *http.Request) (*http.Response, error) {
	name, ok := n.names[req.URL.Path]
	if !ok || req.Method != http.MethodGet {
		return n.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	q := req.URL.Query()
	sel := fields.OneTermEqualSelector("metadata.name", name)
	if existing := q.Get("fieldSelector"); existing != "" {
		parsed, err := fields.ParseSelector(existing)
		if err != nil {
			return nil, fmt.Errorf("field selector %q: %w", existing, err)
		}
		sel = fields.AndSelectors(parsed, sel)
	}
	q.Set("fieldSelector", sel.String())
	req.URL.RawQuery = q.Encode()
	return n.next.RoundTrip(req)
}

// certFiles closes ready once dir holds a certificate and key that form a
// valid pair. It runs on every replica: followers never run the rotator,
// and the Secret the install ships starts with empty files.
type certFiles struct {
	dir   string
	ready chan struct{}
}

// certPoll is how often certFiles looks at the directory.
const certPoll = 500 * time.Millisecond

// Start waits for the files; a manager runnable.
func (c *certFiles) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("certs")
	t := time.NewTicker(certPoll)
	defer t.Stop()
	for {
		_, err := tls.LoadX509KeyPair(filepath.Join(c.dir, "tls.crt"), filepath.Join(c.dir, "tls.key"))
		if err == nil {
			log.Info("Webhook serving certificate is in place", "dir", c.dir)
			close(c.ready)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// NeedLeaderElection is false: every replica serves webhooks.
func (c *certFiles) NeedLeaderElection() bool { return false }
