// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package provenance

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/distribution/reference"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	// SignatureAnnotation on a CronJob's job template, and so on each of its
	// Jobs, holds the operator's signature of the pod template.
	SignatureAnnotation = "platform.example.com/template-signature"
	// TemplateHashAnnotation holds TemplateHash of an object's pod template
	// on the manager's cached copy, where the cache transform puts it before
	// it drops the template. It is never written to the API server; a value
	// found there is someone else's and the transform overwrites it.
	TemplateHashAnnotation = "platform.example.com/template-hash"

	// signatureVersion prefixes every signature, so that a later change of
	// the scheme (or of the key) can be told from a forgery.
	signatureVersion = "v1."
)

// jobLabels are the labels the API server adds to the pod template of every
// Job it creates (batch's generateSelector), legacy and current forms: they
// are the one difference between a CronJob's template and its Jobs'.
var jobLabels = []string{
	batchv1.JobNameLabel, batchv1.ControllerUidLabel,
	"job-name", "controller-uid",
}

// TemplateHash is the SHA-256, in hex, of a pod template's canonical JSON:
// the template without the labels the API server adds to a Job's pod
// template. encoding/json writes struct fields in a fixed order and map keys
// sorted, so equal templates hash equal.
//
// The template is encoded through a shallow copy with its own labels, not a
// deep copy: the cache hashes the template of every Job it receives, and a
// deep copy of it cost more than the hash.
func TemplateHash(t *corev1.PodTemplateSpec) string {
	c := *t
	c.Labels = nil
	for k, v := range t.Labels {
		if !slices.Contains(jobLabels, k) {
			if c.Labels == nil {
				c.Labels = make(map[string]string, len(t.Labels))
			}
			c.Labels[k] = v
		}
	}
	data, err := json.Marshal(&c)
	if err != nil {
		// A typed PodTemplateSpec always encodes; should it not, nothing
		// matches this value and nothing verifies.
		return "unencodable:" + err.Error()
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Signer signs and verifies pod templates with the operator's key.
type Signer struct {
	key []byte
}

// MinKeySize is the shortest key a Signer accepts, in bytes: the HMAC's own
// output size.
const MinKeySize = sha256.Size

// NewSigner returns a Signer with key, which must be at least MinKeySize bytes.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < MinKeySize {
		return nil, fmt.Errorf("signing key: %d bytes, need at least %d", len(key), MinKeySize)
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

// Sign returns the signature of the template with hash templateHash as a
// template of the object with UID owner. The NUL byte keeps the two parts
// apart: neither a UID nor a hex hash holds one.
func (s *Signer) Sign(owner types.UID, templateHash string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(owner))
	m.Write([]byte{0})
	m.Write([]byte(templateHash))
	return signatureVersion + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature is the signature of a template with hash
// templateHash for owner. It compares in constant time.
func (s *Signer) Verify(owner types.UID, templateHash, signature string) bool {
	if templateHash == "" || !strings.HasPrefix(signature, signatureVersion) {
		return false
	}
	return hmac.Equal([]byte(s.Sign(owner, templateHash)), []byte(signature))
}

// Defaulted returns the pod template as the API server stores it in a
// CronJob (batch/v1): t with the defaults Kubernetes applies to a pod
// template (k8s.io/kubernetes pkg/apis/core/v1 SetDefaults_PodSpec,
// SetDefaults_Container and the generated defaulters) for the fields that a
// rendered task template can hold. It is the operator's prediction of what
// the API server will return, so that the signature can go out with the
// same write; the operator checks the returned template against it and
// learns the difference when a newer API server defaults more (see the
// ScheduleTask controller), so a gap here costs writes, never a forgery.
func Defaulted(t *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	d := t.DeepCopy()
	ps := &d.Spec
	// The API server keeps serviceAccountName and the deprecated
	// serviceAccount equal, the first winning.
	if ps.ServiceAccountName == "" {
		ps.ServiceAccountName = ps.DeprecatedServiceAccount
	}
	ps.DeprecatedServiceAccount = ps.ServiceAccountName
	if ps.DNSPolicy == "" {
		ps.DNSPolicy = corev1.DNSClusterFirst
	}
	if ps.RestartPolicy == "" {
		ps.RestartPolicy = corev1.RestartPolicyAlways
	}
	if ps.SecurityContext == nil {
		ps.SecurityContext = &corev1.PodSecurityContext{}
	}
	if ps.TerminationGracePeriodSeconds == nil {
		period := int64(corev1.DefaultTerminationGracePeriodSeconds)
		ps.TerminationGracePeriodSeconds = &period
	}
	if ps.SchedulerName == "" {
		ps.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range ps.Volumes {
		defaultVolume(&ps.Volumes[i].VolumeSource)
	}
	for i := range ps.InitContainers {
		defaultContainer(&ps.InitContainers[i])
	}
	for i := range ps.Containers {
		defaultContainer(&ps.Containers[i])
	}
	return d
}

// defaultVolume applies a volume source's defaults: an empty one is an
// emptyDir, files get their default modes, field references the API
// version v1, tokens an hour, and the legacy in-tree sources their
// generated defaults.
func defaultVolume(v *corev1.VolumeSource) {
	if reflect.ValueOf(*v).IsZero() {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	// Secret, ConfigMap, downward API and projected files share one
	// default mode, 0644.
	mode := func(m **int32) {
		if *m == nil {
			*m = ptr.To(corev1.SecretVolumeSourceDefaultMode)
		}
	}
	orString := func(s *string, def string) {
		if *s == "" {
			*s = def
		}
	}
	if v.HostPath != nil && v.HostPath.Type == nil {
		v.HostPath.Type = ptr.To(corev1.HostPathUnset)
	}
	if v.Secret != nil {
		mode(&v.Secret.DefaultMode)
	}
	if v.ConfigMap != nil {
		mode(&v.ConfigMap.DefaultMode)
	}
	if v.DownwardAPI != nil {
		mode(&v.DownwardAPI.DefaultMode)
		defaultFieldRefs(v.DownwardAPI.Items)
	}
	if v.Projected != nil {
		mode(&v.Projected.DefaultMode)
		for i := range v.Projected.Sources {
			src := &v.Projected.Sources[i]
			if src.DownwardAPI != nil {
				defaultFieldRefs(src.DownwardAPI.Items)
			}
			if t := src.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = ptr.To[int64](3600)
			}
		}
	}
	if v.ISCSI != nil {
		orString(&v.ISCSI.ISCSIInterface, "default")
	}
	if v.RBD != nil {
		orString(&v.RBD.RBDPool, "rbd")
		orString(&v.RBD.RadosUser, "admin")
		orString(&v.RBD.Keyring, "/etc/ceph/keyring")
	}
	if a := v.AzureDisk; a != nil {
		a.CachingMode = cmp.Or(a.CachingMode, ptr.To(corev1.AzureDataDiskCachingReadWrite))
		a.FSType = cmp.Or(a.FSType, ptr.To("ext4"))
		a.ReadOnly = cmp.Or(a.ReadOnly, ptr.To(false))
		a.Kind = cmp.Or(a.Kind, ptr.To(corev1.AzureSharedBlobDisk))
	}
	if v.ScaleIO != nil {
		orString(&v.ScaleIO.StorageMode, "ThinProvisioned")
		orString(&v.ScaleIO.FSType, "xfs")
	}
	if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
		spec := &e.VolumeClaimTemplate.Spec
		if spec.VolumeMode == nil {
			spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
		}
		roundUp(spec.Resources.Limits, spec.Resources.Requests)
	}
}

// defaultFieldRefs gives the field references of downward API files the
// API version v1.
func defaultFieldRefs(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if f := items[i].FieldRef; f != nil && f.APIVersion == "" {
			f.APIVersion = "v1"
		}
	}
}

// defaultProbe applies a probe's defaults, its handler's included.
func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	p.TimeoutSeconds = cmp.Or(p.TimeoutSeconds, 1)
	p.PeriodSeconds = cmp.Or(p.PeriodSeconds, 10)
	p.SuccessThreshold = cmp.Or(p.SuccessThreshold, 1)
	p.FailureThreshold = cmp.Or(p.FailureThreshold, 3)
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptr.To("")
	}
}

