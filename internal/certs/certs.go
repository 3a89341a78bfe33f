/*
Copyright 2026 The platform-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package certs keeps the webhook serving certificate of the manager: a CA
// and a certificate in a Secret of the manager's namespace, the CA injected
// into the webhook configurations and the CRD's conversion, both rotated
// before they expire. It wires github.com/open-policy-agent/cert-controller,
// which does the work.
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
	// Ready is closed once the certificate is on disk.
	Ready chan struct{}
	// Webhooks are the configurations and CRDs that get the CA; nil means
	// the operator's own (DefaultWebhooks).
	Webhooks []rotator.WebhookInfo
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

// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=update,resourceNames=platform-operator-webhook-server-cert
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=update,resourceNames=platform-operator-validating-webhook-configuration
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=update,resourceNames=platform-operator-mutating-webhook-configuration
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=update,resourceNames=scheduletasks.platform.example.com

// AddRotator makes the manager keep its own webhook CA and serving
// certificate in the Secret, inject the CA where o.Webhooks say, and rotate
// both before they expire.
func AddRotator(mgr ctrl.Manager, o Options) error {
	if o.Namespace == "" {
		return fmt.Errorf("the manager's namespace is unknown: set POD_NAMESPACE, or run with --cert-rotation=false and provide certificates")
	}
	if o.Webhooks == nil {
		o.Webhooks = DefaultWebhooks()
	}
	return rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: o.Namespace, Name: SecretName},
		CertDir:        o.CertDir,
		CAName:         "platform-operator-ca",
		CAOrganization: "platform-operator",
		DNSName:        fmt.Sprintf("%s.%s.svc", ServiceName, o.Namespace),
		ExtraDNSNames:  []string{fmt.Sprintf("%s.%s.svc.cluster.local", ServiceName, o.Namespace)},
		IsReady:        o.Ready,
		Webhooks:       o.Webhooks,
		// Every replica serves webhooks, so every replica needs the files,
		// not only the leader.
		RequireLeaderElection: false,
		EnableReadinessCheck:  true,
	})
}
