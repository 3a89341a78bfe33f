#!/usr/bin/env bash
# verify.sh fails when the committed tree is not what the generators, gofmt,
# go vet and go mod tidy would make of it, or when golangci-lint complains.
# `make verify` regenerates code and manifests first, so a stale generated
# file shows up here as a diff.
set -euo pipefail
cd "$(dirname "$0")/.."

fail=0

echo "verify: generated code and manifests are committed and current"
if ! git diff --exit-code --stat -- api config charts bundle; then
	echo "verify: FAIL: regenerating changed the files above; run 'make manifests generate bundle' and commit them" >&2
	fail=1
fi
untracked=$(git ls-files --others --exclude-standard -- api config charts bundle)
if [ -n "$untracked" ]; then
	echo "verify: FAIL: generated files are not committed:" >&2
	echo "$untracked" >&2
	fail=1
fi

echo "verify: the kustomize installs build"
for overlay in config/default config/with-certmanager config/samples; do
	if ! bin/kubectl kustomize "$overlay" >/dev/null; then
		echo "verify: FAIL: kubectl kustomize $overlay" >&2
		fail=1
	fi
done

echo "verify: helm lint"
bin/helm lint --quiet --namespace platform-operator-system charts/platform-operator || fail=1
# The branches the defaults leave out, in another namespace.
bin/helm lint --quiet --namespace ops charts/platform-operator \
	--set 'watchNamespaces={team-a,team-b}' --set certManager.enabled=true \
	--set grafana.dashboard.enabled=true --set metrics.serviceMonitor.enabled=true \
	--set metrics.prometheusRule.enabled=true --set networkPolicy.enabled=true \
	--set crds.keep=false || fail=1

echo "verify: gofmt"
unformatted=$(gofmt -s -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "verify: FAIL: gofmt -s would change these files (run 'make fmt'):" >&2
	echo "$unformatted" >&2
	fail=1
fi

echo "verify: go vet (with the e2e build tag)"
go vet -tags e2e ./... || fail=1
(cd hack/bundle && go vet ./...) || fail=1

echo "verify: golangci-lint (kube-api-linter on api/ included)"
bin/golangci-lint run ./... || { echo "verify: FAIL: golangci-lint; 'make lint-fix' applies the fixes it suggests" >&2; fail=1; }
(cd hack/bundle && ../../bin/golangci-lint run ./...) || { echo "verify: FAIL: golangci-lint in hack/bundle" >&2; fail=1; }

echo "verify: go.mod and go.sum are tidy"
go mod tidy -diff || { echo "verify: FAIL: run 'go mod tidy'" >&2; fail=1; }
(cd hack/tools && go mod tidy -diff) || { echo "verify: FAIL: run 'go mod tidy' in hack/tools" >&2; fail=1; }
(cd hack/tools/prometheus && go mod tidy -diff) || { echo "verify: FAIL: run 'go mod tidy' in hack/tools/prometheus" >&2; fail=1; }
(cd hack/tools/lint && go mod tidy -diff) || { echo "verify: FAIL: run 'go mod tidy' in hack/tools/lint" >&2; fail=1; }
(cd hack/bundle && go mod tidy -diff) || { echo "verify: FAIL: run 'go mod tidy' in hack/bundle" >&2; fail=1; }

if [ "$fail" -ne 0 ]; then
	echo "verify: FAILED" >&2
	exit 1
fi
echo "verify: OK"
