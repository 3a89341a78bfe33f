// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// invalidNameChars matches what may not appear in a namespace name.
var invalidNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace named after t, waits until pods can be
// created in it, and deletes it when t ends.
func Namespace(t *testing.T, c *Cluster) string {
	t.Helper()
	ctx := t.Context()

	prefix := strings.Trim(invalidNameChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	prefix = strings.TrimRight(prefix[:min(len(prefix), 50)], "-")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Client.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Logf("using namespace %s in cluster %s", ns.Name, c.Name)
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := client.IgnoreNotFound(c.Client.Delete(ctx, ns)); err != nil {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})

	// The ServiceAccount admission plugin rejects pods until the controller
	// manager has created the namespace's default ServiceAccount, and a Job
	// whose pod was rejected retries only after a back-off. It takes
	// milliseconds, and tens of seconds when every e2e test and a cluster
	// starting for another share the two cores.
	// A controller-manager that exited unasked makes none: it is started
	// again (Revive).
	gomega.NewWithT(t).Eventually(ctx, func() error {
		key := client.ObjectKey{Namespace: ns.Name, Name: "default"}
		err := c.Client.Get(ctx, key, &corev1.ServiceAccount{})
		if err != nil {
			if _, rerr := c.Revive(ctx); rerr != nil {
				return errors.Join(err, rerr)
			}
		}
		return err
	}).WithTimeout(2*time.Minute).WithPolling(100*time.Millisecond).Should(gomega.Succeed(), func() string {
		return fmt.Sprintf("default ServiceAccount in namespace %s (components of cluster %s that exited unasked: %v)",
			ns.Name, c.Name, c.DeadComponents())
	})
	return ns.Name
}
