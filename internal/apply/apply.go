// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/example/platform-operator/internal/cacheblock"
	"github.com/example/platform-operator/internal/expectations"
)

// AppliedHashAnnotation on an object the operator applies is a hash of the
// configuration it last applied. It lives on the object, so it survives a
// restart of the manager and costs the manager no memory; with it the
// applier can tell an unchanged configuration (no write), a new one (an
// update) and a hand edit of a field the operator sets (a repair).
const AppliedHashAnnotation = "platform.example.com/applied-hash"

// Result says what Apply did.
type Result string

// What Apply can do.
const (
	// Unchanged: the object already showed the configuration; nothing was written.
	Unchanged Result = "Unchanged"
	// Created: the object did not exist and was created.
	Created Result = "Created"
	// Updated: the configuration changed (a new spec or a new operator
	// version) and was applied.
	Updated Result = "Updated"
	// Repaired: the configuration was the one last applied, but someone
	// changed a field the operator sets; applying it took the field back.
	Repaired Result = "Repaired"
	// Deferred: as Repaired, but the child was repaired a moment
	// ago and Applier.Repairs holds the next repair back; nothing was
	// written, and the object is left as the cache shows it. Ask for a pass
	// after Applier.RepairWait.
	Deferred Result = "Deferred"
)

// NotControlledError says that an object of the child's name exists and is
// controlled by something else (or nothing): the applier never takes over
// an object that is not its owner's.
type NotControlledError struct {
	// Kind and Name identify the object.
	Kind, Name string
	// Owner names the object that wanted it, as "Kind name".
	Owner string
}

func (e *NotControlledError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by %s; delete or rename it", e.Kind, e.Name, e.Owner)
}

// Applier keeps children in line with server-side apply under one field
// manager with forced ownership, so managedFields say who owns what and a
// changed value of a field the operator sets is taken back by the next apply.
// Fields the configuration leaves out are the API server's defaults or
// another manager's, and are never fought over; a field another manager
// added stays.
//
// An apply is skipped when the object carries the hash of this very
// configuration (AppliedHashAnnotation) and still shows every value of it,
// so a pass that changes nothing writes nothing, also right after a restart.
//
// Telling whether an object shows every value means encoding it; at
// thousands of passes a minute that CPU shows. So the applier also
// remembers, per child, the metadata.generation at which it last saw the
// child show a configuration. While the generation and the configuration's
// hash stay the same, nobody changed the spec, and a pass checks only the
// metadata the configuration sets (labels, annotations, owners), which does
// not move the generation. This memory is only a shortcut: after a restart
// the first pass of each child does the full check. Objects whose spec
// changes do not move their generation (a Service, a ConfigMap) always get
// the full check.
type Applier struct {
	// Client reads from the manager's cache and applies.
	Client client.Client
	// APIReader looks past the cache for an object the cache does not show
	// (not created yet, or made before it carried the label the cache
	// selects on), so the applier never takes over an object it cannot see.
	APIReader client.Reader
	// Others, when set, caches the metadata of the objects of the child's
	// kind that Client's cache does not select (cacheblock.NewOthersCache): between
	// the two caches every object of the kind shows, so a child that
	// neither shows, and that this applier is not creating, does not exist.
	// It is created without the read past the cache, which for a new child
	// only ever finds nothing: at a thousand new tasks, a thousand requests
	// fewer. A child Others does show is read past the cache, as it is
	// without Others.
	Others client.Reader
	// FieldManager names the controller in managedFields.
	FieldManager string
	// Unchecked are paths of fields of the configuration (such as
	// {"spec", "jobTemplate", "spec", "template"}) that the cached child does
	// not hold, because the cache transform drops them to save memory: the
	// drift check skips them, and the caller must check them another way
	// (the ScheduleTask controller compares the hash of a CronJob's stored
	// pod template with the one it signed). A changed configuration is still
	// applied whole.
	Unchecked [][]string
	// Repairs, when set, spaces out the repairs of a child that someone
	// keeps changing (see RepairBackoff): a repair that comes too soon
	// after the last is Deferred. A changed configuration (an update)
	// is never held back.
	Repairs *RepairBackoff
	// Urgent are paths of fields of the configuration whose change is
	// repaired at once, whatever Repairs says, because what they hold runs
	// (a CronJob's job template): a tenant's change there must not last
	// even for the length of a backoff.
	Urgent [][]string

	mu sync.Mutex
	// verified is, per child, what was last seen to show the configuration.
	verified map[types.NamespacedName]verifiedChild
	// creating holds the children this applier is creating, until the
	// cache's create event for each arrives (NotOwnCreate).
	creating     expectations.Expectations[types.NamespacedName, struct{}]
	initCreating sync.Once
}

