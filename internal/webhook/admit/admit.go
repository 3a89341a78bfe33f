// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Package admit serves the operator's admission webhooks with what
// controller-runtime's typed defaulter and validator do, decoding less.
//
// Every write of the three kinds waits on two webhook calls, and admission
// is on the API server's CPU budget as much as the operator's. Through
// controller-runtime's admission.Webhook a request's body is parsed four
// times before the handler runs (the review's apiVersion and kind, then the
// review, each a validity scan and a decode), and each object in it four
// times more (the same, through the scheme's deserializer); a mutating
// handler then decodes the old object once more to compare. Here the
// review is decoded once, each object once, straight into its Go type (the
// API server sends the version the webhook is registered for, so there is
// no kind to recognise), and the old object is decoded once for both the
// handler and the webhook's own code (Old). Logging, panic recovery and the
// response's completion are controller-runtime's: the handler is served
// through admission.Webhook.Handle.
package admit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	k8sjson "sigs.k8s.io/json"

	"github.com/example/platform-operator/internal/webhook/guard"
)

// MaxBody is the most of a request's body a webhook reads, as
// controller-runtime's does (7 MiB: an object of etcd's largest, old and
// new). The guard in front of the server caps admission bodies lower.
const MaxBody = 7 << 20

// Object is a pointer to a Kubernetes object type O.
type Object[O any] interface {
	*O
	client.Object
}

// Register serves the defaulter and validator of P's kind on the manager's
// webhook server, at the paths controller-runtime's builder gives them
// (and the +kubebuilder:webhook markers name), and the kind's conversion
// webhook when it has one, through the builder.
func Register[P Object[O], O any](mgr ctrl.Manager, defaulter admission.Defaulter[P], validator admission.Validator[P]) error {
	gvk, err := apiutil.GVKForObject(P(new(O)), mgr.GetScheme())
	if err != nil {
		return err
	}
	log := mgr.GetLogger().WithName("admission")
	server := mgr.GetWebhookServer()
	if defaulter != nil {
		path := Path("mutate", gvk)
		log.Info("Registering a mutating webhook", "GVK", gvk, "path", path)
		server.Register(path, Serve(Defaulting(defaulter), Logger(log, gvk)))
	}
	if validator != nil {
		path := Path("validate", gvk)
		log.Info("Registering a validating webhook", "GVK", gvk, "path", path)
		server.Register(path, Serve(Validating(validator), Logger(log, gvk)))
	}
	// Only the conversion webhook, when the kind converts.
	return ctrl.NewWebhookManagedBy(mgr, P(new(O))).Complete()
}

// Path is the path of a webhook of the kind: /mutate- or /validate- and
// the group's dashed name, version and kind, as controller-runtime's
// builder and controller-gen write it.
func Path(verb string, gvk schema.GroupVersionKind) string {
	return "/" + verb + "-" + strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
}

// Logger returns the logger of a request as controller-runtime's builder
// makes it: the kind, and the object, user and request it is about.
func Logger(base logr.Logger, gvk schema.GroupVersionKind) func(logr.Logger, *admission.Request) logr.Logger {
	return func(_ logr.Logger, req *admission.Request) logr.Logger {
		log := base.WithValues("webhookGroup", gvk.Group, "webhookKind", gvk.Kind)
		if req == nil {
			return log
		}
		return log.WithValues(gvk.Kind, klog.KRef(req.Namespace, req.Name),
			"namespace", req.Namespace, "name", req.Name, "resource", req.Resource,
			"user", req.UserInfo.Username, "requestID", req.UID)
	}
}

// Serve serves handler as an admission webhook of v1 AdmissionReviews.
func Serve(handler admission.Handler, logger func(logr.Logger, *admission.Request) logr.Logger) http.Handler {
	return &server{hook: &admission.Webhook{Handler: handler, LogConstructor: logger}}
}

// server decodes a review, has hook handle it and writes the answer.
type server struct {
	hook *admission.Webhook
}

// ServeHTTP answers one AdmissionReview.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := readReview(r)
	if err != nil {
		code := http.StatusBadRequest
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			code = http.StatusRequestEntityTooLarge
		}
		s.hook.LogConstructor(logr.Discard(), nil).Error(err, "Unreadable admission request")
		writeReview(w, admission.Errored(int32(code), err))
		return
	}
	writeReview(w, s.hook.Handle(r.Context(), req))
}

