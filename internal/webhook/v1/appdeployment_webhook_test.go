// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package v1

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	platformv1 "github.com/example/platform-operator/api/v1"
)

// The annotation keys as the controller and users read them, written out
// rather than built from the constants the webhook builds them from.
const (
	promote     = "platform.example.com/promote"
	abort       = "platform.example.com/abort"
	retry       = "platform.example.com/retry"
	promoteBy   = "platform.example.com/promote-requested-by"
	abortBy     = "platform.example.com/abort-requested-by"
	retryBy     = "platform.example.com/retry-requested-by"
	promoteByAt = "metadata.annotations[platform.example.com/promote-requested-by]"
	abortByAt   = "metadata.annotations[platform.example.com/abort-requested-by]"
	retryByAt   = "metadata.annotations[platform.example.com/retry-requested-by]"
)

// app is a valid AppDeployment carrying the annotations.
func app(annotations map[string]string) *platformv1.AppDeployment {
	return &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shop", Annotations: annotations},
		Spec: platformv1.AppDeploymentSpec{
			Image:    "harbor.example.com/shop:v1.2.3",
			Replicas: ptr.To[int32](3),
			Strategy: platformv1.Strategy{Type: platformv1.StrategyRolling},
		},
	}
}

// admissionBy is a context carrying the admission request of user: a
// CREATE when old is nil, else an UPDATE of old.
func admissionBy(t *testing.T, user string, old *platformv1.AppDeployment) context.Context {
	t.Helper()
	req := admissionv1.AdmissionRequest{Operation: admissionv1.Create, UserInfo: authenticationv1.UserInfo{Username: user}}
	if old != nil {
		raw, err := json.Marshal(old)
		if err != nil {
			t.Fatal(err)
		}
		req.Operation, req.OldObject = admissionv1.Update, runtime.RawExtension{Raw: raw}
	}
	return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: req})
}