// NotOwnCreate drops the create event of a child this applier has just
// created, and passes every other event. The pass that created the child
// has the API server's answer and built its status from it, so a pass for
// the event would only repeat it: at a thousand new tasks, a thousand
// passes. Children the applier did not create, such as those of the first
// list after a restart, pass as ever.
func (a *Applier) NotOwnCreate() predicate.Funcs {
	return predicate.Funcs{CreateFunc: func(e event.CreateEvent) bool {
		return !a.creatingChildren().Take(client.ObjectKeyFromObject(e.Object), struct{}{})
	}}
}

// creatingChildren is a.creating, with its TTL set on first use.
func (a *Applier) creatingChildren() *expectations.Expectations[types.NamespacedName, struct{}] {
	a.initCreating.Do(func() { a.creating.TTL = expectations.OwnWriteTTL })
	return &a.creating
}

// verifiedChild is a child seen to show the configuration of hash at generation.
type verifiedChild struct {
	uid        types.UID
	generation int64
	hash       string
}

// Forget drops what the applier remembers of the child key, once it is
// deleted, so the memory does not grow with the history of the cluster.
func (a *Applier) Forget(key types.NamespacedName) {
	if a.Repairs != nil {
		a.Repairs.Forget(key)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.verified, key)
}

// RepairWait is how long the repair of the child of kind named key is held
// back (after an Deferred); zero without Repairs.
func (a *Applier) RepairWait(kind string, key types.NamespacedName) time.Duration {
	if a.Repairs == nil {
		return 0
	}
	return a.Repairs.Wait(RepairKey{Kind: kind, NamespacedName: key})
}

// Contest says whether the child of kind named key is contested (see
// RepairBackoff); never without Repairs.
func (a *Applier) Contest(kind string, key types.NamespacedName) Contest {
	if a.Repairs == nil {
		return Contest{}
	}
	return a.Repairs.Contest(RepairKey{Kind: kind, NamespacedName: key})
}

// remember records that obj showed the configuration of hash.
func (a *Applier) remember(obj client.Object, hash string) {
	if obj.GetGeneration() == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.verified == nil {
		a.verified = map[types.NamespacedName]verifiedChild{}
	}
	a.verified[client.ObjectKeyFromObject(obj)] = verifiedChild{uid: obj.GetUID(), generation: obj.GetGeneration(), hash: hash}
}

// specVerified reports whether obj's spec was seen to show the configuration
// of hash at obj's current generation.
func (a *Applier) specVerified(obj client.Object, hash string) bool {
	if obj.GetGeneration() == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.verified[client.ObjectKeyFromObject(obj)]
	return ok && v == verifiedChild{uid: obj.GetUID(), generation: obj.GetGeneration(), hash: hash}
}

