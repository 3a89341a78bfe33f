// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/controller/scheduletask"
	"github.com/example/platform-operator/internal/provenance"
	"github.com/example/platform-operator/internal/testutil"
)

// eventsAbout lists the events of a reason about one object, as "regarding
// related: note".
func eventsAbout(g Gomega, ns, name, reason string) []string {
	var evs eventsv1.EventList
	g.Expect(k8sClient.List(context.Background(), &evs, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range evs.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			related := ""
			if e.Related != nil {
				related = e.Related.Name
			}
			// A repeated event is one Event with a series.
			n := 1
			if e.Series != nil {
				n = int(e.Series.Count)
			}
			for range n {
				out = append(out, related+": "+e.Note)
			}
		}
	}
	return out
}

// forgedJob is a Job a tenant who may create Jobs makes: controlled by the
// task's CronJob, carrying its labels and its signature annotation (copied
// from the CronJob, which the tenant may read), any scheduled time, and a pod
// template of the tenant's choosing.
func forgedJob(cj *batchv1.CronJob, name string, change func(*corev1.PodTemplateSpec)) *batchv1.Job {
	job := testutil.JobFromCronJob(cj, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	job.Name = name
	change(&job.Spec.Template)
	return job
}

func TestScheduleTask_ForgedJobIsNotRecordedAndIsReportedOnce(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "guarded")
	cj := createTask(t, st)

	otherImage := forgedJob(cj, "guarded-forged-image", func(p *corev1.PodTemplateSpec) {
		p.Spec.Containers[0].Image = "evil.example.com/miner:1"
	})
	unsigned := forgedJob(cj, "guarded-unsigned", func(*corev1.PodTemplateSpec) {})
	delete(unsigned.Annotations, provenance.SignatureAnnotation)
	hostNet := forgedJob(cj, "guarded-forged-hostnet", func(p *corev1.PodTemplateSpec) { p.Spec.HostNetwork = true })
	// The forged hash annotation is overwritten by the operator's own.
	hostNet.Annotations[provenance.TemplateHashAnnotation] = "anything"
	genuine := testutil.JobFromCronJob(cj, time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC))
	for _, j := range []*batchv1.Job{otherImage, unsigned, hostNet, genuine} {
		g.Expect(k8sClient.Create(ctx, j)).To(Succeed())
	}

	// The real Job is recorded, which also shows the task's passes ran past
	// the forged ones.
	g.Eventually(func(g Gomega) {
		runs := taskRuns(g, ns)
		g.Expect(runs).To(HaveLen(1))
		g.Expect(runs[0].Spec.JobRef.UID).To(Equal(genuine.UID))
		for _, j := range []*batchv1.Job{otherImage, unsigned, hostNet} {
			g.Expect(eventsAbout(g, ns, st.Name, "UnverifiedJob")).To(ContainElement(HavePrefix(j.Name+": ")),
				"Job %s is reported", j.Name)
		}
	}, timeout, poll).Should(Succeed())
	g.Expect(eventsAbout(g, ns, st.Name, "UnverifiedJob")).NotTo(ContainElement(HavePrefix(genuine.Name + ": ")))

	// Through resyncs: no record of a forged Job, one report each.
	throughResyncs(t, st, 2, func(g Gomega) {
		g.Expect(taskRuns(g, ns)).To(HaveLen(1))
		reports := eventsAbout(g, ns, st.Name, "UnverifiedJob")
		g.Expect(reports).To(HaveLen(3))
	})
	reports := eventsAbout(g, ns, st.Name, "UnverifiedJob")
	g.Expect(reports).To(ContainElement(And(HavePrefix(unsigned.Name+": "), ContainSubstring("no signature"))))
	g.Expect(reports).To(ContainElement(And(HavePrefix(otherImage.Name+": "), HaveSuffix(": Deleted Job "+
		otherImage.Name+" of CronJob guarded, not recorded as a run: its pod template is not one the operator "+
		"rendered for this task; it was made while the job template held someone else's change"))))

	// The Jobs of a changed template under the task's signature are deleted
	// (unfinished, they would run the change as the task); a Job without
	// the signature is only reported, the genuine one stays.
	expectJobs(g, ns, map[string]bool{
		otherImage.Name: false, hostNet.Name: false, unsigned.Name: true, genuine.Name: true})
}

// expectJobs checks which of the namespace's Jobs exist (true) and which
// are gone or going (false).
func expectJobs(g Gomega, ns string, want map[string]bool) {
	got := map[string]bool{}
	for name := range want {
		var job batchv1.Job
		err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &job)
		if client.IgnoreNotFound(err) != nil {
			g.Expect(err).NotTo(HaveOccurred())
		}
		got[name] = err == nil && job.DeletionTimestamp.IsZero()
	}
	g.Expect(got).To(Equal(want))
}

