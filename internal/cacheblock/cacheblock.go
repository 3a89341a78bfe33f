// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package cacheblock

import (
	"fmt"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// Block is what one kind's controllers need of the manager's cache.
// The manager's cache options are the merge of every kind's block (see
// Options), so adding a kind adds a block and edits no other kind's.
type Block struct {
	// KindLabel is the label the kind puts on every object it creates,
	// directly or through a template; its value names the owning object.
	KindLabel string
	// Children maps each built-in type the kind creates (CronJobs, Jobs,
	// pods, Deployments, ...) to the transform that keeps of such an object
	// what the kind's controllers read, or nil to keep it whole. Children of
	// every kind are cached only when they carry platformv1.ManagedByLabel;
	// the transform applies to those carrying KindLabel that the operator's
	// controllers control (see Controllers). Anyone who may create the type
	// may put the labels on an object: every other such object is kept as a
	// stub (see Stub), whatever its transform.
	Children map[client.Object]toolscache.TransformFunc
	// Controllers maps a child type to the built-in kinds, besides the
	// operator's own (group platform.example.com), whose controller
	// reference keeps an object of that type whole: the ReplicaSet of an
	// application's pod, the CronJob of a task's Job. A transform sees one
	// object at a time, so it trusts the first link of the chain only; the
	// reader checks the rest (a pod's ReplicaSet is its application's
	// Deployment's, by UID). What the blocks list for a type is trusted for
	// every object of the type, whichever kind's label it carries: an object
	// may carry two kinds' labels, and which transform it meets must not
	// decide whether it is kept.
	Controllers map[client.Object][]schema.GroupKind
	// ManagedFields maps a child type to the managedFields entries the kind
	// reads of it (another manager's entries, to find what it added to a
	// child, say); every other entry is dropped. A type not in the map keeps
	// none.
	ManagedFields map[client.Object]func(metav1.ManagedFieldsEntry) bool
	// Own holds the cache options of the kind's own resources.
	Own map[client.Object]cache.ByObject
}

// stripManagedFields drops metadata.managedFields, which no reconciler
// reads (the applier reads them past the cache when it needs them).
var stripManagedFields = cache.TransformStripManagedFields()

// Options merges the kinds' blocks into the manager's cache options:
// children are selected by the managed-by label, so memory follows what the
// operator manages and not the size of the cluster, and without the recorded
// label, so it follows what is still in progress (see ChildSelector); each child is
// transformed by the block of the kind whose label it carries; nothing keeps
// managedFields but the entries a block asks for.
//
// A child whose controller reference names none of the operator's kinds
// (nor a kind a block lists in Controllers) is kept as a stub: it carries
// the operator's labels, but a tenant may have put them there, and a tenant
// who could make the manager cache their objects whole could make it run
// out of memory. Readers take a stub for what it is: an object of that name
// that the operator does not control.
//
// A transform may slim an object (drop its spec, its status details); such an
// object must never be written back with an Update, which would store the
// slimmed fields. Writes of slimmed objects are patches of the fields the
// writer set, or do not happen (see each block). Stubs are never written.
func Options(blocks ...Block) (cache.Options, error) {
	managed, err := ChildSelector()
	if err != nil {
		return cache.Options{}, err
	}
	byObject := map[client.Object]cache.ByObject{}
	type child struct {
		obj         client.Object
		transforms  map[string]toolscache.TransformFunc
		keeps       map[string]func(metav1.ManagedFieldsEntry) bool
		controllers []schema.GroupKind
	}
	children := map[reflect.Type]*child{}
	for _, b := range blocks {
		for obj, opts := range b.Own {
			byObject[obj] = withStrip(opts)
		}
		for obj, t := range b.Children {
			typ := reflect.TypeOf(obj)
			c := children[typ]
			if c == nil {
				c = &child{obj: obj, transforms: map[string]toolscache.TransformFunc{},
					keeps: map[string]func(metav1.ManagedFieldsEntry) bool{}}
				children[typ] = c
			}
			if _, dup := c.transforms[b.KindLabel]; dup {
				return cache.Options{}, fmt.Errorf("two cache blocks for %T with label %s", obj, b.KindLabel)
			}
			c.transforms[b.KindLabel] = t
		}
		for obj, keep := range b.ManagedFields {
			c := children[reflect.TypeOf(obj)]
			if c == nil {
				return cache.Options{}, fmt.Errorf("cache block with label %s keeps managedFields of %T, which it does not list as a child", b.KindLabel, obj)
			}
			c.keeps[b.KindLabel] = keep
		}
		for obj, kinds := range b.Controllers {
			c := children[reflect.TypeOf(obj)]
			if c == nil {
				return cache.Options{}, fmt.Errorf("cache block with label %s trusts controllers of %T, which it does not list as a child", b.KindLabel, obj)
			}
			c.controllers = append(c.controllers, kinds...)
		}
	}
	for _, c := range children {
		byObject[c.obj] = cache.ByObject{Label: managed,
			Transform: wholeIfControlled(c.controllers, byKindLabel(c.transforms, c.keeps))}
	}
	// A read of a kind no controller watches would start a second informer
	// quietly, unselected and untransformed, holding every object of that
	// kind in the cluster: the cache refuses it instead, so a test finds it.
	return cache.Options{DefaultTransform: stripManagedFields, ByObject: byObject, ReaderFailOnMissingInformer: true}, nil
}

// ChildSelector selects the children the manager caches: the objects the
// operator made (platformv1.ManagedByLabel) that it has not finished with
// (platformv1.RecordedLabel).
func ChildSelector() (labels.Selector, error) {
	managed, err := labels.NewRequirement(platformv1.ManagedByLabel, selection.Equals,
		[]string{platformv1.ManagedByValue})
	if err != nil {
		return nil, err
	}
	open, err := labels.NewRequirement(platformv1.RecordedLabel, selection.DoesNotExist, nil)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*managed, *open), nil
}

