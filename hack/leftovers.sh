#!/usr/bin/env bash
# leftovers.sh lists what test layers left behind and fails when anything
# remains: folders of hack/test-layer.sh (platform-test-*) in the temporary
# folder, processes running from one of them or from this checkout's bin/
# (the make run cluster, platform-dev, excepted), and kwok clusters in
# ~/.kwok that were not there before (BEFORE: a file listing the clusters
# present when the layer started; without it, any cluster but platform-dev).
#
# Usage: hack/leftovers.sh [BEFORE]
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="${TMPDIR:-/tmp}"
before="${1:-}"
found=0

dirs=$(find "${tmp}" -maxdepth 1 -name 'platform-test-*' 2>/dev/null)
if [[ -n "${dirs}" ]]; then
	echo "leftovers: temporary folders of test layers:"
	echo "${dirs}" | sed 's/^/  /'
	found=1
fi

# A process counts when it runs from a layer's folder in ${tmp} or runs a
# tool of bin/ (not one that merely names bin/, as go build -o does).
procs=$(ps -eo pid=,args= | awk -v layer="${tmp%/}/platform-test-" -v bin="${repo}/bin/" '
	index($0, layer) || index($2, bin) == 1 { print }' |
	grep -v -e '/clusters/platform-dev/' -e 'leftovers.sh' -e 'awk -v layer=' | cut -c1-200)
if [[ -n "${procs}" ]]; then
	echo "leftovers: processes of test layers still running:"
	echo "${procs}" | sed 's/^/  /'
	found=1
fi

clusters=$(ls "${HOME}/.kwok/clusters" 2>/dev/null | grep -vx platform-dev)
if [[ -n "${before}" && -f "${before}" ]]; then
	clusters=$(comm -13 <(sort "${before}") <(echo "${clusters}" | sort) | grep -v '^$')
fi
if [[ -n "${clusters}" ]]; then
	echo "leftovers: kwok clusters in ~/.kwok/clusters:"
	echo "${clusters}" | sed 's/^/  /'
	found=1
fi

if ((found)); then
	echo "leftovers: FAIL: the above outlived the layer that started it" >&2
	exit 1
fi
echo "leftovers: none (no platform-test-* folder, no process from one or from bin/, no new kwok cluster)"