func TestScheduleTask_JobOfAnotherTasksTemplateIsNotRecorded(t *testing.T) {
	// Two tasks of one namespace: a Job made from one task's template (with
	// its valid signature) but put under the other task's CronJob proves
	// nothing about the second task.
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	victim := createTask(t, testutil.NewScheduleTask(ns, "victim"))
	donor := createTask(t, testutil.NewScheduleTask(ns, "donor"))
	job := testutil.JobFromCronJob(donor, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	job.Name = "victim-borrowed"
	job.OwnerReferences = []metav1.OwnerReference{
		*metav1.NewControllerRef(victim, batchv1.SchemeGroupVersion.WithKind("CronJob"))}
	job.Labels[platformv1.ScheduleTaskLabel] = "victim"
	g.Expect(k8sClient.Create(ctx, job)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(eventsAbout(g, ns, "victim", "UnverifiedJob")).To(ContainElement(HavePrefix(job.Name + ": ")))
	}, timeout, poll).Should(Succeed())
	g.Expect(taskRuns(g, ns)).To(BeEmpty())
}

func TestScheduleTask_JobFromTheTemplateBeforeAnEditIsStillRecorded(t *testing.T) {
	// A Job the CronJob made a moment before the task changed carries the
	// template, and the signature, of before: it is a run of the task.
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "edited")
	before := createTask(t, st)
	g.Eventually(func(g Gomega) {
		before = cronJobOf(g, st)
		g.Expect(before.Spec.JobTemplate.Annotations).To(HaveKey(provenance.SignatureAnnotation))
	}, timeout, poll).Should(Succeed())

	key := client.ObjectKeyFromObject(st)
	g.Expect(editTask(context.Background(), k8sClient, key, func(task *platformv1.ScheduleTask) {
		task.Spec.Command = []string{"sh", "-c", "echo changed"}
		task.Spec.Env = []corev1.EnvVar{{Name: "NEW", Value: "1"}}
	})).To(Succeed())
	var after *batchv1.CronJob
	g.Eventually(func(g Gomega) {
		after = cronJobOf(g, st)
		g.Expect(after.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Command).To(ContainElement("echo changed"))
	}, timeout, poll).Should(Succeed())
	g.Expect(after.Spec.JobTemplate.Annotations[provenance.SignatureAnnotation]).NotTo(
		Equal(before.Spec.JobTemplate.Annotations[provenance.SignatureAnnotation]), "a new template has a new signature")

	old := testutil.JobFromCronJob(before, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	current := testutil.JobFromCronJob(after, time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC))
	// The old template with the new signature is no run of the task.
	mixed := testutil.JobFromCronJob(before, time.Date(2026, 1, 1, 0, 2, 0, 0, time.UTC))
	maps.Copy(mixed.Annotations, after.Spec.JobTemplate.Annotations)
	for _, j := range []*batchv1.Job{old, current, mixed} {
		g.Expect(k8sClient.Create(ctx, j)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		recorded := map[string]bool{}
		for _, tr := range taskRuns(g, ns) {
			recorded[tr.Spec.JobRef.Name] = true
		}
		g.Expect(recorded).To(Equal(map[string]bool{old.Name: true, current.Name: true}))
		g.Expect(eventsAbout(g, ns, st.Name, "UnverifiedJob")).To(ConsistOf(HavePrefix(mixed.Name + ": ")))
		// The mix carries the signature the template carries now over
		// another template: deleted as an implant's Job. The Job of the
		// template before the edit stays.
		expectJobs(g, ns, map[string]bool{old.Name: true, current.Name: true, mixed.Name: false})
	}, timeout, poll).Should(Succeed())
}

func TestScheduleTask_ManualRunsJobIsProvablyTheTasks(t *testing.T) {
	// The operator's own Job for a manual run is made from the CronJob's
	// stored template and must verify like a scheduled one: a Job with its
	// pod template (as the Job controller's labels aside) is recorded.
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createTask(t, testutil.NewScheduleTask(ns, "manual"))
	tr := testutil.NewManualTaskRun(ns, "manual-now", "manual")
	g.Expect(k8sClient.Create(ctx, tr)).To(Succeed())
	var job batchv1.Job
	g.Eventually(func(g Gomega) {
		got := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tr), got)).To(Succeed())
		g.Expect(got.Spec.JobRef).NotTo(BeNil())
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: got.Spec.JobRef.Name}, &job)).To(Succeed())
	}, timeout, poll).Should(Succeed())
	g.Expect(job.Annotations).To(HaveKey(provenance.SignatureAnnotation))

	expectTwinRecorded(t, &job, "manual")
}