// Apply makes obj, the child named by desired, show desired, and leaves
// the child as the API server returned it (or as the cache showed it when
// nothing was written) in obj. owner must control the child; a child that
// exists under another controller is a *NotControlledError. desired must be a
// typed apply configuration (k8s.io/client-go/applyconfigurations) with its
// kind, apiVersion, name and namespace set.
func (a *Applier) Apply(ctx context.Context, owner, obj client.Object, desired runtime.ApplyConfiguration) (Result, error) {
	cfg, err := encode(desired)
	if err != nil {
		return "", err
	}
	key := types.NamespacedName{Namespace: cfg.head.Metadata.Namespace, Name: cfg.head.Metadata.Name}

	result := Created
	exists, err := a.get(ctx, key, obj)
	if err != nil {
		return "", err
	}
	var want map[string]any
	// repaired records a repair with a.Repairs once it is written.
	repaired := func() {}
	if exists {
		if !metav1.IsControlledBy(obj, owner) {
			return "", &NotControlledError{Kind: cfg.head.Kind, Name: key.Name, Owner: cfg.controller()}
		}
		liveHash, hashed := obj.GetAnnotations()[AppliedHashAnnotation]
		if liveHash == cfg.hash && a.specVerified(obj, cfg.hash) {
			ok, err := metadataShows(obj, &cfg.head.Metadata)
			if err != nil {
				return "", err
			}
			if ok {
				return Unchanged, nil
			}
		}
		if want, err = cfg.object(); err != nil {
			return "", err
		}
		shows, err := shows(obj, without(want, a.Unchecked))
		if err != nil {
			return "", err
		}
		switch {
		case liveHash == cfg.hash && shows:
			a.remember(obj, cfg.hash)
			return Unchanged, nil
		case liveHash == cfg.hash:
			result = Repaired
		default:
			result = Updated
		}
		if result == Repaired && a.Repairs != nil {
			var held bool
			if held, repaired, err = a.holdBack(ctx, RepairKey{Kind: cfg.head.Kind, NamespacedName: key}, obj, want); err != nil {
				return "", err
			}
			if held {
				return Deferred, nil
			}
		}
		if !hashed {
			// Written before by an Update (an earlier version of the
			// operator): fields that manager owns would survive their removal
			// from the configuration, so they move to this field manager first.
			if err := a.adopt(ctx, key, obj); err != nil {
				return "", err
			}
		}
	} else if want, err = cfg.object(); err != nil {
		return "", err
	}

	u := &unstructured.Unstructured{Object: want}
	if result == Created {
		// Remembered before the apply: its create event can arrive first.
		a.creatingChildren().Remember(key, struct{}{})
	}
	if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(a.FieldManager), client.ForceOwnership); err != nil {
		a.creatingChildren().Forget(key)
		return "", fmt.Errorf("apply %s %s: %w", cfg.head.Kind, key, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return "", fmt.Errorf("read applied %s %s: %w", cfg.head.Kind, key, err)
	}
	if result == Created && len(a.updaters(obj)) > 0 {
		// Someone created the object between the read that found nothing and
		// this apply, with an Update (an earlier version of the operator, in
		// a hand-over): the apply joined their fields instead of replacing
		// them. Adopt them and apply again, as for an object found so.
		if err := a.adopt(ctx, key, obj); err != nil {
			return "", err
		}
		if err := a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner(a.FieldManager), client.ForceOwnership); err != nil {
			return "", fmt.Errorf("apply %s %s: %w", cfg.head.Kind, key, err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return "", fmt.Errorf("read applied %s %s: %w", cfg.head.Kind, key, err)
		}
		result = Updated
	}
	// The API server's answer to an apply shows the configuration.
	a.remember(obj, cfg.hash)
	if result == Repaired {
		repaired()
	}
	return result, nil
}

// Hash is the hash of the configuration desired, as Apply records it in
// AppliedHashAnnotation.
func Hash(desired runtime.ApplyConfiguration) (string, error) {
	cfg, err := encode(desired)
	if err != nil {
		return "", err
	}
	return cfg.hash, nil
}

