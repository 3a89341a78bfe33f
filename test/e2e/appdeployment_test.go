//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/test/harness"
)

// Releases on the kwok cluster: the real Deployment, ReplicaSet and
// EndpointSlice controllers run the children, kwok plays the kubelet (pods
// of an image marked kwok-unready, kwok-image-pull-backoff or kwok-crash-loop
// never become ready; see hack/kwok/config.yaml).

const releaseTimeout = 90 * time.Second

// Versions and images of the tests' releases.
const (
	v123     = "v1.2.3"
	v124     = "v1.2.4"
	image123 = "harbor.example.com/order-service:" + v123
	image124 = "harbor.example.com/order-service:" + v124
	image125 = "harbor.example.com/order-service:v1.2.5"
	// imageBad is a version the traffic simulator answers badly: 10 % of
	// its requests fail, each takes 2 s.
	imageBad = "harbor.example.com/order-service:v1.2.5-bad"
)

// app is the design documents' AppDeployment in namespace ns, without its
// canaryCriteria (analysis_test.go measures those against a real
// Prometheus), changed by mutate: its canary step waits for promote.
func app(ns string, mutate func(*platformv1.AppDeployment)) *platformv1.AppDeployment {
	ad := &platformv1.AppDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "order-service"},
		Spec: platformv1.AppDeploymentSpec{
			Image:    image123,
			Replicas: ptr.To[int32](3),
			Strategy: platformv1.Strategy{Type: platformv1.StrategyCanary, CanaryPercent: 30},
		},
	}
	if mutate != nil {
		mutate(ad)
	}
	return ad
}

// released creates ad and waits until its first version is Ready.
func released(t *testing.T, ad *platformv1.AppDeployment) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(cluster.Client.Create(t.Context(), ad)).To(Succeed())
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
	})
}

// waitApp waits until check passes on the stored AppDeployment.
func waitApp(t *testing.T, ad *platformv1.AppDeployment,
	check func(Gomega, *platformv1.AppDeployment)) *platformv1.AppDeployment {
	t.Helper()
	got := &platformv1.AppDeployment{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(cluster.Client.Get(t.Context(), client.ObjectKeyFromObject(ad), got)).To(Succeed())
		check(g, got)
	}).WithTimeout(releaseTimeout).WithPolling(250 * time.Millisecond).Should(Succeed())
	return got
}

// expectReady is what `kubectl wait --for=condition=Ready` and the CI
// contract check: the current spec is observed, stable and available.
func expectReady(g Gomega, got *platformv1.AppDeployment) {
	ready := meta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionReady)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), got.Status.Message)
	g.Expect(ready.ObservedGeneration).To(Equal(got.Generation))
	g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseHealthy))
	g.Expect(got.Status.StableRevision).To(Equal(got.Status.CurrentRevision))
}

// change edits the stored AppDeployment, retrying on conflicts.
func change(t *testing.T, ad *platformv1.AppDeployment, edit func(*platformv1.AppDeployment)) {
	t.Helper()
	got := &platformv1.AppDeployment{}
	got.Namespace, got.Name = ad.Namespace, ad.Name
	NewWithT(t).Expect(harness.Edit(t.Context(), cluster.Client, got, edit)).To(Succeed())
}

// request sets a request annotation to a new value.
func request(t *testing.T, ad *platformv1.AppDeployment, annotation string) {
	t.Helper()
	change(t, ad, func(got *platformv1.AppDeployment) {
		if got.Annotations == nil {
			got.Annotations = map[string]string{}
		}
		got.Annotations[annotation] = fmt.Sprint(time.Now().UnixNano())
	})
}

// deployment reads one of the application's Deployments; nil when absent.
func deployment(g Gomega, t *testing.T, ns, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	err := cluster.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, d)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	return d
}

// expectNoViolations fails the test on any broken release promise.
func expectNoViolations(t *testing.T, rw *harness.ReleaseWatch) {
	t.Helper()
	if v := rw.Violations(); len(v) > 0 {
		t.Fatalf("release promises broken: %v", v)
	}
}

