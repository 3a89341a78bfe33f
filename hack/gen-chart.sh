#!/usr/bin/env bash
# gen-chart.sh writes the generated parts of the Helm chart from the same
# kustomize install `make deploy` uses, so the chart and config/default never
# drift: the CRDs into charts/platform-operator/crds/, and RBAC, Services and
# webhook configurations into templates/generated.yaml with the namespace
# templated. The Deployment, the certificate objects and the ServiceMonitor
# are written by hand in templates/, driven by values.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
chart=charts/platform-operator
rendered=$(bin/kubectl kustomize config/default)

go run ./hack/splitmanifests -in <(echo "$rendered") \
	-crds "$chart/crds" \
	-out "$chart/templates/generated.yaml" \
	-skip Namespace,Deployment,Secret,PodDisruptionBudget \
	-namespace platform-operator-system