// Stamp prepares obj, a child the caller is about to write whole with an
// update (a repair that must also remove what server-side apply cannot),
// for the applier: when obj was last applied with desired itself or with
// one of the configurations of hashes previous (those that differ from
// desired only in what the caller's update sets), it gets desired's hash,
// so that the next Apply does not take the update's own change for a new
// configuration and write it again. Whatever else differs from desired is
// then someone else's change, which the next Apply repairs as such (with
// Repairs' backoff). It reports whether obj was stamped; an obj applied
// with another configuration (the owner changed meanwhile) is left as it
// was, and the next Apply applies the new one.
func Stamp(obj client.Object, desired runtime.ApplyConfiguration, previous ...string) (bool, error) {
	hash, err := Hash(desired)
	if err != nil {
		return false, err
	}
	live := obj.GetAnnotations()[AppliedHashAnnotation]
	if live != hash && !slices.Contains(previous, live) {
		return false, nil
	}
	annotations := maps.Clone(obj.GetAnnotations())
	annotations[AppliedHashAnnotation] = hash
	obj.SetAnnotations(annotations)
	return true, nil
}

// holdBack records a change of the child obj by someone else and reports
// whether a.Repairs holds its repair back; if not, it returns the function
// that records the repair once written.
func (a *Applier) holdBack(ctx context.Context, key RepairKey, obj client.Object, want map[string]any) (bool, func(), error) {
	wait := a.Repairs.Changed(key)
	urgent, err := a.urgentDrift(obj, want)
	if err != nil {
		return false, nil, err
	}
	if wait > 0 && !urgent {
		return true, nil, nil
	}
	manager := ""
	if a.Repairs.NextRepairContests(key) {
		// Who changed it shows only until the apply takes the fields
		// back; the cache keeps no managedFields.
		manager = a.changedBy(ctx, key.NamespacedName, obj)
	}
	return false, func() { a.Repairs.Repaired(key, manager) }, nil
}

// changedBy names the field manager that last changed the child named key
// (see ChangedBy), read past the cache; empty when it cannot be read. A
// failed read costs only the name in a message, so it is not an error.
func (a *Applier) changedBy(ctx context.Context, key types.NamespacedName, obj client.Object) string {
	full, ok := obj.DeepCopyObject().(client.Object)
	if !ok || a.APIReader == nil || a.APIReader.Get(ctx, key, full) != nil {
		return ""
	}
	return ChangedBy(full.GetManagedFields(), a.FieldManager)
}

// urgentDrift reports whether live differs from want in a field under
// a.Urgent (those under a.Unchecked aside: the cache does not hold them).
func (a *Applier) urgentDrift(live client.Object, want map[string]any) (bool, error) {
	if len(a.Urgent) == 0 {
		return false, nil
	}
	ok, err := shows(live, without(only(want, a.Urgent), a.Unchecked))
	return !ok, err
}

// only is want with only the fields at paths (and kind and apiVersion, which
// shows ignores), copying the maps on the way to them.
func only(want map[string]any, paths [][]string) map[string]any {
	out := map[string]any{}
	for _, path := range paths {
		if v, ok := valueAt(want, path); ok {
			setAt(out, path, v)
		}
	}
	return out
}

