#!/usr/bin/env bash
# run-dev.sh is `make run`. By default (CLUSTER=kwok) it creates (or reuses)
# the local kwok cluster, installs the CRDs, starts the traffic simulator and
# a Prometheus in the background, runs the manager in the foreground against
# it and, once the manager is ready, applies config/samples/; it only ever
# uses that cluster's own kubeconfig file, and ~/.kube/config is never
# touched.
#
# With CLUSTER=current it runs the manager against the cluster of the current
# kubeconfig context instead, as kubebuilder's `make install run` does (make
# has installed the CRDs), with the webhooks off: see run_current.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export PATH="$repo/bin:$PATH"

cluster=${DEV_CLUSTER:-platform-dev}
probe_addr=${DEV_PROBE_ADDR:-127.0.0.1:8081}
metrics_addr=${DEV_METRICS_ADDR:-127.0.0.1:8443}
webhook_port=${DEV_WEBHOOK_PORT:-9443}
cert_dir="$repo/bin/dev-webhook-certs"
prometheus_addr=${DEV_PROMETHEUS_ADDR:-127.0.0.1:9090}
trafficsim_addr=${DEV_TRAFFICSIM_ADDR:-127.0.0.1:9102}
prometheus_dir="$repo/bin/dev-prometheus"

# run_current runs the manager against the current context's cluster, with
# neither the traffic simulator nor a local Prometheus: a real cluster's pods
# serve their own metrics to its own Prometheus (pass it with
# --prometheus-address). Its
# API server would have to call this machine for the admission and
# conversion webhooks, which a remote cluster (or one in containers) cannot,
# and failing-closed webhooks it cannot reach would refuse every write; so
# the webhooks are off, and the message says what that takes away.
run_current() {
	local context server replicas
	if ! context=$(kubectl config current-context 2>/dev/null); then
		echo "run-dev: no current kubeconfig context; set KUBECONFIG or run 'kubectl config use-context NAME'" >&2
		exit 1
	fi
	server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
	# Leader election is off (its Lease would need the operator's namespace),
	# so an installed operator would reconcile the same objects alongside.
	replicas=$(kubectl -n platform-operator-system get deployment platform-operator-controller-manager \
		-o jsonpath='{.status.replicas}' 2>/dev/null || true)
	if [ "${replicas:-0}" -gt 0 ]; then
		cat >&2 <<MSG
run-dev: the operator is installed in this cluster and running ($replicas replica(s) in
platform-operator-system); a local manager would reconcile the same objects. Stop it first:

    kubectl -n platform-operator-system scale deployment platform-operator-controller-manager --replicas=0

or remove it with 'make undeploy', then run 'make run CLUSTER=current' again.
MSG
		exit 1
	fi
	cat >&2 <<MSG
=== platform-operator runs on this machine against the cluster of context "$context"
    ($server), with your kubeconfig's credentials rather than the operator's RBAC.

    Webhooks are OFF (--enable-webhooks=false): this cluster's API server cannot call a
    manager on this machine. That means:
    - no validation: the API server checks only the CRDs' schemas, so a ScheduleTask with,
      say, a schedule or time zone the webhook would refuse is accepted, and nobody checks
      who may create which TaskRun;
    - no defaulting: a manual TaskRun does not get its task label from the webhook;
    - no conversion: ScheduleTask is served as v1 only; requests for v1alpha1 fail.
    For the webhooks, use 'make run' (a local kwok cluster whose API server calls this
    machine) or install the operator with 'make deploy'.

    Ctrl-C stops the manager; 'make uninstall' removes the CRDs (and every task and run).

MSG
	exec bin/manager \
		--enable-webhooks=false \
		--leader-elect=false \
		--health-probe-bind-address="$probe_addr" \
		--metrics-bind-address="$metrics_addr" \
		--zap-devel \
		"$@"
}

case ${CLUSTER:-kwok} in
kwok) ;;
current) run_current "$@" ;;
*)
	echo "run-dev: CLUSTER=${CLUSTER} is neither kwok (the local cluster, the default) nor current (the current kubeconfig context)" >&2
	exit 2
	;;
esac

hack/kwok/cluster.sh up "$cluster" >&2
kubeconfig=$(hack/kwok/cluster.sh kubeconfig "$cluster")
export KUBECONFIG="$kubeconfig"

# The serving certificate must exist before the manager starts; the CRDs
# convert between versions through the local manager with it.
echo "Installing CRDs into $cluster" >&2
go run ./hack/localwebhook -cert-dir "$cert_dir" -port "$webhook_port" -crds config/crd/bases |
	kubectl apply --server-side --force-conflicts -f - >/dev/null
# kubectl wait fails at once, rather than waiting, on a CRD whose status has
# no conditions yet (the AppDeployment CRD is large): ask again until it has.
for attempt in $(seq 60); do
	if kubectl wait --for condition=Established --timeout=60s -f config/crd/bases >/dev/null 2>&1; then
		break
	fi
	if [ "$attempt" = 60 ]; then
		kubectl wait --for condition=Established --timeout=1s -f config/crd/bases >/dev/null
	fi
	sleep 1
done

# The Gateway API's standard CRDs, from the module go.mod pins, for weighted
# canaries (config/samples/gateway-api): before the manager starts, which
# looks for HTTPRoute once.
gateway_crds="$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)/config/crd/standard"
echo "Installing the Gateway API CRDs into $cluster" >&2
for kind in gatewayclasses gateways httproutes referencegrants; do
	kubectl apply --server-side --force-conflicts -f "$gateway_crds/gateway.networking.k8s.io_$kind.yaml" >/dev/null
	kubectl wait --for condition=Established --timeout=60s "crd/$kind.gateway.networking.k8s.io" >/dev/null
