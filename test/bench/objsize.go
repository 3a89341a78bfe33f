// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"context"
	"fmt"
	"reflect"
	"runtime"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller"
	"github.com/example/platform-operator/internal/testutil/testenv"
)

// objectBytes is what one cached object of a kind holds in the manager's
// heap, and how many the cluster has.
type objectBytes struct {
	Kind    string  `json:"kind"`
	Objects int     `json:"objects"`
	Bytes   float64 `json:"bytesPerObject"`
}

// cachedKind is a kind the manager caches, as its informer lists it.
type cachedKind struct {
	name string
	list client.ObjectList
	// obj is the kind's key in the manager's cache options.
	obj client.Object
	// proto: the manager's client reads built-in kinds as protobuf and the
	// operator's own as JSON.
	proto bool
}

// growingKinds are the cached kinds that grow with tasks and runs.
var growingKinds = []cachedKind{
	{"ScheduleTask", &platformv1.ScheduleTaskList{}, &platformv1.ScheduleTask{}, false},
	{"TaskRun", &platformv1.TaskRunList{}, &platformv1.TaskRun{}, false},
	{"CronJob", &batchv1.CronJobList{}, &batchv1.CronJob{}, true},
	{"Job", &batchv1.JobList{}, &batchv1.Job{}, true},
	{"Pod", &corev1.PodList{}, &corev1.Pod{}, true},
}

// objectSizes measures the bytes one cached object of each kind holds in the
// manager: every object of the kind is listed, encoded as the API server
// sends it to the manager, decoded and passed through the manager's own
// cache transform (controller.CacheOptions), and kept; the growth of this
// process's live heap divided by the count is the figure. It counts the
// object with its strings and maps, not the informer's indexes and keys.
func (b *bench) objectSizes(ctx context.Context) ([]objectBytes, error) {
	opts, err := controller.CacheOptions()
	if err != nil {
		return nil, err
	}
	scheme := testenv.Scheme()
	codecs := map[bool]k8sruntime.Serializer{
		true:  protobuf.NewSerializer(scheme, scheme),
		false: json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{}),
	}
	out := make([]objectBytes, 0, len(growingKinds))
	for _, k := range growingKinds {
		transform, selector := cachingOf(opts, k.obj)
		var selection []client.ListOption
		if selector != nil {
			selection = append(selection, client.MatchingLabelsSelector{Selector: selector})
		}
		list := k.list.DeepCopyObject().(client.ObjectList)
		if err := b.cluster.Client.List(ctx, list, selection...); err != nil {
			return nil, fmt.Errorf("list %s: %w", k.name, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			out = append(out, objectBytes{Kind: k.name})
			continue
		}
		gvk, err := apiutil.GVKForObject(k.obj, scheme)
		if err != nil {
			return nil, err
		}
		encoded := make([][]byte, len(items))
		for i, it := range items {
			// A list's items carry no kind; the API server's answers do.
			it.GetObjectKind().SetGroupVersionKind(gvk)
			if encoded[i], err = k8sruntime.Encode(codecs[k.proto], it); err != nil {
				return nil, fmt.Errorf("encode %s: %w", k.name, err)
			}
		}
		// Few objects would leave the figure to the noise of this process's
		// other allocations; the same objects decoded again are as big.
		for i := 0; len(encoded) < minSample; i++ {
			encoded = append(encoded, encoded[i])
		}
		per, err := retainedBytes(encoded, codecs[k.proto], transform)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		out = append(out, objectBytes{Kind: k.name, Objects: len(items), Bytes: per})
	}
	return out, nil
}

// minSample is the fewest objects objectSizes decodes for one figure.
const minSample = 5000

// cachingOf is how the manager's cache options cache the kind of obj: the
// transform applied to each object and the label selector of the informer.
func cachingOf(opts cache.Options, obj client.Object) (toolscache.TransformFunc, labels.Selector) {
	for o, by := range opts.ByObject {
		if reflect.TypeOf(o) != reflect.TypeOf(obj) {
			continue
		}
		if by.Transform != nil {
			return by.Transform, by.Label
		}
		return opts.DefaultTransform, by.Label
	}
	return opts.DefaultTransform, nil
}

// retainedBytes decodes and transforms each encoded object, keeps them all,
// and returns the live heap they added, per object.
func retainedBytes(encoded [][]byte, codec k8sruntime.Decoder, transform toolscache.TransformFunc) (float64, error) {
	kept := make([]any, len(encoded))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i, data := range encoded {
		obj, err := k8sruntime.Decode(codec, data)
		if err != nil {
			return 0, err
		}
		var o any = obj
		if transform != nil {
			if o, err = transform(obj); err != nil {
				return 0, err
			}
		}
		kept[i] = o
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(len(encoded)), nil
}