// valueAt is the value at path in m.
func valueAt(m map[string]any, path []string) (any, bool) {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

// setAt puts v at path in m, making the maps on the way.
func setAt(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// updaters names the field managers, other than the applier, that wrote obj
// with Update requests (the status subresource aside).
func (a *Applier) updaters(obj client.Object) sets.Set[string] {
	out := sets.New[string]()
	for _, mf := range obj.GetManagedFields() {
		if mf.Operation == metav1.ManagedFieldsOperationUpdate && mf.Subresource == "" && mf.Manager != a.FieldManager {
			out.Insert(mf.Manager)
		}
	}
	return out
}

// configuration is an apply configuration encoded once per pass: its JSON,
// the hash of it, and the head (kind and metadata) decoded from it, which is
// all a pass needs when the child is known to show it.
type configuration struct {
	data []byte
	hash string
	head struct {
		Kind     string         `json:"kind"`
		Metadata configMetadata `json:"metadata"`
	}
}

// configMetadata is the metadata an apply configuration sets.
type configMetadata struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace"`
	Labels          map[string]string `json:"labels"`
	Annotations     map[string]string `json:"annotations"`
	OwnerReferences []any             `json:"ownerReferences"`
}

// encode encodes desired and hashes it.
func encode(desired runtime.ApplyConfiguration) (*configuration, error) {
	data, err := json.Marshal(desired)
	if err != nil {
		return nil, fmt.Errorf("encode apply configuration: %w", err)
	}
	sum := sha256.Sum256(data)
	cfg := &configuration{data: data, hash: hex.EncodeToString(sum[:8])}
	if err := json.Unmarshal(data, &cfg.head); err != nil {
		return nil, fmt.Errorf("decode apply configuration: %w", err)
	}
	return cfg, nil
}

// object is the configuration as the object to apply, with its hash in
// AppliedHashAnnotation.
func (c *configuration) object() (map[string]any, error) {
	var want map[string]any
	if err := json.Unmarshal(c.data, &want); err != nil {
		return nil, fmt.Errorf("decode apply configuration: %w", err)
	}
	u := &unstructured.Unstructured{Object: want}
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AppliedHashAnnotation] = c.hash
	u.SetAnnotations(annotations)
	return u.Object, nil
}

// controller names the controller that the configuration gives the child,
// as "Kind name".
func (c *configuration) controller() string {
	refs, _ := json.Marshal(c.head.Metadata.OwnerReferences)
	var owners []metav1.OwnerReference
	if json.Unmarshal(refs, &owners) == nil {
		for _, ref := range owners {
			if ptr.Deref(ref.Controller, false) {
				return ref.Kind + " " + ref.Name
			}
		}
	}
	return "its owner"
}

// metadataShows reports whether live carries the labels, annotations and
// owner references of want; the hash annotation is compared by the caller.
func metadataShows(live client.Object, want *configMetadata) (bool, error) {
	for k, v := range want.Labels {
		if got, ok := live.GetLabels()[k]; !ok || got != v {
			return false, nil
		}
	}
	for k, v := range want.Annotations {
		if got, ok := live.GetAnnotations()[k]; !ok || got != v {
			return false, nil
		}
	}
	data, err := json.Marshal(live.GetOwnerReferences())
	if err != nil {
		return false, fmt.Errorf("encode owners of %s: %w", live.GetName(), err)
	}
	var got []any
	if err := json.Unmarshal(data, &got); err != nil {
		return false, fmt.Errorf("decode owners of %s: %w", live.GetName(), err)
	}
	return Contains(got, want.OwnerReferences), nil
}

// get reads the child from the cache, or else from the API server. It
// reports whether the child exists.
//
// The read past the cache asks for resourceVersion 0: the API server answers
// it from its watch cache, which holds every object of the kind whatever its
// labels, instead of reading etcd. Every new child costs that read (it
// finds nothing), so at a thousand new tasks the quorum read was a
// thousand etcd reads the API server's CPU paid for. The watch cache is at
// most moments behind etcd, less than the manager's own cache, which the
// object was already looked for in.
func (a *Applier) get(ctx context.Context, key types.NamespacedName, obj client.Object) (bool, error) {
	err := a.Client.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) && a.Others != nil && !a.creatingChildren().Has(key, struct{}{}) {
		switch other, oerr := a.other(ctx, key, obj); {
		case oerr != nil:
			return false, oerr
		case !other:
			return false, nil
		}
	}
	if apierrors.IsNotFound(err) && a.APIReader != nil {
		err = a.APIReader.Get(ctx, key, obj, &client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}})
	}
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get %s: %w", key, err)
	}
	return true, nil
}

