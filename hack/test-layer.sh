#!/usr/bin/env bash
# test-layer.sh runs one layer of `make test` (or one step of `make verify`)
# so that nothing it starts outlives it and nothing outside the checkout
# changes what it tests:
#
#   - the layer gets a folder of its own, holding its temporary files
#     (TMPDIR: envtest's etcd and kube-apiserver, managers, Prometheus, the
#     tests' t.TempDir) and its kwok clusters (KWOK_WORKDIR), so neither a
#     user's ~/.kwok/kwok.yaml nor clusters an earlier run left behind reach
#     it. At the end, whether the layer passed, failed, timed out or was
#     interrupted, every kwok cluster in it is deleted, every process still
#     using it is killed, and it is removed: from this trap, because a go
#     test timeout panics past the tests' own deferred cleanup.
#   - the variables that would change what the tests test are cleared.
#   - its time and result go to $TEST_REPORT_DIR/layers.tsv, beside the
#     NAME.json the Makefile has the layer's gotestsum write its events to
#     (an older one is removed first), for hack/testsummary (`make
#     test-summary`, and the end of .ci/run).
#
# Usage: hack/test-layer.sh NAME COMMAND [ARG...]
set -uo pipefail

if (($# < 2)); then
	echo "usage: $0 NAME COMMAND [ARG...]" >&2
	exit 2
fi
name=$1
shift

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
export TEST_REPORT_DIR="${TEST_REPORT_DIR:-${repo}/bin/test-reports}"
mkdir -p "${TEST_REPORT_DIR}"
rm -f "${TEST_REPORT_DIR}/${name}.json"

# Variables from the user's shell that would change what is tested: the
# image the manifests name, the namespaces a manager serves, tracing, Helm's
# and kwok's own settings, and control plane binaries from outside this
# checkout (envtest falls back to bin/, which make tools built).
unset IMG WATCH_NAMESPACES
for v in $(compgen -e); do
	case "${v}" in
	OTEL_* | KWOK_* | HELM_*) unset "${v}" ;;
	esac
done
if [[ -n "${KUBEBUILDER_ASSETS:-}" && "${KUBEBUILDER_ASSETS}" != "${repo}"/* ]]; then
	echo "test-layer: ignoring KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS} (outside the checkout); using bin/" >&2
	unset KUBEBUILDER_ASSETS
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/platform-test-${name}.XXXXXX")"
mkdir -p "${work}/tmp" "${work}/kwok"
export TMPDIR="${work}/tmp" KWOK_WORKDIR="${work}/kwok"

cleanup() {
	local clusters c left
	# kwokctl stops a cluster's components and removes its folder.
	clusters=$("${repo}/bin/kwokctl" get clusters 2>/dev/null || true)
	for c in ${clusters}; do
		echo "test-layer: ${name}: deleting kwok cluster ${c} left behind" >&2
		"${repo}/bin/kwokctl" delete cluster --name "${c}" >/dev/null 2>&1 || true
	done
	# Whatever still runs from the folder (an envtest control plane whose
	# test binary died, a manager, Prometheus, a cluster kwokctl could not
	# delete): TERM, a grace, then KILL.
	if pgrep -f -- "${work}/" >/dev/null; then
		left=$(pgrep -af -- "${work}/" | cut -c1-160)
		echo "test-layer: ${name}: stopping processes left behind:" >&2
		echo "${left}" | sed 's/^/  /' >&2
		pkill -TERM -f -- "${work}/" || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			pgrep -f -- "${work}/" >/dev/null || break
			sleep 1
		done
		pkill -KILL -f -- "${work}/" || true
		sleep 1
	fi
	rm -rf "${work}" 2>/dev/null || { sleep 2; rm -rf "${work}"; }
}

start=$(date +%s)
rc=0
finish() {
	local status=$?
	((rc == 0)) && rc=${status}
	trap - EXIT INT TERM
	cleanup
	printf '%s\t%s\t%s\n' "${name}" "$(($(date +%s) - start))" "${rc}" >>"${TEST_REPORT_DIR}/layers.tsv"
	exit "${rc}"
}
trap finish EXIT
trap 'rc=130; exit 130' INT
trap 'rc=143; exit 143' TERM

"$@"
rc=$?
exit "${rc}"
