#!/usr/bin/env bash
# Checks compose.yaml without a Docker engine: `docker compose config` (Compose v2) or
# `docker-compose config` (Compose v1, Debian's docker-compose package) parse it against
# the Compose schema and interpolate the variables, with a throwaway token file; if
# neither exists, a YAML parse with python3 (PyYAML) is the fallback.
#   deploy/docker/check.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
token=$(mktemp)
trap 'rm -f "$token"' EXIT
echo example-token >"$token"
export GOPS_TOKEN_FILE=$token

if docker compose version >/dev/null 2>&1; then
    docker compose -f "$here/compose.yaml" config --quiet
    echo "compose.yaml valid (docker compose config)"
elif command -v docker-compose >/dev/null; then
    docker-compose -f "$here/compose.yaml" config --quiet
    echo "compose.yaml valid (docker-compose config, $(docker-compose version --short))"
else
    python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert {"coordinator", "worker"} <= set(d["services"])' \
        "$here/compose.yaml"
    echo "compose.yaml parses as YAML (no docker compose here to check it against the schema)"
fi