// waitingForPromotion waits until the canary of version runs its pods and
// waits for a person.
func waitingForPromotion(t *testing.T, ad *platformv1.AppDeployment, version string) *platformv1.AppDeployment {
	t.Helper()
	return waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.Canary).NotTo(BeNil(), got.Status.Message)
		g.Expect(got.Status.Canary.Version).To(Equal(version))
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhasePaused), got.Status.Message)
		g.Expect(got.Status.PauseReason).To(Equal(platformv1.PauseApproval))
	})
}

func TestAppDeployment_CanaryIsPromotedOnRequestAndAnAbortRestoresStableFirst(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	ad := app(ns, nil)
	rw := harness.WatchRelease(t, cluster, ns, ad.Name, 3)
	released(t, ad)

	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	waitingForPromotion(t, ad, v124)
	// The weight is what the pods are: 1 canary pod beside 3 stable ones
	// is 25 %, and 33 % once a stable pod has made room.
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		c := got.Status.Canary
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Replicas).To(HaveValue(Equal(int32(1))))
		g.Expect(c.ReadyReplicas).To(HaveValue(Equal(int32(1))))
		g.Expect(c.Weight.Desired).To(HaveValue(Equal(int32(33))))
		g.Expect(c.Weight.Actual).To(HaveValue(Equal(int32(33))), got.Status.Message)
		g.Expect(got.Status.Message).To(ContainSubstring("canary v1.2.4: 1/1 pods (33%)"))
		stable := deployment(g, t, ns, "order-service")
		g.Expect(stable.Spec.Replicas).To(HaveValue(Equal(int32(2))), "a stable pod goes once the canary pod is ready")
	})
	g := NewWithT(t)

	stable := deployment(g, t, ns, "order-service")
	oldRevision := stable.Spec.Template.Labels[platformv1.RevisionLabel]
	made := harness.WatchPodsMade(t, cluster, ns, ad.Name, platformv1.TrackStable)
	request(t, ad, platformv1.PromoteAnnotation)
	got := waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
	})
	// The stable Deployment takes the new template at its size, then grows:
	// changed together, the Deployment controller would first grow the old
	// ReplicaSet, making a pod of the old version only to replace it.
	if n := made.Count(oldRevision); n != 0 {
		t.Errorf("%d stable pods of the old revision %s made during the promotion, want 0", n, oldRevision)
	}
	if n := made.Count(got.Status.StableRevision); n != 3 {
		t.Errorf("%d stable pods of the new revision %s made during the promotion, want 3", n, got.Status.StableRevision)
	}
	g.Expect(got.Status.LastOutcome.Result).To(Equal(platformv1.OutcomePromoted))
	g.Expect(got.Status.Revisions).To(HaveLen(2))
	g.Expect(got.Status.HandledRequests.Promote).To(Equal(got.Annotations[platformv1.PromoteAnnotation]))
	g.Expect(got.Annotations).To(HaveKey(platformv1.PromoteAnnotation+platformv1.RequestedBySuffix),
		"admission names who asked")
	g.Eventually(func(g Gomega) {
		g.Expect(deployment(g, t, ns, "order-service-canary")).To(BeNil())
	}).WithTimeout(releaseTimeout).Should(Succeed())

	// The next canary is aborted: the stable Deployment is whole again
	// before the canary goes, and the application says so.
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image125 })
	waitingForPromotion(t, ad, "v1.2.5")
	request(t, ad, platformv1.AbortAnnotation)
	got = waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseDegraded), got.Status.Message)
		ready := meta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionReady)
		g.Expect(ready.Reason).To(Equal(platformv1.ReasonAborted))
		g.Expect(deployment(g, t, ns, "order-service-canary")).To(BeNil())
		g.Expect(deployment(g, t, ns, "order-service").Status.ReadyReplicas).To(Equal(int32(3)))
	})
	g.Expect(got.Status.LastOutcome.Result).To(Equal(platformv1.OutcomeAborted))
	g.Expect(got.Status.StableVersion).To(Equal(v124))
	g.Expect(got.Spec.Image).To(HaveSuffix(":v1.2.5"), "the spec is left as the user wrote it")
	// The watch reports the removal a moment after the API server has made
	// it, under load after the read above has seen it gone.
	g.Eventually(func(g Gomega) {
		created, removed := rw.Canaries()
		g.Expect([]int{created, removed}).To(Equal([]int{2, 2}), "canary Deployments created and removed")
	}).WithTimeout(settleTimeout).Should(Succeed())

	// A retry starts the same version's canary again.
	request(t, ad, platformv1.RetryAnnotation)
	waitingForPromotion(t, ad, "v1.2.5")
	expectNoViolations(t, rw)
}

