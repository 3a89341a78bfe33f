// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package stask

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	platformv1 "github.com/example/platform-operator/api/v1"
	"github.com/example/platform-operator/internal/cli/core"
)

func newLogsCommand(o *options) *cobra.Command {
	var last, follow bool
	cmd := help.Set("logs", &cobra.Command{
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, ns, err := o.Connect()
			if err != nil {
				return err
			}
			runName := args[0]
			if last {
				st, err := tasks.Get(ctx, c, ns, args[0])
				if err != nil {
					return err
				}
				if st.Status.LastTaskRunName == "" {
					return fmt.Errorf("scheduletask %q has no runs yet", st.Name)
				}
				runName = st.Status.LastTaskRunName
			}
			tr := &platformv1.TaskRun{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: runName}, tr); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("taskrun %q not found in namespace %q (for a task's latest run: kubectl stask logs TASK --last)", runName, ns)
				}
				return tasks.ExplainAbout(err, "TaskRun", runName, ns)
			}
			if tr.Status.PodName == "" {
				return fmt.Errorf("run %s has no pod yet (phase %s)", tr.Name, core.OrDash(string(tr.Status.Phase)))
			}
			// Logs are a subresource stream that controller-runtime's client
			// does not read, so this one call goes through client-go.
			cfg, err := o.ConfigFlags.ToRESTConfig()
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			stream, err := cs.CoreV1().Pods(ns).GetLogs(tr.Status.PodName, &corev1.PodLogOptions{Container: platformv1.TaskContainerName, Follow: follow}).Stream(ctx)
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("the pod %s of run %s is gone (its Job was cleaned up by the task's history limit); its logs went with it", tr.Status.PodName, tr.Name)
			}
			if err != nil {
				return tasks.ExplainAbout(err, "Pod", tr.Status.PodName, ns)
			}
			defer stream.Close()
			_, err = io.Copy(o.Out(), stream)
			return err
		},
	})
	cmd.Flags().BoolVar(&last, "last", false, "NAME is a task: show its latest run's logs")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log as it grows")
	return cmd
}