// readReview reads the request's body and decodes the AdmissionReview in
// it.
func readReview(r *http.Request) (admission.Request, error) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return admission.Request{}, fmt.Errorf("contentType=%s, expected application/json", ct)
	}
	if r.Body == nil {
		return admission.Request{}, errors.New("request body is empty")
	}
	body, err := guard.ReadBody(io.LimitReader(r.Body, MaxBody+1), r.ContentLength, MaxBody)
	if err != nil {
		return admission.Request{}, fmt.Errorf("read the request body: %w", err)
	}
	switch {
	case len(body) == 0:
		return admission.Request{}, errors.New("request body is empty")
	case len(body) > MaxBody:
		return admission.Request{}, &http.MaxBytesError{Limit: MaxBody}
	}
	var review admissionv1.AdmissionReview
	if err := k8sjson.UnmarshalCaseSensitivePreserveInts(body, &review); err != nil {
		return admission.Request{}, fmt.Errorf("decode the AdmissionReview: %w", err)
	}
	if gv := review.APIVersion; gv != admissionv1.SchemeGroupVersion.String() || review.Kind != "AdmissionReview" {
		return admission.Request{}, fmt.Errorf("got a %s %s; this webhook reads admission.k8s.io/v1 AdmissionReviews "+
			"(admissionReviewVersions: [v1])", gv, review.Kind)
	}
	if review.Request == nil {
		return admission.Request{}, errors.New("the AdmissionReview has no request")
	}
	return admission.Request{AdmissionRequest: *review.Request}, nil
}

// writeReview writes the v1 AdmissionReview of resp.
func writeReview(w http.ResponseWriter, resp admission.Response) {
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: &resp.AdmissionResponse,
	}
	raw, err := json.Marshal(review)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(raw)
}

// decode decodes raw into a new P: the object as its webhook version's Go
// type reads it, as the scheme's JSON deserializer does (case-sensitive
// field names, whole numbers kept as integers, unknown fields dropped).
func decode[P Object[O], O any](raw []byte) (P, error) {
	obj := P(new(O))
	if err := k8sjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// oldKey is the context key of the old object a handler decoded.
type oldKey struct{}

// Old returns the object an update or delete request replaces, from the
// admission request in ctx: the one the handler decoded when it has, so
// that it is decoded once; nil when the request has none (a create).
func Old[P Object[O], O any](ctx context.Context) (P, error) {
	if old, ok := ctx.Value(oldKey{}).(P); ok {
		return old, nil
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil, err
	}
	if len(req.OldObject.Raw) == 0 {
		return nil, nil
	}
	return decode[P](req.OldObject.Raw)
}

// withOld is ctx carrying req and the old object decoded from it.
func withOld[P Object[O], O any](ctx context.Context, req admission.Request) (context.Context, P, error) {
	ctx = admission.NewContextWithRequest(ctx, req)
	if len(req.OldObject.Raw) == 0 {
		return ctx, nil, nil
	}
	old, err := decode[P](req.OldObject.Raw)
	if err != nil {
		return ctx, nil, fmt.Errorf("decode the old object: %w", err)
	}
	return context.WithValue(ctx, oldKey{}, old), old, nil
}

// refused is the answer to a handler's error: an API status as it is (a
// field's error names the field), anything else denied with its message.
func refused(err error) admission.Response {
	if status := apierrors.APIStatus(nil); errors.As(err, &status) {
		s := status.Status()
		return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &s}}
	}
	return admission.Denied(err.Error())
}

// Defaulting is the handler of a mutating webhook that defaults P, as
// controller-runtime's admission.WithDefaulter does: a delete passes, a
// change is answered with the JSON patch from the object as decoded to the
// object as defaulted, and an unchanged object with no patch. The patch is
// of the Go type's encodings, so it holds exactly what the defaulter
// changed: fields the type does not know are never in it.
func Defaulting[P Object[O], O any](d admission.Defaulter[P]) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		if req.Operation == admissionv1.Delete {
			return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{
				Allowed: true, Result: &metav1.Status{Code: http.StatusOK}}}
		}
		obj, err := decode[P](req.Object.Raw)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the object: %w", err))
		}
		ctx, _, err = withOld[P](ctx, req)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		original := obj.DeepCopyObject()
		if err := d.Default(ctx, obj); err != nil {
			return refused(err)
		}
		if reflect.DeepEqual(original, obj) {
			return admission.Allowed("")
		}
		before, err := json.Marshal(original)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		after, err := json.Marshal(obj)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		return admission.PatchResponseFromRaw(before, after)
	})
}

// Validating is the handler of a validating webhook of P, as
// controller-runtime's admission.WithValidator does: a create judges the
// object, an update the change from the old object, a delete the old
// object; warnings are passed on.
func Validating[P Object[O], O any](v admission.Validator[P]) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		ctx, old, err := withOld[P](ctx, req)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		var warnings admission.Warnings
		switch req.Operation {
		case admissionv1.Create, admissionv1.Update:
			obj, err := decode[P](req.Object.Raw)
			if err != nil {
				return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the object: %w", err))
			}
			if req.Operation == admissionv1.Create {
				warnings, err = v.ValidateCreate(ctx, obj)
			} else {
				if old == nil {
					return admission.Errored(http.StatusBadRequest, errors.New("an update without its old object"))
				}
				warnings, err = v.ValidateUpdate(ctx, old, obj)
			}
			if err != nil {
				return refused(err).WithWarnings(warnings...)
			}
		case admissionv1.Delete:
			if old == nil {
				return admission.Errored(http.StatusBadRequest, errors.New("a delete without its old object"))
			}
			if warnings, err = v.ValidateDelete(ctx, old); err != nil {
				return refused(err).WithWarnings(warnings...)
			}
		default:
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("unknown operation %q", req.Operation))
		}
		return admission.Allowed("").WithWarnings(warnings...)
	})
}
