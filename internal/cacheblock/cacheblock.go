// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package cacheblock

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

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
	// Children are the built-in types the kind creates (CronJobs, Jobs,
	// pods, Deployments, ...), one entry a type, each with all the cache
	// keeps of it for this kind.
	Children []Child
	// Own holds the cache options of the kind's own resources.
	Own map[client.Object]cache.ByObject
}

// Child is one built-in type a kind creates and what the cache keeps of it.
// Children of every kind are cached only when they carry
// platformv1.ManagedByLabel; Transform applies to those carrying the
// block's KindLabel that one of the type's Owners controls under a name it
// gives. Anyone who may create the type may put the labels and an owner
// reference on an object: every other such object is kept as a stub (see
// Stub), whatever its transform.
type Child struct {
	// Object is an empty object of the type.
	Object client.Object
	// Transform keeps of such an object what the kind's controllers read;
	// nil keeps it whole.
	Transform toolscache.TransformFunc
	// Owners are the kinds whose controller reference keeps an object of
	// the type whole, each with the names it gives its children: the
	// AppDeployment of a Deployment named after it, the ReplicaSet of an
	// application's pod, the CronJob of a task's Job. A tenant can name its
	// own AppDeployment as the controller of anything it creates; the name
	// rule leaves it one object per child the operator itself would make,
	// which the operator would make anyway. A transform sees one object at
	// a time, so it trusts the first link of the chain only; the reader
	// checks the rest (a pod's ReplicaSet is its application's Deployment's,
	// by UID). What the blocks list for a type is trusted for every object
	// of the type, whichever kind's label it carries: an object may carry
	// two kinds' labels, and which transform it meets must not decide
	// whether it is kept. A type no block gives owners is kept as stubs
	// only.
	Owners []Owner
	// ManagedFields keeps the managedFields entries the kind reads of the
	// type (another manager's entries, to find what it added to a child,
	// say); every other entry is dropped, all of them when nil.
	ManagedFields func(metav1.ManagedFieldsEntry) bool
}

// Owner is a kind whose controller reference keeps a child whole, and the
// names it gives its children.
type Owner struct {
	// GroupKind is the owner's group and kind, exactly.
	schema.GroupKind
	// Names reports whether a child of that name is one the owner named
	// owner makes: the operator's deterministic child names, or the names
	// a built-in controller generates. Never nil.
	Names func(owner, child string) bool
}

// SameName is the name rule of a child named after its owner, with one of
// the suffixes, if any ("" is no suffix).
func SameName(suffixes ...string) func(owner, child string) bool {
	if len(suffixes) == 0 {
		suffixes = []string{""}
	}
	return func(owner, child string) bool {
		return slices.ContainsFunc(suffixes, func(s string) bool { return child == owner+s })
	}
}

// generatedSuffixLength and generatedBaseLength are the API server's
// generateName rule: a base of at most 58 characters, then 5 random ones
// (k8s.io/apiserver/pkg/storage/names).
const (
	generatedSuffixLength = 5
	generatedBaseLength   = 63 - generatedSuffixLength
)

// Generated is the name rule of a child the owner's controller names with
// generateName "<owner>-", as a ReplicaSet names its pods and a Job its
// pods.
func Generated(owner, child string) bool {
	base := owner + "-"
	if len(base) > generatedBaseLength {
		base = base[:generatedBaseLength]
	}
	return len(child) == len(base)+generatedSuffixLength && strings.HasPrefix(child, base)
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
		obj        client.Object
		transforms map[string]toolscache.TransformFunc
		keeps      map[string]func(metav1.ManagedFieldsEntry) bool
		owners     []Owner
	}
	children := map[reflect.Type]*child{}
	for _, b := range blocks {
		for obj, opts := range b.Own {
			byObject[obj] = withStrip(opts)
		}
		for _, ch := range b.Children {
			typ := reflect.TypeOf(ch.Object)
			c := children[typ]
			if c == nil {
				c = &child{obj: ch.Object, transforms: map[string]toolscache.TransformFunc{},
					keeps: map[string]func(metav1.ManagedFieldsEntry) bool{}}
				children[typ] = c
			}
			if _, dup := c.transforms[b.KindLabel]; dup {
				return cache.Options{}, fmt.Errorf("two cache blocks for %T with label %s", ch.Object, b.KindLabel)
			}
			c.transforms[b.KindLabel] = ch.Transform
			if ch.ManagedFields != nil {
				c.keeps[b.KindLabel] = ch.ManagedFields
			}
			for _, o := range ch.Owners {
				if o.Names == nil {
					return cache.Options{}, fmt.Errorf("cache block with label %s trusts %s as an owner of %T without a name rule",
						b.KindLabel, o.GroupKind, ch.Object)
				}
			}
			c.owners = append(c.owners, ch.Owners...)
		}
	}
	for _, c := range children {
		byObject[c.obj] = cache.ByObject{Label: managed,
			Transform: wholeIfControlled(c.owners, byKindLabel(c.transforms, c.keeps))}
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
// one of owners controls under a name it gives, and makes a stub of any
// other object.
func wholeIfControlled(owners []Owner, next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		o, ok := obj.(client.Object)
		if !ok || controlledBy(o, owners) {
			return next(obj)
		}
		return Stub(o), nil
	}
}

// controlledBy reports whether o's controller reference names one of
// owners, exactly, and o bears a name that owner gives. The reference is
// only a claim (anyone who may create o may write it): the reader checks it
// against the owner's UID.
func controlledBy(o client.Object, owners []Owner) bool {
	ref := metav1.GetControllerOf(o)
	if ref == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	return slices.ContainsFunc(owners, func(w Owner) bool { return w.GroupKind == gk && w.Names(ref.Name, o.GetName()) })
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
// is kept, and only when its fields are no longer than Kubernetes names
// are: an object may name thousands of owners, an owner reference's
// strings have no bound of their own, and no reader of a stub asks for
// any other. A stub must never be written back.
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
	if ref := metav1.GetControllerOf(obj); ref != nil && boundedRef(ref) {
		stub.SetOwnerReferences([]metav1.OwnerReference{stubRef(ref)})
	}
	stub.SetLabels(KeepKeys(obj.GetLabels(), stubLabels...))
	return stub
}

// isController is the Controller of every stub's reference: one bool for
// all of them.
var isController = true

// stubRef is the controller reference a stub keeps: its owner's identity,
// without blockOwnerDeletion, which no reader of a stub asks for.
func stubRef(ref *metav1.OwnerReference) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID,
		Controller: &isController}
}

// boundedRef reports whether ref's strings are no longer than those of a
// real owner's reference: a qualified group and a version, a kind, a name
// and a UID.
func boundedRef(ref *metav1.OwnerReference) bool {
	return len(ref.APIVersion) <= 253+1+63 && len(ref.Kind) <= 63 && len(ref.Name) <= 253 && len(ref.UID) <= 128
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

// maxKeptValue bounds a value KeepKeys keeps: every label and annotation
// the operator reads is a name, a hash, a time or a signature, far shorter;
// an annotation's value may otherwise be as long as the object's whole
// limit, and whoever may create the object chooses it.
const maxKeptValue = 1024

// KeepKeys returns the entries of m with the given keys, nil when none: what
// a transform keeps of an object's labels or annotations. A value longer
// than maxKeptValue is no value the operator set, and is left out.
func KeepKeys(m map[string]string, keys ...string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok && len(v) <= maxKeptValue {
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
