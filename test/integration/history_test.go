// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package integration

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	"github.com/example/platform-operator/internal/testutil"
)

func TestScheduleTask_CronJobKeepsMoreJobsThanTheTaskKeepsRuns(t *testing.T) {
	// With the task's own limits, `successfulRunsHistoryLimit: 0` would let
	// the CronJob controller delete a finished Job before the operator
	// records it. The CronJob keeps ten more of each outcome.
	g := NewWithT(t)
	ns := newNamespace(t)
	st := testutil.NewScheduleTask(ns, "keeps-none")
	st.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](0)
	st.Spec.FailedRunsHistoryLimit = ptr.To[int32](2)
	createTask(t, st)
	g.Eventually(func(g Gomega) {
		cj := cronJobOf(g, st)
		g.Expect(cj.Spec.SuccessfulJobsHistoryLimit).To(Equal(ptr.To[int32](10)))
		g.Expect(cj.Spec.FailedJobsHistoryLimit).To(Equal(ptr.To[int32](12)))
	}, timeout, poll).Should(Succeed())
}
