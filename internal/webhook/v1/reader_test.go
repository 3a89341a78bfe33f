// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// oneReader answers every Get with err, or with an object named name.
type oneReader struct {
	client.Reader
	name  string
	err   error
	calls int
}

func (r *oneReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.calls++
	if r.err != nil {
		return r.err
	}
	obj.SetName(r.name)
	return nil
}

// What the cache has is read from it; what it has not, or a kind it holds
// no informer of, is read live; an error of the live read is the answer.
func TestCacheFirst_ReadsLiveOnlyWhatTheCacheHasNot(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "scheduletasks"}, "nightly")
	for name, c := range map[string]struct {
		cacheErr, liveErr error
		want              string
		wantErr           bool
		wantLive          int
	}{
		"in the cache":        {want: "cached"},
		"not yet in it":       {cacheErr: notFound, want: "live", wantLive: 1},
		"a kind it holds not": {cacheErr: &cache.ErrResourceNotCached{}, want: "live", wantLive: 1},
		"nowhere":             {cacheErr: notFound, liveErr: notFound, wantErr: true, wantLive: 1},
		"the API server down": {cacheErr: notFound, liveErr: errors.New("connection refused"), wantErr: true, wantLive: 1},
	} {
		cached := &oneReader{name: "cached", err: c.cacheErr}
		live := &oneReader{name: "live", err: c.liveErr}
		st := &platformv1.ScheduleTask{}
		err := cacheFirst{cache: cached, live: live}.Get(context.Background(), client.ObjectKey{Name: "nightly"}, st)
		if (err != nil) != c.wantErr {
			t.Errorf("%s: error %v, want one: %t", name, err, c.wantErr)
		}
		if err == nil && st.Name != c.want {
			t.Errorf("%s: read from %q, want %q", name, st.Name, c.want)
		}
		if live.calls != c.wantLive {
			t.Errorf("%s: %d live reads, want %d", name, live.calls, c.wantLive)
		}
	}
}
