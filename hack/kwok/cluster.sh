#!/usr/bin/env bash
# cluster.sh creates, reuses and deletes the local kwok clusters used by
# `make run` (cluster "platform-dev") and by the e2e tests (test/e2e).
#
#   hack/kwok/cluster.sh up NAME [EXTRA KWOKCTL CREATE FLAGS...]
#       Create cluster NAME, or reuse it if it already exists (restarting its
#       components if they are not running), make sure it has Ready fake
#       nodes, and print its kubeconfig path on stdout.
#   hack/kwok/cluster.sh down NAME
#       Stop and delete cluster NAME; succeeds if it does not exist.
#   hack/kwok/cluster.sh kubeconfig NAME
#       Print the kubeconfig path of cluster NAME.
#
# Environment: PLATFORM_KWOK_NODES (default 2) is the number of nodes `up`
# makes sure exist; PLATFORM_KWOK_LOG_LEVEL (default info; debug, warn, error)
# is kwokctl's log level.
#
# Every control plane binary comes from $REPO/bin (built from source by
# `make tools`), so kwokctl never has anything to download. Only the kubeconfig
# path goes to stdout; progress and kwokctl's own logs go to stderr. Clusters
# live under ${KWOK_WORKDIR:-~/.kwok}/clusters/NAME; `up` adds no context to
# ~/.kube/config.
set -o errexit -o nounset -o pipefail

REPO="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${REPO}/bin"
CONFIG="${REPO}/hack/kwok/config.yaml"
NODES="${PLATFORM_KWOK_NODES:-2}"
LOG_LEVEL="${PLATFORM_KWOK_LOG_LEVEL:-info}"

# kwokctl runs kubectl (for its health checks) from PATH and only falls back
# to downloading it when that fails; pin both lookups to bin/kubectl.
export PATH="${BIN}:${PATH}"
export KWOK_KUBECTL_BINARY="${BIN}/kubectl"

log() {
	echo "cluster.sh: $*" >&2
}

die() {
	log "$@"
	exit 1
}

usage() {
	echo "usage: $0 up NAME [KWOKCTL CREATE FLAGS...] | down NAME | kubeconfig NAME" >&2
	exit 2
}

require_binaries() {
	local missing=() b
	for b in kwokctl kwok etcd kube-apiserver kube-controller-manager kube-scheduler kubectl; do
		[[ -x "${BIN}/${b}" ]] || missing+=("bin/${b}")
	done
	if ((${#missing[@]} > 0)); then
		die "missing ${missing[*]} in ${REPO}; run 'make tools' to build them from source"
	fi
}

kubeconfig_path() {
	echo "${KWOK_WORKDIR:-${HOME}/.kwok}/clusters/$1/kubeconfig.yaml"
}

kwokctl() {
	"${BIN}/kwokctl" -v="${LOG_LEVEL}" "$@"
}

cluster_exists() {
	# Not grep -q: exiting early could hand kwokctl a SIGPIPE, which pipefail
	# would report as "no such cluster".
	kwokctl get clusters | grep -xF -- "$1" >/dev/null
}

cmd_up() {
	local name="$1"
	shift
	require_binaries

	if cluster_exists "${name}"; then
		# kwokctl keeps the configuration a cluster was created with, so edits
		# to hack/kwok/config.yaml only apply after `down`.
		log "reusing existing cluster ${name}; run '$0 down ${name}' to recreate it with the current hack/kwok/config.yaml"
	else
		log "creating cluster ${name}"
	fi

	# kwok serves a pod's log from a file it is told of; ClusterLogs takes an
	# absolute path, so it is written here rather than kept in config.yaml.
	local logs_config
	logs_config="$(mktemp -t kwok-logs-XXXXXX.yaml)"
	# kwokctl keeps its own copy of the configuration in the cluster's directory.
	trap 'rm -f "${logs_config:-}"' EXIT
	cat >"${logs_config}" <<LOGS
kind: ClusterLogs
apiVersion: kwok.x-k8s.io/v1alpha1
metadata:
  name: pod-logs
spec:
  logs:
  - logsFile: ${REPO}/hack/kwok/pod.log
    follow: false
LOGS

	# On an existing, running cluster this returns at once; on an existing,
	# stopped one it starts the components again.
	# --kubeconfig '' keeps kwokctl from adding a context to ~/.kube/config.
	kwokctl create cluster \
		--name "${name}" \
		--config "${CONFIG}" \
		--config "${logs_config}" \
		--runtime binary \
		--kube-apiserver-binary "${BIN}/kube-apiserver" \
		--kube-controller-manager-binary "${BIN}/kube-controller-manager" \
		--kube-scheduler-binary "${BIN}/kube-scheduler" \
		--kwok-controller-binary "${BIN}/kwok" \
		--etcd-binary "${BIN}/etcd" \
		--kubeconfig '' \
		--wait 2m \
		--timeout 5m \
		"$@" >&2

	local kubeconfig logs
	kubeconfig="$(kubeconfig_path "${name}")"
	logs="$(dirname -- "${kubeconfig}")/logs"
	[[ -f "${kubeconfig}" ]] || die "kwokctl did not write ${kubeconfig}"
	# kwokctl only logs an error when --wait runs out, so check again: Ready
	# means every component process runs and the API server is healthy.
	local status
	status="$(kwokctl get clusters -o wide | awk -v name="${name}" '$1 == name { $1 = $2 = ""; sub(/^ +/, ""); print }')"
	[[ "${status}" == Ready ]] ||
		die "cluster ${name} is ${status:-missing}, not Ready; see the component logs in ${logs}"

	# Idempotent: creates only the nodes that are missing.
	kwokctl scale node --name "${name}" --replicas "${NODES}" >&2
	"${BIN}/kubectl" --kubeconfig "${kubeconfig}" wait node --all \
		--for condition=Ready --timeout 60s >&2

	echo "${kubeconfig}"
}

cmd_down() {
	local name="$1"
	[[ -x "${BIN}/kwokctl" ]] || die "missing bin/kwokctl in ${REPO}; run 'make tools' to build it from source"
	log "deleting cluster ${name}"
	# No --kubeconfig '' here, kwokctl rejects it: it removes a kwok-NAME
	# context from ~/.kube/config, and leaves the file alone if it has none.
	kwokctl delete cluster --name "${name}" >&2
}

cmd_kubeconfig() {
	local name="$1" kubeconfig
	kubeconfig="$(kubeconfig_path "${name}")"
	[[ -f "${kubeconfig}" ]] || die "cluster ${name} does not exist; run '$0 up ${name}'"
	echo "${kubeconfig}"
}

(($# >= 2)) || usage
subcommand="$1"
name="$2"
shift 2
# kwokctl uses the name as a directory name and in kubeconfig context names.
[[ "${name}" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "invalid cluster name '${name}': use lower-case letters, digits and '-'"
case "${subcommand}" in
up)
	cmd_up "${name}" "$@"
	;;
down)
	(($# == 0)) || usage
	cmd_down "${name}"
	;;
kubeconfig)
	(($# == 0)) || usage
	cmd_kubeconfig "${name}"
	;;
*)
	usage
	;;
esac
