# platform-operator Makefile.
#
# Everything here works on a machine with only Go installed: the Kubernetes
# control plane (kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl), etcd, kwok and the code generators are built from Go modules
# into bin/ by `make tools`; nothing downloads a prebuilt binary.

# Image the deploy targets use; build and push it with `make image-push`
# (Go alone), or `make docker-build docker-push`, which use a container
# engine where one exists and Go alone (as make image) where none does.
IMG ?= controller:latest

# The container engine of docker-build and docker-push: docker, else podman,
# else none (empty), and the image is built and pushed with Go alone.
CONTAINER_TOOL ?= $(shell command -v docker >/dev/null 2>&1 && echo docker || { command -v podman >/dev/null 2>&1 && echo podman; })

# Setting SHELL to bash allows bash commands to be executed by recipes.
# Options are set to exit when a recipe line exits non-zero or a piped command fails.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

REPO := $(shell pwd)
LOCALBIN ?= $(REPO)/bin
export PATH := $(LOCALBIN):$(PATH)

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
KUBECTL ?= $(LOCALBIN)/kubectl
GOTESTSUM ?= $(LOCALBIN)/gotestsum
PROMETHEUS ?= $(LOCALBIN)/prometheus
PROMTOOL ?= $(LOCALBIN)/promtool
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
BUNDLE_TOOL ?= $(LOCALBIN)/bundle-tool

# envtest finds kube-apiserver, etcd and kubectl here.
export KUBEBUILDER_ASSETS ?= $(LOCALBIN)

# Name of the local development cluster `make run` creates or reuses.
DEV_CLUSTER ?= platform-dev

# Which cluster `make run` runs the manager against: kwok, the local cluster
# above, or current, the cluster of the current kubeconfig context.
CLUSTER ?= kwok

# Extra flags for go test, e.g. `make test-unit GOTEST_FLAGS=-race`.
GOTEST_FLAGS ?=

# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 30s

UNIT_PKGS = $(shell go list ./... | grep -v -e /test/)

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

