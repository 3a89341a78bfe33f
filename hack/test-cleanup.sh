#!/usr/bin/env bash
# test-cleanup.sh checks that a test layer interrupted midway leaves nothing
# behind: it starts `make test-e2e` with a temporary folder of its own,
# sends SIGINT (as Ctrl-C or a CI timeout would) after AFTER seconds, once
# the layer's kwok clusters, manager replicas and Prometheus run, and then
# fails if anything of the layer remains: a folder, a process running from
# it or from bin/, a kwok cluster in ~/.kwok that was not there before.
#
# Usage: hack/test-cleanup.sh [AFTER]   (default 150)
set -uo pipefail
cd "$(dirname "$0")/.."
after="${1:-150}"

parent="$(mktemp -d "${TMPDIR:-/tmp}/cleanup-check.XXXXXX")"
log="$(mktemp "${TMPDIR:-/tmp}/cleanup-check.XXXXXX.log")"
before="$(mktemp)"
{ ls "${HOME}/.kwok/clusters" 2>/dev/null || true; } >"${before}"

echo "test-cleanup: make test-e2e, interrupted after ${after} s (its log: ${log})"
TMPDIR="${parent}" timeout -s INT "${after}" make --no-print-directory test-e2e >"${log}" 2>&1
rc=$?
if ((rc != 124)); then
	echo "test-cleanup: FAIL: the e2e layer ended by itself (exit ${rc}) before it was interrupted; raise AFTER. Its last lines:" >&2
	tail -20 "${log}" >&2
	rm -rf "${parent}" "${before}"
	exit 1
fi
# Give the layer's own trap the time it takes to return: timeout returns
# once make has exited, which waits for the trap.
echo "test-cleanup: interrupted; what the layer printed on the way out:"
grep -E 'cluster.sh: deleting|reaper' "${log}" | tail -10 | sed 's/^/  /'
grep -E -A8 '^test-layer:' "${log}" | cut -c1-200 | head -20 | sed 's/^/  /'

found=0
left=$(find "${parent}" -mindepth 1 -maxdepth 1 2>/dev/null)
if [[ -n "${left}" ]]; then
	echo "test-cleanup: folders left behind:"
	echo "${left}" | sed 's/^/  /'
	found=1
fi
# The processes and kwok clusters are hack/leftovers.sh's to find: the
# layer's folder is in ${parent}, which it scans as the temporary folder.
if ! TMPDIR="${parent}" hack/leftovers.sh "${before}" | sed 's/^/  /'; then
	found=1
fi
rm -rf "${parent}" "${before}"
if ((found)); then
	echo "test-cleanup: FAIL: the interrupted e2e layer left the above behind (its log: ${log})" >&2
	exit 1
fi
rm -f "${log}"
echo "test-cleanup: OK: the interrupted e2e layer left no folder, process or kwok cluster behind"
