#!/usr/bin/env bash
# Checks the systemd units offline: `systemd-analyze verify` (syntax, directives, the
# binary exists) on copies whose ExecStart points at this tree's gops binary, and
# `systemd-analyze security --offline` (the sandbox's exposure score, must be "OK" or
# better). Needs systemd-analyze (Debian: systemd), not a running systemd.
#   deploy/systemd/verify.sh [path/to/gops]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
gops=${1:-$here/../../target/release/gops}
gops=$(cd "$(dirname "$gops")" && pwd)/$(basename "$gops")
[ -x "$gops" ] || { echo "no gops binary at $gops (cargo build --release)" >&2; exit 1; }
command -v systemd-analyze >/dev/null || { echo "systemd-analyze is required (apt-get install systemd)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for unit in gops-coordinator.service gops-worker.service; do
    sed "s|/usr/local/bin/gops|$gops|" "$here/$unit" >"$tmp/$unit"
done
cd "$tmp"
# verify exits 0 on unknown keys and bad values: any message at all is a failure
messages=$(systemd-analyze verify ./gops-coordinator.service ./gops-worker.service 2>&1) || true
if [ -n "$messages" ]; then
    echo "$messages" >&2
    echo "systemd-analyze verify complained" >&2
    exit 1
fi
for unit in gops-coordinator.service gops-worker.service; do
    verdict=$(systemd-analyze security --offline=true "./$unit" 2>&1 | grep 'Overall exposure level')
    echo "$verdict"
    case $verdict in
        *OK* | *SAFE*) ;;
        *) echo "$unit: exposure not OK" >&2; exit 1 ;;
    esac
done
echo "systemd units verified"