// other reports whether a.Others shows an object of obj's kind named key.
func (a *Applier) other(ctx context.Context, key types.NamespacedName, obj client.Object) (bool, error) {
	meta, err := cacheblock.MetadataOf(obj, a.Client.Scheme())
	if err != nil {
		return false, err
	}
	switch err := a.Others.Get(ctx, key, meta); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get %s %s from the cache of others: %w", meta.Kind, key, err)
	}
	return true, nil
}

// adopt moves the fields that Update requests set on the child to this
// applier's field manager (client-go's csaupgrade), once.
func (a *Applier) adopt(ctx context.Context, key types.NamespacedName, obj client.Object) error {
	full, ok := obj.DeepCopyObject().(client.Object)
	if !ok || a.APIReader == nil {
		return nil
	}
	// The cache keeps no managedFields; read them.
	if err := a.APIReader.Get(ctx, key, full); err != nil {
		return client.IgnoreNotFound(err)
	}
	updaters := a.updaters(full)
	if updaters.Len() == 0 {
		return nil
	}
	before := full.DeepCopyObject().(client.Object)
	if err := csaupgrade.UpgradeManagedFields(full, updaters, a.FieldManager); err != nil {
		return fmt.Errorf("adopt fields of %s: %w", key, err)
	}
	if reflect.DeepEqual(before.GetManagedFields(), full.GetManagedFields()) {
		return nil
	}
	if err := a.Client.Update(ctx, full); err != nil {
		return fmt.Errorf("adopt fields of %s: %w", key, err)
	}
	return nil
}

// shows reports whether the live object holds every value of want. Values
// the API server added (defaults) and fields of other managers are ignored;
// lists are compared item by item and must be as long.
func shows(live client.Object, want map[string]any) (bool, error) {
	data, err := json.Marshal(live)
	if err != nil {
		return false, fmt.Errorf("encode %s: %w", live.GetName(), err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		return false, fmt.Errorf("decode %s: %w", live.GetName(), err)
	}
	// The kind and apiVersion of a typed object read from the cache are
	// empty; they are the apply configuration's by construction.
	w := maps.Clone(want)
	delete(w, "kind")
	delete(w, "apiVersion")
	return Contains(got, w), nil
}

// without is want less the fields at paths, copying only the maps on the
// way to them, so want itself stays whole for the apply.
func without(want map[string]any, paths [][]string) map[string]any {
	for _, path := range paths {
		want = withoutPath(want, path)
	}
	return want
}

// withoutPath is m less the field at path; m when it has no such field.
func withoutPath(m map[string]any, path []string) map[string]any {
	if len(path) == 0 {
		return m
	}
	v, ok := m[path[0]]
	if !ok {
		return m
	}
	out := maps.Clone(m)
	if len(path) == 1 {
		delete(out, path[0])
		return out
	}
	inner, ok := v.(map[string]any)
	if !ok {
		return m
	}
	out[path[0]] = withoutPath(inner, path[1:])
	return out
}

// Contains reports whether got holds every value of want: maps may have
// more keys, lists must have as many items and each must hold want's, and
// other values must be equal. Both sides must come from encoding/json, so
// numbers compare as float64.
func Contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return len(w) == 0 && got == nil
		}
		for k, wv := range w {
			if !Contains(g[k], wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return len(w) == 0 && got == nil
		}
		if len(g) != len(w) {
			return false
		}
		for i := range w {
			if !Contains(g[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(got, want)
	}
}

// ConfigurationOf converts a typed API value (a container's env var, a
// security context, resource requirements) to the apply configuration of the
// same type, through JSON, which both share: what the typed value's JSON
// leaves out (empty fields with omitempty) stays out of the configuration,
// so the applier owns exactly the fields the value sets.
func ConfigurationOf[T any](in any) (*T, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", in, err)
	}
	out := new(T)
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("decode %T as %T: %w", in, out, err)
	}
	return out, nil
}