# config/deploy/install.yaml is config/default rendered into one file, for
# `kubectl apply -f config/deploy/`, with the manager's image IMG: committed
# with the default IMG (make verify checks it), and rewritten with yours by
# `make manifests IMG=<registry>/platform-operator:<tag>`.
.PHONY: manifests
manifests: $(CONTROLLER_GEN) $(KUBECTL) ## Generate CustomResourceDefinitions, RBAC and webhook configuration from markers, the chart's generated parts and config/deploy/ (image IMG).
	"$(CONTROLLER_GEN)" rbac:roleName=manager-role crd:allowDangerousTypes=true,generateEmbeddedObjectMeta=true webhook paths="./..." output:crd:artifacts:config=config/crd/bases
	go run ./hack/crdtrim -field spec.template -optional spec.containers config/crd/bases/*.yaml
	hack/gen-chart.sh
	@mkdir -p config/deploy
	"$(KUBECTL)" kustomize config/default | go run ./hack/gendeploy -in /dev/stdin -image "$(IMG)" -out config/deploy/install.yaml

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate DeepCopy methods.
	"$(CONTROLLER_GEN)" object:headerFile="hack/boilerplate.go.txt" paths="./..."

.PHONY: fmt
fmt: ## Run gofmt over the code.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet, including the code behind build tags.
	go vet -tags e2e ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint with .golangci.yml, kube-api-linter on api/ included.
	"$(GOLANGCI_LINT)" run ./...

.PHONY: lint-fix
lint-fix: $(GOLANGCI_LINT) ## Run golangci-lint and apply the fixes its linters suggest.
	"$(GOLANGCI_LINT)" run --fix ./...

.PHONY: verify
verify: manifests generate bundle $(GOLANGCI_LINT) ## Fail when generated code, manifests or the OLM bundle are stale, code is unformatted, vet or golangci-lint complains or a go.mod is untidy; then build and check the image for every platform (test-image).
	@echo "=== layer: verify"
	@$(LAYER) verify hack/verify.sh
	@$(MAKE) --no-print-directory test-image

##@ Test

# Every layer runs through hack/test-layer.sh: in a folder of its own for
# temporary files and kwok clusters (removed, with whatever still runs from
# it, however the layer ends), with the variables that would change what it
# tests cleared, its time and result recorded for `make test-summary`, and
# gotestsum's events in $(TEST_REPORT_DIR)/<layer>.json. Each go test
# carries a timeout of about twice the layer's time on two cores with a
# cold build cache, so a hang fails the layer, never go test's 10-minute
# default.
LAYER = "$(REPO)/hack/test-layer.sh"
TEST_REPORT_DIR ?= $(LOCALBIN)/test-reports
export TEST_REPORT_DIR
gotestsum_run = "$(GOTESTSUM)" --format testname --jsonfile "$(TEST_REPORT_DIR)/$(1).json" --

.PHONY: test
test: tools ## Run every test layer: unit, integration (envtest), e2e, a small benchmark and the short fault tests (kwok clusters).
	@if [ -z "$$TEST_REPORT_APPEND" ]; then rm -f "$(TEST_REPORT_DIR)/layers.tsv"; fi
	@$(MAKE) --no-print-directory test-unit
	@$(MAKE) --no-print-directory test-rules
	@$(MAKE) --no-print-directory test-integration
	@$(MAKE) --no-print-directory test-e2e
	@$(MAKE) --no-print-directory test-bench
	@$(MAKE) --no-print-directory test-chaos CHAOS_FLAGS=-short CHAOS_TIMEOUT=10m

# In test-unit the image test builds the image for this machine's platform
# only; test-image (run by make verify, so once per CI run) builds every
# platform of IMAGE_PLATFORMS: with a cold build cache the arm64 build alone
# takes about ten minutes on two cores, and after any change a minute or two
# more than the native build. The unit layer takes about 6 minutes cold.
.PHONY: test-unit
test-unit: $(GOTESTSUM) ## Run the unit tests (no cluster).
	@echo "=== layer: unit"
	$(LAYER) unit $(call gotestsum_run,unit) -count=1 -timeout 15m $(GOTEST_FLAGS) $(UNIT_PKGS)
	cd hack/bundle && $(LAYER) unit-bundle $(call gotestsum_run,unit-bundle) -count=1 -timeout 5m $(GOTEST_FLAGS) ./...

.PHONY: test-image
test-image: $(GOTESTSUM) ## Build the manager image for every platform it ships for (IMAGE_PLATFORMS: amd64 and arm64) and check it; make verify runs it.
	@echo "=== layer: image, $(IMAGE_PLATFORMS)"
	$(LAYER) image $(call gotestsum_run,image) -count=1 -timeout 30m -run '^TestImage_' $(GOTEST_FLAGS) ./hack/image -args -image-platforms="$(IMAGE_PLATFORMS)"

.PHONY: test-rules
test-rules: $(PROMTOOL) ## Check the Prometheus alert rules and run their unit tests with promtool.
	@echo "=== layer: alert rules (promtool)"
	$(LAYER) rules bash -c '"$(PROMTOOL)" check rules config/prometheus/alerts/platform-operator.rules.yaml && cd config/prometheus/alerts && "$(PROMTOOL)" test rules platform-operator.rules_test.yaml'

# The tests that call t.Parallel (they wait out resyncs and graces in
# namespaces of their own; test/integration/suite_test.go) run eight at a
# time, after the serial ones. About 4.5 minutes cold.
.PHONY: test-integration
test-integration: tools ## Run the integration tests against envtest (real kube-apiserver and etcd).
	@echo "=== layer: integration (envtest, assets in $(KUBEBUILDER_ASSETS))"
	$(LAYER) integration $(call gotestsum_run,integration) -count=1 -timeout 10m -parallel 8 $(GOTEST_FLAGS) ./test/integration/...

# Every e2e test runs at once (-parallel 64, more than there are): they
# spend their time waiting for fire times and analysis intervals, not on
# the cores, and the longest of them, the missed-runs test on its own
# cluster, must start first rather than queue behind the others for a
# slot, or the layer takes its wait plus theirs. The harness's self-test
# runs beside the e2e package (-p 2); the harness creates one kwok cluster
# at a time (a lock under KWOK_WORKDIR), as kwokctl picks a new cluster's
# ports by trying which are free. About 6 minutes warm, 8 cold.
.PHONY: test-e2e
test-e2e: tools ## Run the e2e tests and the harness's self-test of kwok on throwaway kwok clusters (real controller-manager and scheduler).
	@echo "=== layer: e2e (kwok cluster, --runtime binary)"
	$(LAYER) e2e $(call gotestsum_run,e2e) -count=1 -tags e2e -timeout 16m -p 2 -parallel 64 $(GOTEST_FLAGS) ./test/harness/... ./test/e2e/...

# The small benchmark runs only what its tests assert (test/bench/small_test.go);
# its AppDeployment run joins the ScheduleTask run once convergence is
# measured (-parallel 2). About 9 minutes cold.
.PHONY: test-bench
test-bench: tools ## Run the benchmark at a small size (N=100) and assert what does not depend on the machine's speed.
	@echo "=== layer: small benchmark (kwok cluster)"
	$(LAYER) bench $(call gotestsum_run,bench) -count=1 -tags e2e -timeout 20m -parallel 2 $(GOTEST_FLAGS) ./test/bench/...

# Flags for the fault tests; `make test` passes -short for the smaller size
# (about 3 minutes, CHAOS_TIMEOUT=10m).
CHAOS_FLAGS ?=
CHAOS_TIMEOUT ?= 40m

.PHONY: test-chaos
test-chaos: tools ## Run the fault tests at full size: SIGKILLed managers, leader failover, API server restart (kwok cluster).
	@echo "=== layer: fault tests $(CHAOS_FLAGS) (kwok cluster)"
	$(LAYER) chaos $(call gotestsum_run,chaos) -count=1 -tags e2e -timeout $(CHAOS_TIMEOUT) $(CHAOS_FLAGS) $(GOTEST_FLAGS) ./test/chaos/...

.PHONY: test-summary
test-summary: ## Print each layer's time and result from the last make test, and for a failed layer its failed tests with their last lines.
	@go run ./hack/testsummary -dir "$(TEST_REPORT_DIR)"

.PHONY: test-leftovers
test-leftovers: ## Fail when a test layer left a kwok cluster, a process or a temporary folder behind.
	@hack/leftovers.sh

# A layer interrupted midway must leave nothing behind: this interrupts the
# e2e layer once its clusters, manager and Prometheus run, then looks.
CLEANUP_AFTER ?= 150

.PHONY: test-cleanup
test-cleanup: tools ## Interrupt the e2e layer after CLEANUP_AFTER seconds and fail if it left a folder, a process or a kwok cluster behind.
	@echo "=== layer: cleanup of an interrupted layer (e2e stopped after $(CLEANUP_AFTER) s)"
	@hack/test-cleanup.sh $(CLEANUP_AFTER)

# The benchmark's suites to run (comma-separated; all when empty): convergence,
# recording, memory, coldstart, idle, maxsize, curve, appdeploy, foreign,
# admission.
SUITES ?=

.PHONY: bench
bench: tools ## Measure convergence, run recording, memory, idle writes, cold start, the growth curve, the AppDeployment figures (appdeploy), foreign objects and admission latency on kwok clusters; figures in bench/results/. SUITES=convergence,appdeploy,...: only those.
	go build -o "$(LOCALBIN)/bench" ./test/bench
	BENCH_SUITES="$(SUITES)" $(LAYER) benchmark "$(LOCALBIN)/bench"

# go test fuzzes one target per run, so this finds every `func FuzzXxx` in the
# test files go list reports (build tags and module boundaries respected) and
# runs them in turn. Plain `go test` (make test-unit) replays their seed
# corpora in testdata/fuzz/; new finds the fuzzer keeps in the build cache.
.PHONY: fuzz
fuzz: ## Run every fuzz target (func FuzzXxx in a _test.go file) for FUZZTIME each, one after another.
	@go list -f '{{range .TestGoFiles}}{{$$.ImportPath}} {{$$.Dir}}/{{.}}{{"\n"}}{{end}}{{range .XTestGoFiles}}{{$$.ImportPath}} {{$$.Dir}}/{{.}}{{"\n"}}{{end}}' ./... | \
	while read -r pkg file; do \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$file"); do \
			echo "=== fuzz: $$target in $$pkg for $(FUZZTIME)"; \
			go test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -timeout 1h $(GOTEST_FLAGS) "$$pkg"; \
		done; \
	done

##@ Build

.PHONY: build
build: manifests generate ## Build the manager binary.
	go build -o bin/manager ./cmd

.PHONY: install-plugin
install-plugin: ## Install the kubectl plugins (kubectl-stask, kubectl-appdeploy) into $(go env GOPATH)/bin, so `kubectl stask` and `kubectl appdeploy` work.
	go install ./cmd/kubectl-stask ./cmd/kubectl-appdeploy
	@echo "kubectl-stask and kubectl-appdeploy installed in $$(go env GOPATH)/bin; make sure that is on your PATH, then: kubectl stask --help, kubectl appdeploy --help"

.PHONY: run
# CLUSTER=current is kubebuilder's `make install run`: the CRDs go into that
# cluster and no kwok cluster is made; hack/run-dev.sh says why the webhooks
# are off.
run: $(if $(filter current,$(CLUSTER)),install,tools) manifests build ## Run the manager here against the local kwok cluster (created or reused, samples applied); CLUSTER=current: against the current kubeconfig context's cluster, webhooks off.
	@CLUSTER=$(CLUSTER) DEV_CLUSTER=$(DEV_CLUSTER) hack/run-dev.sh

.PHONY: cluster-down
cluster-down: ## Delete the local kwok development cluster.
	@hack/kwok/cluster.sh down $(DEV_CLUSTER)

# docker-build and docker-push are kubebuilder's: with a container engine
# they build the Dockerfile and push IMG. Without one, docker-build builds
# the image as `make image` does (Go alone, every platform of
# IMAGE_PLATFORMS, into the OCI layout IMAGE_LAYOUT), and docker-push pushes
# that layout to IMG without building again, so `make docker-build
# docker-push IMG=...` works on a machine with only Go.
.PHONY: docker-build
docker-build: ## Build the manager image: with docker or podman from the Dockerfile as IMG, else with Go alone into IMAGE_LAYOUT (as make image).
ifneq ($(CONTAINER_TOOL),)
	$(CONTAINER_TOOL) build -t $(IMG) .
else
	@echo "docker-build: no container engine (docker, podman); building the image with Go alone into $(IMAGE_LAYOUT), as make image does"
	go run ./hack/image $(IMAGE_FLAGS)
endif

.PHONY: docker-push
docker-push: ## Push the image docker-build built to IMG=<registry>/<repository>:<tag> (without an engine: the layout in IMAGE_LAYOUT, SBOMs beside it).
	@if [ "$(IMG)" = controller:latest ]; then echo "docker-push: set IMG=<registry>/platform-operator:<tag>" >&2; exit 1; fi
ifneq ($(CONTAINER_TOOL),)
	$(CONTAINER_TOOL) push $(IMG)
else
	@echo "docker-push: no container engine (docker, podman); pushing the image in $(IMAGE_LAYOUT) to $(IMG) with Go alone"
	go run ./hack/image -layout "$(IMAGE_LAYOUT)" -from-layout -push "$(IMG)"
endif

# The manager image `make image` builds with Go alone (hack/image): where the
# OCI image layout goes, the platforms, and the version, commit and commit
# time it is labelled with. The commit time is every time stamp in the
# image, so two builds of one commit are the same image.
IMAGE_LAYOUT ?= dist/image
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_FLAGS = -layout "$(IMAGE_LAYOUT)" -platforms "$(IMAGE_PLATFORMS)" -version "$(IMAGE_VERSION)" \
	-revision "$(IMAGE_REVISION)" -created "$(SOURCE_DATE_EPOCH)"

.PHONY: image
image: ## Build the manager image (linux/amd64 and linux/arm64, non-root, no shell, SBOM inside) with Go alone into the OCI layout dist/image; prints its digest.
	go run ./hack/image $(IMAGE_FLAGS)

.PHONY: image-push
image-push: ## Build the manager image and push it to IMG=<registry>/<repository>:<tag>, its SBOMs as OCI referrers beside it (credentials: docker config, credential helpers).
	@if [ "$(IMG)" = controller:latest ]; then echo "image-push: set IMG=<registry>/platform-operator:<tag>" >&2; exit 1; fi
	go run ./hack/image $(IMAGE_FLAGS) -push "$(IMG)"

.PHONY: build-installer
build-installer: manifests generate $(KUBECTL) ## Write a single install manifest (CRDs and deployment) to dist/install.yaml, config/deploy/install.yaml with image IMG.
	mkdir -p dist
	"$(KUBECTL)" kustomize config/default | go run ./hack/gendeploy -in /dev/stdin -image "$(IMG)" -out dist/install.yaml

##@ Deployment (to the cluster of your current kubeconfig)

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests $(KUBECTL) ## Install the CRDs into the cluster of the current kubeconfig.
	"$(KUBECTL)" apply --server-side -k config/crd

.PHONY: uninstall
uninstall: manifests $(KUBECTL) ## Remove the CRDs (and so every ScheduleTask and TaskRun) from the cluster.
	"$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -k config/crd

.PHONY: deploy
deploy: manifests $(KUBECTL) ## Deploy the operator (image IMG) to the cluster of the current kubeconfig.
	"$(KUBECTL)" kustomize config/default | sed 's|image: controller:latest|image: $(IMG)|' | "$(KUBECTL)" apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUBECTL) ## Remove the operator from the cluster of the current kubeconfig.
	"$(KUBECTL)" delete --ignore-not-found=$(ignore-not-found) -k config/default

##@ OLM

.PHONY: bundle
bundle: manifests $(KUBECTL) $(BUNDLE_TOOL) ## Write the OLM bundle (bundle/: CSV, CRDs, metadata, bundle.Dockerfile) from config/default, config/samples and config/manifests for image IMG, then validate it.
	"$(BUNDLE_TOOL)" generate -kubectl "$(KUBECTL)" -image "$(IMG)" -out bundle
	"$(BUNDLE_TOOL)" validate bundle

##@ Tools


# The tools are built from hack/tools/go.mod, a module of its own that the
# operator never imports. One `go build` builds them all so the linker runs in
# parallel; the stamp makes `make tools` a no-op once they are there.
TOOLS_STAMP := $(LOCALBIN)/.tools-stamp
TOOLS_PKGS := \
	k8s.io/kubernetes/cmd/kube-apiserver \
	k8s.io/kubernetes/cmd/kube-controller-manager \
	k8s.io/kubernetes/cmd/kube-scheduler \
	k8s.io/kubernetes/cmd/kubectl \
	./etcd \
	sigs.k8s.io/kwok/cmd/kwok \
	sigs.k8s.io/kwok/cmd/kwokctl \
	sigs.k8s.io/controller-tools/cmd/controller-gen \
	helm.sh/helm/v3/cmd/helm \
	gotest.tools/gotestsum

.PHONY: tools
tools: $(TOOLS_STAMP) $(PROMETHEUS) $(PROMTOOL) $(GOLANGCI_LINT) $(BUNDLE_TOOL) ## Build the control plane, etcd, kwok, controller-gen, helm, gotestsum, Prometheus, promtool, golangci-lint and the OLM bundle tool into bin/ (no-op when built).

$(TOOLS_STAMP): hack/tools/go.mod hack/tools/go.sum hack/tools/etcd/main.go
	@mkdir -p "$(LOCALBIN)"
	@echo "Building tools from Go modules into $(LOCALBIN) (20 to 55 minutes cold on two cores, a few minutes with a warm build cache)"
	cd hack/tools && go build -o "$(LOCALBIN)/" $(TOOLS_PKGS)
	@touch "$@"

$(CONTROLLER_GEN) $(KUBECTL) $(GOTESTSUM): $(TOOLS_STAMP)

# Prometheus, which the e2e metrics test runs against the manager, comes from
# hack/tools/prometheus, a module of its own: its dependency graph (client-go
# among it) would otherwise have to agree with the control plane's.
# remove_all_sd is Prometheus' build tag that leaves out the cloud service
# discovery providers; static and file targets remain. The binary is its own
# stamp: go build leaves an up-to-date one untouched, hence the touch.
$(PROMETHEUS): hack/tools/prometheus/go.mod hack/tools/prometheus/go.sum
	@mkdir -p "$(LOCALBIN)"
	@echo "Building Prometheus from hack/tools/prometheus into $(LOCALBIN) (a few minutes cold)"
	cd hack/tools/prometheus && go build -tags remove_all_sd -o "$@" github.com/prometheus/prometheus/cmd/prometheus
	@touch "$@"

# promtool, which checks and unit-tests the alert rules, from the same module.
$(PROMTOOL): hack/tools/prometheus/go.mod hack/tools/prometheus/go.sum
	@mkdir -p "$(LOCALBIN)"
	cd hack/tools/prometheus && go build -tags remove_all_sd -o "$@" github.com/prometheus/prometheus/cmd/promtool
	@touch "$@"

# golangci-lint v2 with kube-api-linter compiled in as a module plugin comes
# from hack/tools/lint, a module of its own (its dependencies would otherwise
# have to agree with the control plane's); no `golangci-lint custom` step. The
# binary is its own stamp: go build leaves an up-to-date one untouched, hence
# the touch.
$(GOLANGCI_LINT): hack/tools/lint/go.mod hack/tools/lint/go.sum
	@mkdir -p "$(LOCALBIN)"
	@echo "Building golangci-lint with kube-api-linter from hack/tools/lint into $(LOCALBIN) (a few minutes cold)"
	cd hack/tools/lint && go build -o "$@" sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter
	@touch "$@"

# The OLM bundle generator and validator (`make bundle`) comes from
# hack/bundle, a module of its own: the Operator Framework API's dependency
# graph would otherwise constrain the operator's. go build leaves an
# up-to-date binary untouched, hence the touch.
$(BUNDLE_TOOL): hack/bundle/go.mod hack/bundle/go.sum $(filter-out %_test.go,$(wildcard hack/bundle/*.go))
	@mkdir -p "$(LOCALBIN)"
	cd hack/bundle && go build -o "$@" .
	@touch "$@"
