// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeScript writes a cluster script into a repository of its own that
// fails its first `up` with the message given (and every one when always is
// set), records each call in calls.log, and prints a kubeconfig path when
// it succeeds.
func fakeScript(t *testing.T, message string, always bool) (repo, calls string) {
	t.Helper()
	repo = t.TempDir()
	calls = filepath.Join(repo, "calls.log")
	script := `#!/usr/bin/env bash
echo "$*" >>"` + calls + `"
if [[ "$1" == up ]]; then
	if [[ -n "` + map[bool]string{true: "always"}[always] + `" || ! -f "` + repo + `/failed" ]]; then
		touch "` + repo + `/failed"
		echo "` + message + `" >&2
		exit 1
	fi
	echo /kubeconfig.yaml
fi
`
	path := filepath.Join(repo, clusterScript)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return repo, calls
}

func TestCreate_AFailedStartIsDeletedAndTriedOnceMore(t *testing.T) {
	repo, calls := fakeScript(t, "kube-apiserver: bind: address already in use", false)
	t.Setenv("KWOK_WORKDIR", t.TempDir())
	c := &Cluster{Name: "retry", Repo: repo}

	out, err := c.create(context.Background())
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := strings.TrimSpace(out); got != "/kubeconfig.yaml" {
		t.Errorf("kubeconfig = %q, want the second attempt's /kubeconfig.yaml", got)
	}
	data, _ := os.ReadFile(calls)
	if want := "up retry\ndown retry\nup retry\n"; string(data) != want {
		t.Errorf("script calls = %q, want %q", data, want)
	}
}

func TestCreate_TwoFailedStartsSayWhyEachFailed(t *testing.T) {
	repo, _ := fakeScript(t, "etcd: no space left on device", true)
	t.Setenv("KWOK_WORKDIR", t.TempDir())
	c := &Cluster{Name: "broken", Repo: repo}

	_, err := c.create(context.Background())
	if err == nil {
		t.Fatal("create succeeded with a script that always fails")
	}
	if n := strings.Count(err.Error(), "etcd: no space left on device"); n != 2 {
		t.Errorf("error names the script's output %d times, want twice (once per attempt):\n%v", n, err)
	}
}