done

# background holds the processes started here that must not outlive the
# script: started with &, they ignore the terminal's Ctrl-C.
background=()
stop_background() {
	if [ ${#background[@]} -gt 0 ]; then
		kill "${background[@]}" 2>/dev/null || true
		wait "${background[@]}" 2>/dev/null || true
	fi
}
trap stop_background EXIT

# kwok's pods serve nothing, so the canary analysis would have no requests to
# judge: the traffic simulator (test/trafficsim) serves request metrics for
# every ready AppDeployment pod, and a local Prometheus scrapes it and the
# manager and is what the manager queries.
echo "Starting the traffic simulator on $trafficsim_addr and Prometheus on $prometheus_addr" >&2
go build -o bin/trafficsim ./test/trafficsim/cmd/trafficsim
mkdir -p "$prometheus_dir"
# The manager's metrics endpoint admits only holders of the metrics-reader
# ClusterRole (as config/default names it), as a real install does; a
# ServiceAccount of Prometheus's own gets it.
sed 's/^  name: metrics-reader$/  name: platform-operator-metrics-reader/' config/rbac/metrics_reader_role.yaml |
	kubectl apply --server-side -f - >/dev/null
kubectl -n default create serviceaccount dev-prometheus --dry-run=client -o yaml |
	kubectl apply --server-side -f - >/dev/null
kubectl create clusterrolebinding dev-prometheus-metrics-reader --clusterrole=platform-operator-metrics-reader \
	--serviceaccount=default:dev-prometheus --dry-run=client -o yaml |
	kubectl apply --server-side -f - >/dev/null
(umask 077 && kubectl -n default create token dev-prometheus --duration=24h >"$prometheus_dir/token")
# The manager may listen on all interfaces (":8443"); Prometheus reaches it on
# the loopback.
metrics_target=$metrics_addr
case $metrics_target in
:*) metrics_target="127.0.0.1$metrics_target" ;;
0.0.0.0:*) metrics_target="127.0.0.1:${metrics_target##*:}" ;;
esac
# honor_labels keeps the simulator's namespace label (it speaks for pods in
# every namespace); the manager's certificate is its own self-signed one.
# The simulator is scraped every 2 s: the README's canary measures every
# 10 s, and a window of rate() or increase() needs several scrapes in it.
cat >"$prometheus_dir/prometheus.yml" <<YAML
global:
  scrape_interval: 5s
  evaluation_interval: 5s
scrape_configs:
- job_name: trafficsim
  scrape_interval: 2s
  honor_labels: true
  static_configs:
  - targets: ["$trafficsim_addr"]
- job_name: platform-operator
  scheme: https
  tls_config:
    insecure_skip_verify: true
  authorization:
    credentials_file: $prometheus_dir/token
  static_configs:
  - targets: ["$metrics_target"]
YAML
bin/trafficsim --kubeconfig "$kubeconfig" --listen "$trafficsim_addr" >"$prometheus_dir/trafficsim.log" 2>&1 &
background+=($!)
bin/prometheus \
	--config.file="$prometheus_dir/prometheus.yml" \
	--storage.tsdb.path="$prometheus_dir/data" \
	--storage.tsdb.retention.time=1d \
	--web.listen-address="$prometheus_addr" \
	>"$prometheus_dir/prometheus.log" 2>&1 &
background+=($!)

# http_ok asks http://ADDR/PATH with bash alone (no curl needed) and
# succeeds on status 200.
http_ok() {
	local host=${1%:*} port=${1##*:} path=$2 status
	# The braces keep 2>/dev/null from applying to the whole shell, as a
	# redirection on exec itself would.
	{ exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null || return 1
	printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$host" >&3
	read -r _ status _ <&3 || true
	exec 3<&-
	[ "$status" = 200 ]
}

# ready asks the manager's /readyz.
ready() {
	http_ok "$probe_addr" /readyz
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
			kubectl apply -k config/samples/gateway-api >&2
			if ! http_ok "$prometheus_addr" /-/ready; then
				echo "run-dev: Prometheus is not ready on $prometheus_addr; see $prometheus_dir/prometheus.log" >&2
			fi
			cat >&2 <<MSG

=== platform-operator is running against the local cluster "$cluster".
Watch the objects (in another terminal):

    kubectl --kubeconfig $kubeconfig get scheduletasks,taskruns,appdeployments,deployments,pods -A -w

or point kubectl at the cluster for this shell only:

    export KUBECONFIG=$kubeconfig

Prometheus, which the manager's canary analysis queries, scrapes the traffic
simulator every 2s and the manager every 5s:

    http://$prometheus_addr

The simulator serves http://$trafficsim_addr/metrics: 10 requests/s per ready AppDeployment
pod, 10 % failing and slow when the image tag contains "bad" (see test/trafficsim); its log
and Prometheus's are in $prometheus_dir/.

Ctrl-C stops the manager, the simulator and Prometheus; 'make cluster-down' deletes the cluster.
MSG
			exit 0
		fi
		sleep 0.5
	done
	echo "run-dev: the manager did not become ready on $probe_addr; samples not applied" >&2
) &
background+=($!)

# One replica and no Service in front of it: Ctrl-C has nothing to drain
# (--shutdown-delay=0).
bin/manager \
	--health-probe-bind-address="$probe_addr" \
	--webhook-port="$webhook_port" \
	--webhook-cert-path="$cert_dir" \
	--cert-rotation=false \
	--shutdown-delay=0 \
	--leader-election-namespace=default \
	--metrics-bind-address="$metrics_addr" \
	--prometheus-address="http://$prometheus_addr" \
	--zap-devel \
	"$@"