func TestAppDeployment_RollingAndRecreateReleaseWithoutACanary(t *testing.T) {
	t.Parallel()
	for _, strategy := range []platformv1.StrategyType{platformv1.StrategyRolling, platformv1.StrategyRecreate} {
		t.Run(string(strategy), func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			ad := app(ns, func(ad *platformv1.AppDeployment) {
				ad.Spec.Strategy = platformv1.Strategy{Type: strategy}
			})
			rw := harness.WatchRelease(t, cluster, ns, ad.Name, 3)
			released(t, ad)
			g := NewWithT(t)
			d := deployment(g, t, ns, "order-service")
			want := appsv1.RollingUpdateDeploymentStrategyType
			if strategy == platformv1.StrategyRecreate {
				want = appsv1.RecreateDeploymentStrategyType
			}
			g.Expect(d.Spec.Strategy.Type).To(Equal(want))

			change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
			got := waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
				expectReady(g, got)
				g.Expect(got.Status.StableVersion).To(Equal(v124))
			})
			g.Expect(got.Status.LastOutcome.Reason).To(Equal(platformv1.ReasonRolledOut))
			if created, _ := rw.Canaries(); created != 0 {
				t.Errorf("%d canary Deployments for a %s release", created, strategy)
			}
		})
	}
}

func TestAppDeployment_NewVersionDuringACanaryReplacesItFromTheStableVersion(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	ad := app(ns, nil)
	rw := harness.WatchRelease(t, cluster, ns, ad.Name, 3)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	waitingForPromotion(t, ad, v124)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image125 })
	got := waitingForPromotion(t, ad, "v1.2.5")
	g := NewWithT(t)
	g.Expect(got.Status.StableVersion).To(Equal(v123))
	g.Eventually(func(g Gomega) {
		canary := deployment(g, t, ns, "order-service-canary")
		g.Expect(canary).NotTo(BeNil())
		g.Expect(canary.Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":v1.2.5"))
		g.Expect(canary.Status.ReadyReplicas).To(Equal(int32(1)))
		g.Expect(canary.Status.Replicas).To(Equal(int32(1)), "the v1.2.4 pod is gone")
	}).WithTimeout(releaseTimeout).Should(Succeed())
	expectNoViolations(t, rw)
}

func TestAppDeployment_GoingBackToAPromotedVersionSkipsTheCanary(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	ad := app(ns, nil)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	waitingForPromotion(t, ad, v124)
	request(t, ad, platformv1.PromoteAnnotation)
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
		g.Expect(deployment(g, t, ns, "order-service-canary")).To(BeNil())
	})

	rw := harness.WatchRelease(t, cluster, ns, ad.Name, 3)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image123 })
	got := waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v123))
	})
	NewWithT(t).Expect(got.Status.LastOutcome.Reason).To(Equal(platformv1.ReasonPreviousRevision))
	if created, _ := rw.Canaries(); created != 0 {
		t.Errorf("a canary for a revision promoted before")
	}
}

