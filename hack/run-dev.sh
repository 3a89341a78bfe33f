#!/usr/bin/env bash
# run-dev.sh is `make run`: it creates (or reuses) the local kwok cluster,
# installs the CRDs, runs the manager in the foreground against it and, once
# the manager is ready, applies config/samples/. It only ever uses the
# cluster's own kubeconfig file; ~/.kube/config is never touched.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export PATH="$repo/bin:$PATH"

cluster=${DEV_CLUSTER:-platform-dev}
probe_addr=${DEV_PROBE_ADDR:-127.0.0.1:8081}
metrics_addr=${DEV_METRICS_ADDR:-127.0.0.1:8443}
webhook_port=${DEV_WEBHOOK_PORT:-9443}
cert_dir="$repo/bin/dev-webhook-certs"

hack/kwok/cluster.sh up "$cluster" >&2
kubeconfig=$(hack/kwok/cluster.sh kubeconfig "$cluster")
export KUBECONFIG="$kubeconfig"

# The serving certificate must exist before the manager starts; the CRDs
# convert between versions through the local manager with it.
echo "Installing CRDs into $cluster" >&2
go run ./hack/localwebhook -cert-dir "$cert_dir" -port "$webhook_port" -crds config/crd/bases |
	kubectl apply --server-side --force-conflicts -f - >/dev/null
kubectl wait --for condition=Established --timeout=60s -f config/crd/bases >/dev/null

# ready asks the manager's /readyz with bash alone (no curl needed).
ready() {
	local host=${probe_addr%:*} port=${probe_addr##*:} status
	# The braces keep 2>/dev/null from applying to the whole shell, as a
	# redirection on exec itself would.
	{ exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null || return 1
	printf 'GET /readyz HTTP/1.0\r\nHost: %s\r\n\r\n' "$host" >&3
	read -r _ status _ <&3 || true
	exec 3<&-
	[ "$status" = 200 ]
}

# Apply the samples as soon as the manager reports ready, in the background,
# so the manager keeps the foreground (and Ctrl-C).
(
	for _ in $(seq 1 120); do
		if ready; then
			# The local API server calls the local manager's webhooks over
			# TLS, trusting the CA made for this machine.
			go run ./hack/localwebhook -cert-dir "$cert_dir" -port "$webhook_port" |
				kubectl apply --server-side --force-conflicts -f - >&2
			kubectl apply -k config/samples >&2
			cat >&2 <<MSG

=== platform-operator is running against the local cluster "$cluster".
Watch the objects (in another terminal):

    kubectl --kubeconfig $kubeconfig get scheduletasks,taskruns,cronjobs,jobs -A -w

or point kubectl at the cluster for this shell only:

    export KUBECONFIG=$kubeconfig

Ctrl-C stops the manager; 'make cluster-down' deletes the cluster.
MSG
			exit 0
		fi
		sleep 0.5
	done
	echo "run-dev: the manager did not become ready on $probe_addr; samples not applied" >&2
) &
applier=$!
trap 'kill $applier 2>/dev/null || true' EXIT

bin/manager \
	--health-probe-bind-address="$probe_addr" \
	--webhook-port="$webhook_port" \
	--webhook-cert-path="$cert_dir" \
	--cert-rotation=false \
	--leader-election-namespace=default \
	--metrics-bind-address="$metrics_addr" \
	--zap-devel \
	"$@"