func TestAppDeploymentDefault_StampsTheRequesterOfEveryNewRequestOnly(t *testing.T) {
	tests := []struct {
		name string
		old  map[string]string // nil with create: a CREATE
		cur  map[string]string
		// create makes the request a CREATE (old is ignored).
		create bool
		want   map[string]string
	}{
		{name: "create with a promote", create: true,
			cur:  map[string]string{promote: "v2"},
			want: map[string]string{promote: "v2", promoteBy: "bob"}},
		{name: "create without a request", create: true,
			cur:  map[string]string{"team": "a"},
			want: map[string]string{"team": "a"}},
		{name: "create without annotations", create: true},
		{name: "create with a forged requester",
			create: true,
			cur:    map[string]string{abort: "1", abortBy: "alice"},
			want:   map[string]string{abort: "1", abortBy: "bob"}},
		{name: "promote changed by another user",
			old:  map[string]string{promote: "v2", promoteBy: "alice"},
			cur:  map[string]string{promote: "v3", promoteBy: "alice"},
			want: map[string]string{promote: "v3", promoteBy: "bob"}},
		{name: "promote set on an object without annotations",
			old:  nil,
			cur:  map[string]string{promote: "v2"},
			want: map[string]string{promote: "v2", promoteBy: "bob"}},
		{name: "abort and retry in one request, promote untouched",
			old:  map[string]string{promote: "v2", promoteBy: "alice"},
			cur:  map[string]string{promote: "v2", promoteBy: "alice", abort: "a", retry: "r"},
			want: map[string]string{promote: "v2", promoteBy: "alice", abort: "a", abortBy: "bob", retry: "r", retryBy: "bob"}},
		{name: "unchanged request",
			old:  map[string]string{retry: "1", retryBy: "alice"},
			cur:  map[string]string{retry: "1", retryBy: "alice", "team": "a"},
			want: map[string]string{retry: "1", retryBy: "alice", "team": "a"}},
		{name: "request withdrawn keeps who made it",
			old:  map[string]string{promote: "v2", promoteBy: "alice"},
			cur:  map[string]string{promoteBy: "alice"},
			want: map[string]string{promoteBy: "alice"}},
		{name: "request emptied asks for nothing",
			old:  map[string]string{promote: "v2", promoteBy: "alice"},
			cur:  map[string]string{promote: "", promoteBy: "alice"},
			want: map[string]string{promote: "", promoteBy: "alice"}},
	}
	w := &AppDeploymentWebhook{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old *platformv1.AppDeployment
			if !tt.create {
				old = app(tt.old)
			}
			cur := app(tt.cur)
			if err := w.Default(admissionBy(t, "bob", old), cur); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cur.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// An update of an AppDeployment being deleted is nobody's request: it gets
// no stamp, whatever it changes.
func TestAppDeploymentDefault_LeavesAnObjectBeingDeletedAlone(t *testing.T) {
	old := app(nil)
	old.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	cur := app(map[string]string{promote: "v2"})
	if err := (&AppDeploymentWebhook{}).Default(admissionBy(t, "bob", old), cur); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{promote: "v2"}, cur.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

func TestAppDeploymentValidate_RequesterChangesOnlyWithItsRequestAndNamesTheUser(t *testing.T) {
	tests := []struct {
		name   string
		create bool
		old    map[string]string
		cur    map[string]string
		// fields are the fields the refusal must name; none: allowed.
		fields []string
	}{
		{name: "create with a promote stamped for the user", create: true,
			cur: map[string]string{promote: "v2", promoteBy: "alice"}},
		{name: "create with a requester but no request", create: true,
			cur: map[string]string{promoteBy: "alice"}, fields: []string{promoteByAt}},
		{name: "create with a promote naming another user", create: true,
			cur: map[string]string{promote: "v2", promoteBy: "bob"}, fields: []string{promoteByAt}},
		{name: "new promote stamped for the user",
			old: map[string]string{promote: "v1", promoteBy: "bob"},
			cur: map[string]string{promote: "v2", promoteBy: "alice"}},
		{name: "new promote naming another user",
			old: map[string]string{promote: "v1", promoteBy: "bob"},
			cur: map[string]string{promote: "v2", promoteBy: "carol"}, fields: []string{promoteByAt}},
		{name: "new promote still naming the last requester",
			old: map[string]string{promote: "v1", promoteBy: "bob"},
			cur: map[string]string{promote: "v2", promoteBy: "bob"}, fields: []string{promoteByAt}},
		{name: "new abort without a requester",
			cur: map[string]string{abort: "1"}, fields: []string{abortByAt}},
		{name: "requester set by hand, request unchanged",
			old: map[string]string{retry: "1", retryBy: "bob"},
			cur: map[string]string{retry: "1", retryBy: "alice"}, fields: []string{retryByAt}},
		{name: "requester added without any request",
			cur: map[string]string{abortBy: "alice"}, fields: []string{abortByAt}},
		{name: "requester removed, request unchanged",
			old: map[string]string{promote: "v2", promoteBy: "bob"},
			cur: map[string]string{promote: "v2"}, fields: []string{promoteByAt}},
		{name: "request and requester removed together",
			old: map[string]string{promote: "v2", promoteBy: "bob"},
			cur: map[string]string{}},
		{name: "request removed, requester kept",
			old: map[string]string{promote: "v2", promoteBy: "bob"},
			cur: map[string]string{promoteBy: "bob"}},
		{name: "request removed, requester renamed",
			old: map[string]string{promote: "v2", promoteBy: "bob"},
			cur: map[string]string{promoteBy: "alice"}, fields: []string{promoteByAt}},
		{name: "every problem at once",
			old:    map[string]string{retry: "1", retryBy: "bob"},
			cur:    map[string]string{promote: "v2", promoteBy: "bob", abortBy: "alice", retry: "1", retryBy: "alice"},
			fields: []string{promoteByAt, abortByAt, retryByAt}},
	}
	w := &AppDeploymentWebhook{Client: allowAll{}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.create {
				_, err = w.ValidateCreate(admissionBy(t, "alice", nil), app(tt.cur))
			} else {
				_, err = w.ValidateUpdate(admissionBy(t, "alice", app(tt.old)), app(tt.old), app(tt.cur))
			}
			if len(tt.fields) == 0 {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) {
				t.Fatalf("returned %v, want a refusal naming %v", err, tt.fields)
			}
			if got := status.Status().Code; got != http.StatusForbidden {
				t.Errorf("HTTP %d, want 403: %v", got, err)
			}
			var got []string
			for _, c := range status.Status().Details.Causes {
				got = append(got, c.Field)
			}
			if diff := cmp.Diff(tt.fields, got); diff != "" {
				t.Errorf("fields refused (-want +got):\n%s\n%v", diff, err)
			}
			for _, f := range tt.fields {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("the message does not name %s: %v", f, err)
				}
			}
		})
	}
}

