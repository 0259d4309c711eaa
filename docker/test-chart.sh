#!/usr/bin/env bash
# Tests the Helm chart (docker/helm/test_chart.py): helm lint, helm template of every value set in
# docker/helm/prw-relay/ci/ validated strictly against Kubernetes 1.25 and 1.37 schemas, and what each
# renders. Installs what is missing: helm v3.22.0 (built with `go install`, ~3 min, kept in
# $(go env GOPATH)/bin) and kubernetes-validate 1.37.0 (pip). Needs relay-server/target/prw-relay.jar
# (the relay's configuration keys, from --help): run after `mvn package`.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.22.0
KUBERNETES_VALIDATE_VERSION=1.37.0
GO=$(command -v go || echo /usr/local/go/bin/go)

[ -f relay-server/target/prw-relay.jar ] ||
  { echo "relay-server/target/prw-relay.jar is missing: run 'mvn package -DskipTests' first" >&2; exit 1; }

if ! command -v helm >/dev/null 2>&1; then
  gobin=$("$GO" env GOPATH)/bin
  export PATH=$PATH:$gobin
  if ! command -v helm >/dev/null 2>&1; then
    started=$SECONDS
    "$GO" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
    echo "built helm $HELM_VERSION into $gobin in $((SECONDS - started)) s"
  fi
fi
if ! python3 -c 'import kubernetes_validate, yaml' 2>/dev/null; then
  python3 -m pip install -q "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi

# helm prints a warning for the chart's link to docker/alerts.yml on every load; that is intended.
python3 docker/helm/test_chart.py 2> >(grep -v 'found symbolic link in path' >&2)