// expectTwinRecorded creates a Job with job's pod template and signature
// (and neither its name nor its run's annotation) and expects the operator
// to record it as a run of task: proof that job's signature verifies
// through the path that records a Job, whatever linked job to its run.
func expectTwinRecorded(t *testing.T, job *batchv1.Job, task string) {
	t.Helper()
	g := NewWithT(t)
	twin := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: task + "-twin",
			Labels: map[string]string{platformv1.ScheduleTaskLabel: task,
				platformv1.ManagedByLabel: platformv1.ManagedByValue},
			Annotations:     map[string]string{provenance.SignatureAnnotation: job.Annotations[provenance.SignatureAnnotation]},
			OwnerReferences: job.OwnerReferences},
		Spec: batchv1.JobSpec{Template: *job.Spec.Template.DeepCopy()},
	}
	for _, l := range []string{batchv1.JobNameLabel, batchv1.ControllerUidLabel, "job-name", "controller-uid"} {
		delete(twin.Spec.Template.Labels, l)
	}
	g.Expect(k8sClient.Create(context.Background(), twin)).To(Succeed())
	g.Eventually(func(g Gomega) {
		recorded := map[string]bool{}
		for _, tr := range taskRuns(g, job.Namespace) {
			if tr.Spec.JobRef != nil {
				recorded[tr.Spec.JobRef.Name] = true
			}
		}
		g.Expect(recorded).To(HaveKey(twin.Name))
	}, timeout, poll).Should(Succeed())
	g.Expect(eventsAbout(g, job.Namespace, task, "UnverifiedJob")).To(BeEmpty())
}

func TestTaskRun_FollowsOnlyPodsItsJobControls(t *testing.T) {
	t.Parallel() // waits out resyncs or a grace in a namespace of its own; see suite_test.go
	// A pod with the Job's controller-uid label but another controller (or
	// none) is not the run's: it must give the run neither its phase nor its
	// name, which `kubectl stask logs` would stream.
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cj := createTask(t, testutil.NewScheduleTask(ns, "followed"))
	job := testutil.JobFromCronJob(cj, time.Now().Truncate(time.Minute))
	g.Expect(k8sClient.Create(ctx, job)).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: job.Name}
	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, key, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunPending))
	}, timeout, poll).Should(Succeed())

	impostor := testutil.PodForJob(job, "impostor", corev1.PodPending, 0)
	impostor.OwnerReferences = nil
	impostor.Spec.Containers[0].Image = "evil.example.com/miner:1"
	g.Expect(k8sClient.Create(ctx, impostor)).To(Succeed())
	impostor.Status.Phase = corev1.PodRunning
	g.Expect(k8sClient.Status().Update(ctx, impostor)).To(Succeed())
	testutil.StartJob(job, time.Now().Add(-time.Second))
	g.Expect(k8sClient.Status().Update(ctx, job)).To(Succeed())
	run := &platformv1.TaskRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}
	throughResyncs(t, run, 2, func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, key, tr)).To(Succeed())
		g.Expect(tr.Status.PodName).NotTo(Equal("impostor"))
	})

	pod := testutil.PodForJob(job, job.Name+"-abcde", corev1.PodPending, 0)
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	pod.Status.Phase = corev1.PodRunning
	g.Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
	g.Eventually(func(g Gomega) {
		tr := &platformv1.TaskRun{}
		g.Expect(k8sClient.Get(ctx, key, tr)).To(Succeed())
		g.Expect(tr.Status.Phase).To(Equal(platformv1.TaskRunRunning))
		g.Expect(tr.Status.PodName).To(Equal(pod.Name))
	}, timeout, poll).Should(Succeed())
}

func TestOperator_SigningKeyIsKeptInOneSecret(t *testing.T) {
	// The manager under test made (or found) its key in the namespace it was
	// given; it is long enough, and nothing else holds it.
	g := NewWithT(t)
	s := &corev1.Secret{}
	key := client.ObjectKey{Namespace: "default", Name: provenance.KeySecretName}
	g.Expect(k8sClient.Get(context.Background(), key, s)).To(Succeed())
	g.Expect(len(s.Data[provenance.KeySecretKey])).To(BeNumerically(">=", 32))
	g.Expect(strings.ToLower(string(s.Type))).To(Equal("opaque"))
}