func TestAppDeployment_ScalingDuringACanaryRecomputesTheSplit(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	ad := app(ns, nil)
	rw := harness.WatchRelease(t, cluster, ns, ad.Name, 3)
	released(t, ad)
	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	waitingForPromotion(t, ad, v124)

	rw.SetReplicas(10)
	// kubectl scale, through the /scale subresource, as an autoscaler would.
	kubectl := filepath.Join(cluster.Repo, "bin", "kubectl")
	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", cluster.Kubeconfig, "-n", ns,
		"scale", "appdeployment/order-service", "--replicas=10").CombinedOutput()
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), string(out))
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		c := got.Status.Canary
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.ReadyReplicas).To(HaveValue(Equal(int32(3))), "30% of 10")
		g.Expect(c.Weight.Actual).To(HaveValue(Equal(int32(30))))
		g.Expect(deployment(g, t, ns, "order-service").Spec.Replicas).To(HaveValue(Equal(int32(7))))
	})
	expectNoViolations(t, rw)
}

func TestAppDeployment_ACanaryThatCannotStartFailsFastAndRollsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		marker, reason string
		deadline       int32
		within         time.Duration
	}{
		// Found in the pods' state, long before the 600 s deadline: a
		// fifth of it leaves room for two busy cores (one run took 51 s
		// where 20 s is usual) and still cannot be met by the deadline.
		{marker: "kwok-image-pull-backoff", reason: "ImagePullBackOff", deadline: 600, within: 120 * time.Second},
		{marker: "kwok-crash-loop", reason: "CrashLoopBackOff", deadline: 600, within: 120 * time.Second},
		// Pods that run but never turn ready fail at the deadline.
		{marker: "kwok-unready", reason: "ProgressDeadlineExceeded", deadline: 10, within: 120 * time.Second},
	} {
		t.Run(tc.marker, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			ad := app(ns, func(ad *platformv1.AppDeployment) { ad.Spec.ProgressDeadlineSeconds = tc.deadline })
			rw := harness.WatchRelease(t, cluster, ns, ad.Name, 3)
			released(t, ad)
			start := time.Now()
			change(t, ad, func(got *platformv1.AppDeployment) {
				got.Spec.Image = "harbor.example.com/" + tc.marker + "/order-service:v1.2.4"
			})
			got := waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
				g.Expect(got.Status.LastOutcome.Result).To(Equal(platformv1.OutcomeRolledBack), got.Status.Message)
				g.Expect(got.Status.Phase).To(Equal(platformv1.PhaseDegraded))
				g.Expect(deployment(g, t, ns, "order-service-canary")).To(BeNil())
			})
			took := time.Since(start)
			g := NewWithT(t)
			g.Expect(got.Status.LastOutcome.Reason).To(Equal(tc.reason))
			g.Expect(got.Status.StableVersion).To(Equal(v123))
			ready := meta.FindStatusCondition(got.Status.Conditions, platformv1.ConditionReady)
			g.Expect(ready.Reason).To(Equal(platformv1.ReasonRolledBack))
			g.Expect(took).To(BeNumerically("<", tc.within),
				"failed within a check interval of the failure, not at a later deadline")
			expectNoViolations(t, rw)
		})
	}
}

func TestCLI_AppdeployStatusIsTheCIGate(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	out, code := appdeploy(t, ns, "status", "order-service")
	g.Expect(code).To(Equal(4), "not found: cannot tell\n%s", out)

	ad := app(ns, nil)
	released(t, ad)
	out, code = appdeploy(t, ns, "status", "order-service")
	g.Expect(code).To(Equal(0), out)

	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	waitingForPromotion(t, ad, v124)
	out, code = appdeploy(t, ns, "status", "order-service")
	g.Expect(code).To(Equal(3), "paused for approval\n%s", out)

	// status --watch follows the release to its end: promoted by the plugin.
	out, code = appdeploy(t, ns, "promote", "order-service")
	g.Expect(code).To(Equal(0), out)
	out, code = appdeploy(t, ns, "status", "order-service", "--watch", "--timeout", "90s")
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(ContainSubstring(v124))

	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image125 })
	waitingForPromotion(t, ad, "v1.2.5")
	out, code = appdeploy(t, ns, "abort", "order-service")
	g.Expect(code).To(Equal(0), out)
	out, code = appdeploy(t, ns, "status", "order-service", "--watch", "--timeout", "90s")
	g.Expect(code).To(Equal(1), "aborted\n%s", out)

	// undo puts the promoted version back in the spec.
	out, code = appdeploy(t, ns, "undo", "order-service")
	g.Expect(code).To(Equal(0), out)
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		g.Expect(got.Spec.Image).To(Equal(image124))
		expectReady(g, got)
	})
	out, code = appdeploy(t, ns, "status", "order-service")
	g.Expect(code).To(Equal(0), out)
}

