// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package tracing

import "context"

// AnnotateChange returns cur, the annotations of an object being admitted,
// with TraceParentAnnotation as admission keeps it. When the request creates
// the object or changes its spec (changed), it names the span in ctx, the
// webhook call's, a child of the API server's span of the request when the
// API server traces; or is removed when the call is not traced, so that it
// never names an older change than the last. On any other update it stays
// what the stored object has (old): only admission writes it, and an update
// of metadata alone (a finalizer, a label, a re-apply that drops the
// annotation) neither moves the change's trace nor rewrites what is made
// from it, such as the CronJob's job template. A nil map stays nil unless
// the annotation is set.
func AnnotateChange(ctx context.Context, changed bool, old, cur map[string]string) map[string]string {
	want, ok := old[TraceParentAnnotation]
	if changed {
		want = TraceParent(ctx)
		ok = want != ""
	}
	switch {
	case ok:
		if cur == nil {
			cur = map[string]string{}
		}
		cur[TraceParentAnnotation] = want
	case cur != nil:
		delete(cur, TraceParentAnnotation)
	}
	return cur
}