// defaultHTTPGet applies an HTTP GET action's defaults: the path / and
// the scheme HTTP.
func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	h.Path = cmp.Or(h.Path, "/")
	h.Scheme = cmp.Or(h.Scheme, corev1.URISchemeHTTP)
}

// roundUp rounds quantities finer than a milli-unit up, as the API server
// does.
func roundUp(lists ...corev1.ResourceList) {
	for _, l := range lists {
		for name, q := range l {
			q.RoundUp(-3)
			l[name] = q
		}
	}
}

// defaultContainer applies a container's defaults.
func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = corev1.PullIfNotPresent
		if imageTag(c.Image) == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil {
			if vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
				vf.FieldRef.APIVersion = "v1"
			}
			if vf.FileKeyRef != nil && vf.FileKeyRef.Optional == nil {
				optional := false
				vf.FileKeyRef.Optional = &optional
			}
		}
	}
	roundUp(c.Resources.Limits, c.Resources.Requests)
	defaultProbe(c.LivenessProbe)
	defaultProbe(c.ReadinessProbe)
	defaultProbe(c.StartupProbe)
	if l := c.Lifecycle; l != nil {
		if l.PostStart != nil {
			defaultHTTPGet(l.PostStart.HTTPGet)
		}
		if l.PreStop != nil {
			defaultHTTPGet(l.PreStop.HTTPGet)
		}
	}
}

// imageTag is the tag the kubelet pulls for image, as the API server's
// defaulting reads it: the explicit tag, none for a reference by digest
// only, and "latest" for a bare name.
func imageTag(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return ""
	}
	tag := ""
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	if _, digested := named.(reference.Digested); tag == "" && !digested {
		tag = "latest"
	}
	return tag
}