// TestCLI_UndoRestoresATemplateChange releases a template change of a
// rolling AppDeployment and undoes it with kubectl appdeploy undo: the
// template comes back from the ControllerRevision the operator kept, and
// the application is released with it.
func TestCLI_UndoRestoresATemplateChange(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	feature := func(value string) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Env: []corev1.EnvVar{{Name: "FEATURE", Value: value}}}}}}
	}
	ad := app(ns, func(ad *platformv1.AppDeployment) {
		ad.Spec.Strategy = platformv1.Strategy{Type: platformv1.StrategyRolling}
		ad.Spec.Template = feature("on")
	})
	released(t, ad)
	first := waitApp(t, ad, expectReady).Status.CurrentRevision

	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Template = feature("off") })
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.CurrentRevision).NotTo(Equal(first))
	})

	out, code := appdeploy(t, ns, "undo", ad.Name)
	g.Expect(code).To(Equal(0), out)
	g.Expect(out).To(ContainSubstring("spec set back to"))
	got := waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.CurrentRevision).To(Equal(first), "the first revision, template and all")
	})
	g.Expect(got.Spec.Template.Spec.Containers[0].Env).To(ConsistOf(corev1.EnvVar{Name: "FEATURE", Value: "on"}))
}

// TestAppDeployment_ARealPodTemplateRunsToReadyAndThroughACanary releases
// an application whose template has what a real one needs (a volume, a
// ConfigMap through envFrom, a sidecar, a startup probe), then a canary of
// its next version to promotion: the pods of both tracks carry the
// template.
func TestAppDeployment_ARealPodTemplateRunsToReadyAndThroughACanary(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ns := newNamespace(t)
	g.Expect(cluster.Client.Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "order-service"},
		Data:       map[string]string{"MODE": "production"},
	})).To(Succeed())
	ad := app(ns, func(ad *platformv1.AppDeployment) {
		ad.Spec.Port = 8080
		ad.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{
					Name: "app",
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "order-service"}}}},
					VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}},
					StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, FailureThreshold: 30},
				},
				{Name: "proxy", Image: "envoyproxy/envoy:v1.30.1"},
			},
			Volumes: []corev1.Volume{{Name: "cache",
				VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		}}
	})
	released(t, ad)

	change(t, ad, func(got *platformv1.AppDeployment) { got.Spec.Image = image124 })
	waitingForPromotion(t, ad, v124)
	var pods corev1.PodList
	g.Expect(cluster.Client.List(t.Context(), &pods, client.InNamespace(ns))).To(Succeed())
	tracks := map[string]bool{}
	for _, pod := range pods.Items {
		if !pod.DeletionTimestamp.IsZero() {
			continue
		}
		tracks[pod.Labels[platformv1.TrackLabel]] = true
		g.Expect(pod.Spec.Containers).To(HaveLen(2), "pod %s", pod.Name)
		g.Expect(pod.Spec.Volumes).To(ContainElement(HaveField("Name", "cache")), "pod %s", pod.Name)
	}
	g.Expect(tracks).To(HaveKey(platformv1.TrackCanary))
	g.Expect(tracks).To(HaveKey(platformv1.TrackStable))

	request(t, ad, platformv1.PromoteAnnotation)
	waitApp(t, ad, func(g Gomega, got *platformv1.AppDeployment) {
		expectReady(g, got)
		g.Expect(got.Status.StableVersion).To(Equal(v124))
		g.Expect(got.Status.StableImage).To(Equal(image124), "the app container's image, not the sidecar's")
	})
}
