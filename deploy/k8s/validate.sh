#!/usr/bin/env bash
# Validates every Kubernetes manifest in deploy/k8s offline and strictly (unknown fields
# are errors) with the PyPI package kubernetes-validate, which bundles the API schemas:
# no cluster and no network at validation time. It is installed, pinned, into a venv
# (default ~/.cache/gops-k8s-validate, or $GOPS_K8S_VENV) on first use.
# kustomization.yaml is not a Kubernetes object: it is checked to list files that exist,
# and, where kubectl (or kustomize) is installed, built on a copy of this folder with a
# throwaway token and its output validated too. No Secret is committed: the token file
# must be ignored by git and no manifest may be a Secret.
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

# the token stays out of git: it is made by the user and turned into a Secret by
# kustomize's secretGenerator
if grep -l '^kind: Secret' "${manifests[@]}" >&2; then
    echo "a manifest above is a Secret: the token must come from the secretGenerator" >&2
    exit 1
fi
if git -C "$here" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$here" check-ignore -q token ||
        { echo "deploy/k8s/token is not ignored by git (deploy/k8s/.gitignore)" >&2; exit 1; }
    if [ -n "$(git -C "$here" ls-files token)" ]; then
        echo "deploy/k8s/token is committed: remove it from git and make a new token" >&2
        exit 1
    fi
fi
# every Secret the manifests mount is the generated one
for name in $(sed -n 's/^ *secretName: *//p' "${manifests[@]}" | sort -u); do
    [ "$name" = gops-token ] || { echo "a manifest mounts Secret $name; kustomize makes gops-token" >&2; exit 1; }
done

# what kubectl apply -k would send, built from a copy with a throwaway token (the real
# token, if present, is neither read nor copied)
if command -v kubectl >/dev/null; then
    build=(kubectl kustomize)
elif command -v kustomize >/dev/null; then
    build=(kustomize build)
else
    build=()
    echo "neither kubectl nor kustomize found: kustomization.yaml not built (SKIPPED)" >&2
fi
if [ ${#build[@]} -gt 0 ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    mkdir "$work/k8s"
    cp "$here"/*.yaml "$work/k8s/"
    head -c 32 /dev/urandom | base64 >"$work/k8s/token"
    "${build[@]}" "$work/k8s" >"$work/built.yaml"
    grep -q '^  name: gops-token$' "$work/built.yaml" ||
        { echo "the kustomize output has no Secret gops-token" >&2; exit 1; }
    for version in $K8S_VERSIONS; do
        echo "kubernetes-validate --strict -k $version: the output of ${build[*]}"
        "$venv/bin/kubernetes-validate" --strict --kubernetes-version "$version" "$work/built.yaml"
    done
fi
echo "k8s manifests valid"
