// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package certs keeps the webhook serving certificate of the manager: a CA
// and a certificate in a Secret of the manager's namespace, the CA injected
// into the webhook configurations and the CRD's conversion, both rotated
// before they expire. It wires github.com/open-policy-agent/cert-controller,
// which does the work, on the leader only, and gives the serving
// certificate an ECDSA key in place of cert-controller's RSA one (see
// servingKey); every replica serves with the files the kubelet mounts from
// the Secret.
package certs

import (
	"fmt"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Options say where the certificate lives and what trusts it.
type Options struct {
	// Namespace is the manager's namespace, which holds the Secret.
	Namespace string
	// CertDir is where the webhook server reads tls.crt and tls.key.
	CertDir string
	// Ready is closed once a valid certificate and key are in CertDir, on
	// every replica, the leader or not.
	Ready chan struct{}
	// Webhooks are the configurations and CRDs that get the CA, at most one
	// of each type; nil means the operator's own (DefaultWebhooks).
	Webhooks []rotator.WebhookInfo
	// ControllerName names the rotator's controller; cert-controller's
	// default when empty. Names are unique per process, so tests that run
	// several managers set their own.
	ControllerName string
}

// DefaultWebhooks are the configurations and the CRD that config/default installs.
func DefaultWebhooks() []rotator.WebhookInfo {
	return []rotator.WebhookInfo{
		{Name: ValidatingWebhookName, Type: rotator.Validating},
		{Name: MutatingWebhookName, Type: rotator.Mutating},
		{Name: ConversionCRDName, Type: rotator.CRDConversion},
	}
}

// Names of the objects the certificate rotator keeps, as config/default
// names them (namePrefix platform-operator-).
const (
	// SecretName is the Secret that holds the CA and the serving certificate.
	SecretName = "platform-operator-webhook-server-cert"
	// ServiceName is the Service in front of the webhook server.
	ServiceName = "platform-operator-webhook-service"
	// ValidatingWebhookName and MutatingWebhookName are the admission configurations.
	ValidatingWebhookName = "platform-operator-validating-webhook-configuration"
	MutatingWebhookName   = "platform-operator-mutating-webhook-configuration"
	// ConversionCRDName is the CRD that converts through the webhook.
	ConversionCRDName = "scheduletasks.platform.example.com"
)

// The rotator reads and writes only the objects named above: RBAC grants
// nothing else (resourceNames), and its cache lists and watches each by
// name (see namedOnly). The Secret is shipped empty with the install,
// because create cannot be limited to a name.
//
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;list;watch;update;patch,resourceNames=platform-operator-webhook-server-cert
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch;update;patch,resourceNames=platform-operator-validating-webhook-configuration
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;list;watch;update;patch,resourceNames=platform-operator-mutating-webhook-configuration
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;update;patch,resourceNames=scheduletasks.platform.example.com

// AddRotator makes the manager keep its own webhook CA and serving
// certificate in the Secret, inject the CA where o.Webhooks say, and rotate
// both before they expire.
//
// Only the leader rotates: two replicas making a first CA at once would
// each inject their own, and the loser's webhook server would serve a
// certificate the API server no longer trusts until the kubelet caught up.
// Every replica, followers included, serves the files the kubelet mounts
// from the Secret, and is ready once they are there (o.Ready).
func AddRotator(mgr ctrl.Manager, o Options) error {
	if o.Namespace == "" {
		return fmt.Errorf("the manager's namespace is unknown: set POD_NAMESPACE, or run with --cert-rotation=false and provide certificates")
	}
	if o.Webhooks == nil {
		o.Webhooks = DefaultWebhooks()
	}
	secret := types.NamespacedName{Namespace: o.Namespace, Name: SecretName}
	scoped, err := namedOnly(mgr, secret, o.Webhooks)
	if err != nil {
		return err
	}
	if err := rotator.AddRotator(scoped, &rotator.CertRotator{
		SecretKey:      secret,
		CertDir:        o.CertDir,
		CAName:         "platform-operator-ca",
		CAOrganization: "platform-operator",
		DNSName:        fmt.Sprintf("%s.%s.svc", ServiceName, o.Namespace),
		ExtraDNSNames:  []string{fmt.Sprintf("%s.%s.svc.cluster.local", ServiceName, o.Namespace)},
		// Closed by the rotator on the leader once the CA is injected;
		// readiness follows the files instead, which every replica sees.
		IsReady:               make(chan struct{}),
		Webhooks:              o.Webhooks,
		ControllerName:        o.ControllerName,
		RequireLeaderElection: true,
		EnableReadinessCheck:  true,
	}); err != nil {
		return err
	}
	if err := mgr.Add(&servingKey{reader: mgr.GetAPIReader(), writer: mgr.GetClient(), secret: secret}); err != nil {
		return err
	}
	return mgr.Add(&certFiles{dir: o.CertDir, ready: o.Ready})
}
