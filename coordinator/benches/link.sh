#!/bin/bash
# A coordinator and one worker over a slow link: the two in network namespaces of their
# own, joined by a veth pair shaped on both ends by tc's token bucket (tbf), solving one
# game. Each binary given runs in turn, ROUNDS times, so builds are compared on the same
# machine in one sitting; prints each run's wall time and a digest of the layer checksums.
# Needs root (ip netns, tc) and no other run on the machine.
#
#   bash coordinator/benches/link.sh N RATE THREADS ROUNDS BINARY...
#   bash coordinator/benches/link.sh 12 125mbit 2 2 /tmp/gops-before target/release/gops
set -euo pipefail
if [ $# -lt 5 ]; then
    sed -n '2,9p' "$0"
    exit 2
fi
N=$1 RATE=$2 THREADS=$3 ROUNDS=$4
shift 4
PORT=47222

cleanup() {
    ip netns del gops-link-c 2>/dev/null || true
    ip netns del gops-link-w 2>/dev/null || true
}
trap cleanup EXIT

run_once() {
    local bin=$1
    cleanup
    ip netns add gops-link-c
    ip netns add gops-link-w
    ip -n gops-link-c link add vc type veth peer name vw netns gops-link-w
    ip -n gops-link-c addr add 10.99.0.1/24 dev vc
    ip -n gops-link-w addr add 10.99.0.2/24 dev vw
    for ns in gops-link-c gops-link-w; do ip -n $ns link set lo up; done
    ip -n gops-link-c link set vc up
    ip -n gops-link-w link set vw up
    ip netns exec gops-link-c tc qdisc add dev vc root tbf rate "$RATE" burst 256kb latency 100ms
    ip netns exec gops-link-w tc qdisc add dev vw root tbf rate "$RATE" burst 256kb latency 100ms
    local dir
    dir=$(mktemp -d)
    local start end
    start=$(date +%s.%N)
    ip netns exec gops-link-c "$bin" coordinator --n "$N" --db "$dir/db" \
        --listen 10.99.0.1:$PORT --insecure --exit-when-done --log warn 2> "$dir/coordinator.log" &
    local coordinator=$!
    ip netns exec gops-link-w "$bin" worker --coordinator http://10.99.0.1:$PORT \
        --threads "$THREADS" --log warn 2> "$dir/worker.log"
    wait $coordinator
    end=$(date +%s.%N)
    # one digest of every layer's checksum: equal digests, equal values
    printf '%s: N = %s over %s, %s threads: %.1f s wall, checksums digest %s\n' "$bin" "$N" \
        "$RATE" "$THREADS" "$(echo "$end - $start" | bc)" \
        "$("$bin" status --db "$dir/db" --json | grep -o '"checksum":"[0-9a-f]*"' | sha256sum | cut -c1-16)"
    rm -rf "$dir"
}

for _ in $(seq "$ROUNDS"); do
    for bin in "$@"; do
        run_once "$bin"
    done
done
