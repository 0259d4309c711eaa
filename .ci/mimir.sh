#!/usr/bin/env bash
# Builds the Grafana Mimir that the end-to-end tests run (it/MimirProcess) into $(go env GOPATH)/bin
# when no mimir is there or on the PATH yet; a later run reuses it. Mimir publishes no module version
# of its main branch and its repository is too large to clone here, so the pinned pseudo-version is
# fetched through the Go module proxy (`go mod download`, which leaves vendor/ out), copied out of the
# read-only module cache and built as the main module, so that its `replace` lines apply. Takes
# several minutes on 2 cores.
set -euo pipefail

# main of 2026-04-23, VERSION 3.0.5.
MIMIR_MODULE_VERSION=v1.3.1-0.20260423142704-aced80d74930
GO=$(command -v go || echo /usr/local/go/bin/go)
gobin=$("$GO" env GOPATH)/bin

if command -v mimir >/dev/null 2>&1 || [ -x "$gobin/mimir" ]; then
  exit 0
fi
started=$SECONDS
src=$("$GO" mod download -json "github.com/grafana/mimir@$MIMIR_MODULE_VERSION" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src" "$work/mimir"
chmod -R u+w "$work/mimir"
mkdir -p "$gobin"
(cd "$work/mimir" && GOFLAGS=-mod=mod "$GO" build -o "$gobin/mimir.partial" ./cmd/mimir)
mv "$gobin/mimir.partial" "$gobin/mimir"
echo "built mimir $MIMIR_MODULE_VERSION into $gobin in $((SECONDS - started)) s"