// Without matchConditions (an older install), an update that touches no
// interpreted key of an AppDeployment failing today's rules passes unjudged,
// and one that touches a requester is judged.
func TestAppDeploymentValidateUpdate_JudgesRequesterChangesAndNothingUninterpreted(t *testing.T) {
	bad := app(map[string]string{promote: "v2", promoteBy: "bob"})
	bad.Spec.Image = "not an image"
	// No client: an access review would panic.
	w := &AppDeploymentWebhook{}
	ctx := asUser("alice", admissionv1.Update)

	cur := bad.DeepCopy()
	cur.Annotations["team"] = "a"
	if _, err := w.ValidateUpdate(ctx, bad, cur); err != nil {
		t.Errorf("an uninterpreted annotation: refused: %v", err)
	}
	cur = bad.DeepCopy()
	cur.Annotations[promoteBy] = "alice"
	_, err := w.ValidateUpdate(ctx, bad, cur)
	if err == nil || !strings.Contains(err.Error(), promoteByAt) {
		t.Errorf("a requester set by hand: %v, want refused naming %s", err, promoteByAt)
	}
}

// The CEL of the webhook configurations repeats what the code interprets:
// a key missing from the validating webhook's conditions would let a forged
// requester past it, and a request missing from the mutating webhook's
// would go unstamped (and then be refused).
func TestAppDeploymentMatchConditions_NameEveryRequestAndRequester(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	expressions := map[string]string{}
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		// The conditions are the same type in both kinds of configuration.
		var cfg struct {
			Webhooks []struct {
				Name            string                                   `json:"name"`
				MatchConditions []admissionregistrationv1.MatchCondition `json:"matchConditions"`
			} `json:"webhooks"`
		}
		if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
			t.Fatal(err)
		}
		for _, w := range cfg.Webhooks {
			var all []string
			for _, c := range w.MatchConditions {
				all = append(all, c.Expression)
			}
			expressions[w.Name] = strings.Join(all, " && ")
		}
	}
	want := map[string][]string{
		"vappdeployment-v1.platform.example.com": {"'" + promote + "'", "'" + abort + "'", "'" + retry + "'",
			"'" + promoteBy + "'", "'" + abortBy + "'", "'" + retryBy + "'", "deletionTimestamp"},
		"mappdeployment-v1.platform.example.com": {"'" + promote + "'", "'" + abort + "'", "'" + retry + "'", "deletionTimestamp"},
	}
	for name, keys := range want {
		expr, ok := expressions[name]
		if !ok {
			t.Errorf("no webhook %s in the configurations", name)
			continue
		}
		for _, k := range keys {
			if !strings.Contains(expr, k) {
				t.Errorf("%s's matchConditions do not name %s", name, k)
			}
		}
	}
	if diff := cmp.Diff([]string{promote, abort, retry, promoteBy, abortBy, retryBy}, appInterpretedAnnotations); diff != "" {
		t.Errorf("the annotations the validating webhook judges (-want +got):\n%s", diff)
	}
}
