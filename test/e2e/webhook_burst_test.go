//go:build e2e

// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/testutil"
	"github.com/example/platform-operator/internal/testutil/testenv"
	"github.com/example/platform-operator/test/harness"
)

// burstTest sends the API server more writes at once than the webhook
// server serves at once: it runs on a cluster and an operator of its own,
// so that no other test's writes share the burst.
const burstTest = "TestWebhook_ABurstOfWritesAtOnceIsAdmittedWhole"

func init() { ownClusterOptions[burstTest] = harness.ClusterOptions{} }

// burstWrites is how many ScheduleTasks the burst creates at once: more
// than the webhook server's requests in flight (64), so some are answered
// 429 and retried by the API server, and more connections than a few
// HTTP/2 ones, since the API server calls webhooks over HTTP/1.1, one
// connection per call in flight.
const burstWrites = 200

// TestWebhook_ABurstOfWritesAtOnceIsAdmittedWhole creates 200 ScheduleTasks
// at once, each through the mutating and the validating webhook, with a
// client that retries nothing but a webhook call the busy machine did not
// answer in time: every one is admitted. The API server opens
// a connection to the webhook server for each call in flight and keeps up
// to 25 idle per webhook it calls, all from its one address; when the
// server capped one address at 64 connections, the connections beyond
// were closed at once and their writes failed with "failed calling
// webhook ... EOF".
func TestWebhook_ABurstOfWritesAtOnceIsAdmittedWhole(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ctx := t.Context()
	own, _, ns := ownOperator(t)

	// The cluster's admin, without the harness's retries or client-side
	// rate limits: every write goes out at once, and any failure shows.
	cfg := rest.CopyConfig(own.Config)
	cfg.QPS, cfg.Burst = -1, burstWrites
	admin, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failed   []string
		timeouts int
		start    = make(chan struct{})
	)
	// create creates task, trying again, as a user would, a write whose
	// webhook call the machine was too busy to answer within its timeout
	// (two cores run this burst beside the whole e2e suite); any other
	// failure, a connection the webhook server closed among them, counts.
	create := func(task *platformv1.ScheduleTask) error {
		deadline := time.Now().Add(time.Minute)
		for {
			err := admin.Create(ctx, task.DeepCopy())
			switch {
			case err == nil, apierrors.IsAlreadyExists(err):
				return nil
			case !strings.Contains(err.Error(), "deadline exceeded") || time.Now().After(deadline):
				return err
			}
			mu.Lock()
			timeouts++
			mu.Unlock()
		}
	}
	for i := range burstWrites {
		wg.Go(func() {
			<-start
			task := testutil.NewScheduleTask(ns, fmt.Sprintf("burst-%03d", i), testutil.WithSchedule("0 3 * * *"))
			if err := create(task); err != nil {
				mu.Lock()
				failed = append(failed, err.Error())
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	t.Logf("%d writes at once; %d webhook calls timed out on the busy machine and were tried again", burstWrites, timeouts)
	if len(failed) > 0 {
		t.Fatalf("%d of %d writes at once failed; the first: %s", len(failed), burstWrites, failed[0])
	}
	// Each was judged and defaulted by the webhooks, not let through.
	tasks := &platformv1.ScheduleTaskList{}
	g.Expect(admin.List(ctx, tasks, client.InNamespace(ns))).To(Succeed())
	g.Expect(tasks.Items).To(HaveLen(burstWrites))
	for _, st := range tasks.Items {
		g.Expect(st.Finalizers).To(ContainElement(platformv1.ScheduleTaskFinalizer), "%s defaulted", st.Name)
	}
}
