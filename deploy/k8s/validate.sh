#!/usr/bin/env bash
# Validates every Kubernetes manifest in deploy/k8s offline and strictly (unknown fields
# are errors) with the PyPI package kubernetes-validate, which bundles the API schemas:
# no cluster and no network at validation time. It is installed, pinned, into a venv
# (default ~/.cache/gops-k8s-validate, or $GOPS_K8S_VENV) on first use.
# kustomization.yaml is not a Kubernetes object: it is checked to list files that exist.
#   deploy/k8s/validate.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# the schemas checked against: the oldest Kubernetes these files claim to support and
# the newest the pinned package bundles
K8S_VERSIONS=${GOPS_K8S_VERSIONS:-1.31.0 1.34.0}
PACKAGE=kubernetes-validate==1.34.1
venv=${GOPS_K8S_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gops-k8s-validate}

if ! "$venv/bin/kubernetes-validate" --version 2>/dev/null | grep -q "${PACKAGE#*==}"; then
    if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null ||
                { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null; }
        else
            echo "python3 with venv is required (Debian: apt-get install python3-venv)" >&2
            exit 1
        fi
    fi
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "$PACKAGE"
fi

manifests=()
for f in "$here"/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] || manifests+=("$f")
done
for version in $K8S_VERSIONS; do
    echo "kubernetes-validate --strict -k $version: ${#manifests[@]} files"
    "$venv/bin/kubernetes-validate" --strict --kubernetes-version "$version" "${manifests[@]}"
done

# every resource kustomization.yaml names exists
sed -n '/^resources:/,/^[a-z]/p' "$here/kustomization.yaml" | sed -n 's/^  - //p' | while read -r f; do
    [ -f "$here/$f" ] || { echo "kustomization.yaml names $f, which does not exist" >&2; exit 1; }
done
echo "k8s manifests valid"