func TestDefaulted_PredictsThePodTemplateTheAPIServerStores(t *testing.T) {
	// The operator signs its prediction of the stored template in the same
	// apply that sets it; the oracle here is the API server itself.
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	digest := "busybox@sha256:" + strings.Repeat("ab", 32)
	variants := map[string]func(*platformv1.ScheduleTask){
		"plain":    func(*platformv1.ScheduleTask) {},
		"untagged": func(st *platformv1.ScheduleTask) { st.Spec.Image = "registry.example.com:5000/team/tool" },
		"latest":   func(st *platformv1.ScheduleTask) { st.Spec.Image = "busybox:latest" },
		"digest":   func(st *platformv1.ScheduleTask) { st.Spec.Image = digest },
		"full": func(st *platformv1.ScheduleTask) {
			st.Spec.ServiceAccountName = ptr.To("runner")
			st.Spec.Args = []string{"--x"}
			st.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
			st.Spec.Resources = &corev1.ResourceRequirements{
				Limits: corev1.ResourceList{
					corev1.ResourceCPU: resourceMust("0.5"), corev1.ResourceMemory: resourceMust("0.5Gi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resourceMust("1n")},
			}
			st.Spec.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), Capabilities: &corev1.Capabilities{
				Drop: []corev1.Capability{"ALL"}}}
			st.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
		},
		"template": func(st *platformv1.ScheduleTask) { st.Spec.Template = loadedTemplate() },
	}
	asJSON := func(v any) map[string]any {
		data, err := json.Marshal(v)
		g.Expect(err).NotTo(HaveOccurred())
		out := map[string]any{}
		g.Expect(json.Unmarshal(data, &out)).To(Succeed())
		return out
	}
	for name, change := range variants {
		st := testutil.NewScheduleTask(ns, "predict-"+name)
		st.UID = "00000000-0000-0000-0000-000000000000"
		change(st)
		desired, err := scheduletask.DesiredCronJob(st, k8sClient.Scheme())
		g.Expect(err).NotTo(HaveOccurred())
		desired.OwnerReferences = nil // no task: the operator leaves it alone
		// Read the rendering first: Apply writes the response into desired.
		rendered := &corev1.PodTemplateSpec{}
		data, err := json.Marshal(desired.Spec.JobTemplate.Spec.Template)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(json.Unmarshal(data, rendered)).To(Succeed())
		g.Expect(k8sClient.Apply(ctx, desired, client.FieldOwner("predict-test"))).To(Succeed())
		stored := cronJobOf(g, st).Spec.JobTemplate.Spec.Template
		g.Expect(cmp.Diff(asJSON(&stored), asJSON(provenance.Defaulted(rendered)))).To(BeEmpty(),
			"%s: the API server stored (-) another template than predicted (+)", name)
	}
}

// loadedTemplate is a pod template that sets something of every kind the
// API server defaults inside: volumes of each source that has a default,
// probes and lifecycle hooks of each handler, init and sidecar containers
// with ports, and the pod fields a backup job uses.
func loadedTemplate() *corev1.PodTemplateSpec {
	httpGet := &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "data"},
			Annotations: map[string]string{"example.com/owner": "data"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyOnFailure,
			Volumes: []corev1.Volume{
				{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
					ClaimName: "data"}}},
				{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
					Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{
						FieldPath: "metadata.labels"}}}}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
						Path: "token", Audience: "backup"}}}}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}},
				{Name: "bare"},
				{Name: "claim", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
					VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceStorage: resourceMust("1Gi")}}}}}}},
				{Name: "iscsi", VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{
					TargetPortal: "10.0.0.2:3260", IQN: "iqn.2001-04.com.example:storage", Lun: 0}}},
			},
			InitContainers: []corev1.Container{{
				Name: "fetch", Image: "busybox:1.36", Command: []string{"true"},
				Ports:        []corev1.ContainerPort{{ContainerPort: 9000}},
				VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
			}, {
				Name: "proxy", Image: "envoy:v1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
				StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					GRPC: &corev1.GRPCAction{Port: 9901}}},
			}},
			Containers: []corev1.Container{{
				Name: "task",
				EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}}},
				VolumeMounts:   []corev1.VolumeMount{{Name: "secret", MountPath: "/creds", ReadOnly: true}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: httpGet}},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: httpGet.DeepCopy()},
					PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}},
			}, {
				Name: "metrics", Image: "exporter:v2", Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9100}},
				StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}},
			}},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
			NodeSelector:     map[string]string{"disk": "ssd"},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "backup",
				Effect: corev1.TaintEffectNoSchedule}},
			PriorityClassName:             "batch-low",
			TerminationGracePeriodSeconds: ptr.To[int64](120),
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{
						Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}}}}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone",
				WhenUnsatisfiable: corev1.ScheduleAnyway,
				LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"team": "data"}}}},
			HostAliases: []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"db"}}},
		},
	}
}