// wholeIfControlled returns a transform that applies next to an object
// that one of the operator's kinds, or one of kinds, controls, and makes a
// stub of any other object.
func wholeIfControlled(kinds []schema.GroupKind, next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		o, ok := obj.(client.Object)
		if !ok || controlledBy(o, kinds) {
			return next(obj)
		}
		return Stub(o), nil
	}
}

// controlledBy reports whether o's controller reference names one of the
// operator's kinds or one of kinds. The reference is only a claim (anyone
// who may create o may write it): the reader checks it against the owner's
// UID.
func controlledBy(o client.Object, kinds []schema.GroupKind) bool {
	ref := metav1.GetControllerOf(o)
	if ref == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	if gv.Group == platformv1.GroupVersion.Group {
		return true
	}
	return slices.Contains(kinds, schema.GroupKind{Group: gv.Group, Kind: ref.Kind})
}

// stubLabels are the labels a stub keeps: the operator's own, which its
// selectors, indexes and event handlers read. They are all under
// app.kubernetes.io/ and platform.example.com/, but a stub does not keep
// every label under those prefixes: an object may carry thousands of them,
// and a stub must cost the same whatever the object holds.
var stubLabels = []string{
	platformv1.ManagedByLabel, platformv1.RecordedLabel, platformv1.ScheduleTaskLabel,
	platformv1.AppNameLabel, platformv1.AppVersionLabel, platformv1.TrackLabel, platformv1.RevisionLabel,
}

// Stub returns an object of obj's type that holds only obj's name,
// namespace, UID, resourceVersion, controller reference and the operator's
// labels (stubLabels): enough for a reader to see that an object of that
// name exists and who controls it, a few hundred bytes besides the empty
// struct whatever obj's size. Of the owner references only the controller's
// is kept: an object may name thousands of owners, and no reader of a stub
// asks for any other. A stub must never be written back.
func Stub(obj client.Object) client.Object {
	stub, ok := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	if !ok {
		return obj
	}
	stub.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	stub.SetName(obj.GetName())
	stub.SetNamespace(obj.GetNamespace())
	stub.SetUID(obj.GetUID())
	stub.SetResourceVersion(obj.GetResourceVersion())
	if ref := metav1.GetControllerOf(obj); ref != nil {
		stub.SetOwnerReferences([]metav1.OwnerReference{*ref})
	}
	stub.SetLabels(KeepKeys(obj.GetLabels(), stubLabels...))
	return stub
}

// StubTransform is a cache transform that keeps a stub (see Stub) of every
// object: for a child type whose readers need no more of it than its name
// and owners.
func StubTransform(obj any) (any, error) {
	if o, ok := obj.(client.Object); ok {
		return Stub(o), nil
	}
	return obj, nil
}

// byKindLabel returns a transform that applies, to an object carrying one of
// the kinds' labels, that kind's transform and keeps of its managedFields the
// entries the kind reads; it strips the managedFields of every other object.
func byKindLabel(transforms map[string]toolscache.TransformFunc, keeps map[string]func(metav1.ManagedFieldsEntry) bool) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		o, ok := obj.(client.Object)
		if !ok {
			return stripManagedFields(obj)
		}
		for label, t := range transforms {
			if _, has := o.GetLabels()[label]; !has {
				continue
			}
			if t != nil {
				var err error
				if obj, err = t(obj); err != nil {
					return nil, err
				}
			}
			if keep := keeps[label]; keep != nil {
				if o, ok := obj.(client.Object); ok {
					o.SetManagedFields(keepEntries(o.GetManagedFields(), keep))
					return obj, nil
				}
			}
			break
		}
		return stripManagedFields(obj)
	}
}

// keepEntries returns the entries keep accepts, nil when none.
func keepEntries(entries []metav1.ManagedFieldsEntry, keep func(metav1.ManagedFieldsEntry) bool) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// withStrip makes a block's own transform strip managedFields too.
func withStrip(opts cache.ByObject) cache.ByObject {
	if t := opts.Transform; t != nil {
		opts.Transform = func(obj any) (any, error) {
			obj, err := t(obj)
			if err != nil {
				return nil, err
			}
			return stripManagedFields(obj)
		}
	}
	return opts
}

// KeepKeys returns the entries of m with the given keys, nil when none: what
// a transform keeps of an object's labels or annotations.
func KeepKeys(m map[string]string, keys ...string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = make(map[string]string, len(keys))
			}
			out[k] = v
		}
	}
	return out
}

// NewOthersCache makes the cache for apply.Applier.Others: of the objects of the
// kinds objs that the manager's cache leaves out because they do not carry
// platformv1.ManagedByLabel (another tool's, a person's, or one an earlier
// version made before it labelled its children), the names. Only kinds the
// operator never marks with platformv1.RecordedLabel may be given: the
// manager's cache leaves those out too, and neither cache would show them.
// The cache is added to mgr, which starts it with its own cache and waits
// for both to sync before any controller starts. namespaces are those it
// lists and watches, as cache.Options.DefaultNamespaces: the manager's own,
// so that a manager serving some namespaces needs no rights beyond them.
//
// It costs the manager a few hundred bytes per such object in the cluster, and
// one watch per kind.
func NewOthersCache(mgr manager.Manager, namespaces map[string]cache.Config, objs ...client.Object) (client.Reader, error) {
	notManaged, err := labels.NewRequirement(platformv1.ManagedByLabel, selection.NotIn,
		[]string{platformv1.ManagedByValue})
	if err != nil {
		return nil, err
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultNamespaces:    namespaces,
		DefaultLabelSelector: labels.NewSelector().Add(*notManaged),
		DefaultTransform:     namesOnly,
		// Only the kinds warmed below: a read of another would start an
		// informer of it quietly.
		ReaderFailOnMissingInformer: true,
	})
	if err != nil {
		return nil, fmt.Errorf("cache of objects others made: %w", err)
	}
	for _, obj := range objs {
		meta, err := MetadataOf(obj, mgr.GetScheme())
		if err != nil {
			return nil, err
		}
		if err := WarmInformers(c, meta); err != nil {
			return nil, err
		}
	}
	if err := mgr.Add(syncedFirst{c}); err != nil {
		return nil, fmt.Errorf("add the cache of objects others made: %w", err)
	}
	return c, nil
}

// syncedFirst puts a cache among the manager's caches, which the manager
// starts first and waits for (a runnable with GetCache), instead of among
// the leader's runnables, which start with the controllers: a controller
// reading it before it started would get an error.
type syncedFirst struct{ cache.Cache }

// GetCache returns the cache.
func (s syncedFirst) GetCache() cache.Cache { return s.Cache }

// MetadataOf is an empty PartialObjectMetadata of obj's kind: what a
// metadata informer of that kind is asked for and holds.
func MetadataOf(obj client.Object, scheme *runtime.Scheme) (*metav1.PartialObjectMetadata, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, err
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(gvk)
	return meta, nil
}

// namesOnly keeps of an object's metadata its name, namespace and UID.
func namesOnly(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.ObjectMeta = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID,
			ResourceVersion: m.ResourceVersion}
	}
	return obj, nil
}
