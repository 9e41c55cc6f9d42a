#!/usr/bin/env bash
# End-to-end test of deploy/slurm/gops.sbatch on this one machine, as root: installs Slurm
# and munge from Debian's packages if missing, starts a private one-node cluster (its own
# munge socket, slurm.conf, ports and state under a temp dir, so a system Slurm is left
# alone), submits gops.sbatch for a small game with `sbatch --wait`, and checks that the
# job succeeded, that the db is complete with the same per-layer checksums as a
# `gops solve` of the same game, and that the export exists. Then it stops its daemons.
# Three jobs: a fresh run (whose worker must read its dependency slices from the db
# directory, GOPS_SHARED_SLICES's default); a run resuming an interrupted solve's db (over
# TLS when the binary has --tls-cert); a resubmission on the complete db.
#   deploy/slurm/test-local.sh            # N = 6, points
#   GOPS_TEST_N=7 GOPS_BIN=/path/to/gops deploy/slurm/test-local.sh
# Exit 0: every check passed.
# GOPS_TEST_KEEP=1 keeps the temp dir (logs, job outputs, dbs) and prints the job outputs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
N=${GOPS_TEST_N:-6}
OBJECTIVE=${GOPS_TEST_OBJECTIVE:-points}
CTLD_PORT=${GOPS_TEST_SLURMCTLD_PORT:-16817}
SLURMD_PORT=${GOPS_TEST_SLURMD_PORT:-16818}

log() { echo "[test-local $(date +%T)] $*"; }
fail() { echo "[test-local] FAILED: $*" >&2; exit 1; }
loud() { printf '\n[test-local] !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n[test-local] !!! %s\n[test-local] !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n' "$*" >&2; }

[ "$(id -u)" = 0 ] || fail "run as root (it installs packages and starts slurmctld, slurmd and munged)"
start=$(date +%s)

# --- the gops binary ----------------------------------------------------------------
GOPS=${GOPS_BIN:-$repo/target/release/gops}
if [ ! -x "$GOPS" ]; then
    log "building $GOPS"
    (cd "$repo" && cargo build --release --bin gops)
fi
GOPS=$(cd "$(dirname "$GOPS")" && pwd)/$(basename "$GOPS")

# --- Slurm and munge from Debian ------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    log "installing slurmctld slurmd slurm-client munge (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi
log "packages ready after $(($(date +%s) - start)) s"

# --- a private one-node cluster -----------------------------------------------------
WORK=$(mktemp -d /tmp/gops-slurm-test.XXXXXX)
chmod 755 "$WORK"
mkdir -p "$WORK/munge" "$WORK/etc" "$WORK/ctld" "$WORK/slurmd" "$WORK/jobs"
chmod 700 "$WORK/munge"
cleanup() {
    rc=$?
    # jobs still queued or running (after a failure) go first: this cluster holds only ours
    if [ -s "$WORK/slurmctld.pid" ] && [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
        squeue -h -o %i | xargs -r scancel
        for _ in $(seq 1 30); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 1; done
    fi
    for pidfile in "$WORK/slurmd.pid" "$WORK/slurmctld.pid" "$WORK/munge/munged.pid"; do
        if [ -s "$pidfile" ]; then
            pid=$(cat "$pidfile")
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
    done
    if [ "$rc" != 0 ]; then
        for f in "$WORK"/slurmctld.log "$WORK"/slurmd.log "$WORK"/munge/munged.log "$WORK"/jobs/*.out; do
            [ -f "$f" ] || continue
            echo "----- $f (last 40 lines)" >&2
            tail -n 40 "$f" >&2
        done
        echo "[test-local] kept $WORK for inspection" >&2
    elif [ "${GOPS_TEST_KEEP:-0}" = 1 ]; then
        cat "$WORK"/jobs/*.out
        echo "[test-local] kept $WORK for inspection" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

head -c 1024 /dev/urandom >"$WORK/munge/munge.key"
chmod 600 "$WORK/munge/munge.key"
MUNGE_SOCKET=$WORK/munge/munge.socket.2
munged --key-file="$WORK/munge/munge.key" --socket="$MUNGE_SOCKET" \
    --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/munge/munged.log" \
    --seed-file="$WORK/munge/munged.seed" --force
munge --socket="$MUNGE_SOCKET" -n | unmunge --socket="$MUNGE_SOCKET" >/dev/null ||
    fail "munge does not work"

HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(awk '/^MemTotal:/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
export SLURM_CONF=$WORK/etc/slurm.conf
cat >"$SLURM_CONF" <<EOF
# one-node test cluster written by deploy/slurm/test-local.sh
ClusterName=gopstest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$WORK/ctld
SlurmdSpoolDir=$WORK/slurmd
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -c -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 60); do
    state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.5
done
[ "$state" = idle ] || fail "node $HOST is '$state', not idle"
log "one-node cluster up ($(sinfo --version)): $HOST, $CPUS CPUs, ${MEM} MB"

# --- the reference: gops solve in one process ----------------------------------------
"$GOPS" --log warn solve --n "$N" --objective "$OBJECTIVE" --db "$WORK/reference-db" --no-first-moves >/dev/null
"$GOPS" --log error status --db "$WORK/reference-db" --json >"$WORK/reference.json"
checksums() { grep -o '"checksum":"[0-9a-f]*"' "$1"; }
[ "$(checksums "$WORK/reference.json" | wc -l)" = "$N" ] || fail "the reference solve has no checksum per layer"

# --- export present? ------------------------------------------------------------------
if "$GOPS" export --help >/dev/null 2>&1; then
    FORMAT=parquet
else
    loud "'gops export --help' FAILS: this binary has no export; the export check is SKIPPED"
    FORMAT=none
fi

# coordinator name: the node name when it resolves, else the loopback address
if getent hosts "$HOST" >/dev/null; then COORD_HOST=$HOST; else COORD_HOST=127.0.0.1; fi

# runs gops.sbatch as job NAME (TLS 0 or 1, the db DB) and checks everything about it
run_job() {
    local name=$1 tls=$2 db=$3 job_dir=$WORK/jobs/$1 jobid rc
    log "job '$name': sbatch --wait gops.sbatch (N=$N $OBJECTIVE, GOPS_TLS=$tls, db $db)"
    rc=0
    jobid=$(GOPS_N=$N GOPS_OBJECTIVE=$OBJECTIVE GOPS_BIN=$GOPS GOPS_JOB_DIR=$job_dir GOPS_DB=$db \
        GOPS_EXPORT_FORMAT=$FORMAT GOPS_TLS=$tls GOPS_COORDINATOR_HOST=$COORD_HOST \
        GOPS_GRACE_SECS=30 GOPS_LOG=info \
        timeout 600 sbatch --parsable --wait --nodes=1 --chdir="$WORK/jobs" \
        --output="$WORK/jobs/$name-%j.out" "$here/gops.sbatch") || rc=$?
    jobid=${jobid%%;*}
    [ "$rc" = 0 ] || fail "job '$name' ($jobid) failed: sbatch --wait returned $rc"
    scontrol show job "$jobid" | grep -q 'JobState=COMPLETED' || fail "job $jobid is not COMPLETED"
    "$GOPS" --log error status --db "$db" --json >"$WORK/$name.json"
    [ "$(grep -o '"complete":[a-z]*' "$WORK/$name.json" | head -n 1)" = '"complete":true' ] ||
        fail "job '$name': the db is not complete"
    grep -q "\"n\":$N," "$WORK/$name.json" || fail "job '$name': the db's N is not $N"
    grep -q "\"objective\":\"$OBJECTIVE\"" "$WORK/$name.json" || fail "job '$name': wrong objective"
    diff <(checksums "$WORK/reference.json") <(checksums "$WORK/$name.json") >&2 ||
        fail "job '$name': per-layer checksums differ from gops solve"
    [ "$(stat -c %a "$job_dir/token")" = 600 ] || fail "job '$name': the token is not mode 600"
    if [ "$FORMAT" != none ]; then
        local out=$job_dir/gops-n$N-$OBJECTIVE.$FORMAT
        [ -s "$out" ] || fail "job '$name': no export at $out"
        log "job '$name': export $out ($(stat -c %s "$out") bytes)"
    fi
    log "job '$name' ($jobid): COMPLETED, db complete, $N layer checksums equal to gops solve"
}

# 1. a fresh run
run_job plain 0 "$WORK/jobs/plain/db"
# its worker read the slices it depends on from the shared db directory, fetching none
if "$GOPS" worker --help 2>/dev/null | grep -q -- --slices-dir; then
    done_line=$(grep -h "worker done" "$WORK"/jobs/plain-*.out | tail -n 1)
    read_count=$(grep -o 'slices_read_from_dir=[0-9]*' <<<"$done_line" | cut -d= -f2)
    fetched=$(grep -o 'slices_fetched=[0-9]*' <<<"$done_line" | cut -d= -f2)
    { [ "${read_count:-0}" -gt 0 ] && [ "$fetched" = 0 ]; } ||
        fail "job 'plain': the worker did not read its slices from the db directory: $done_line"
    log "job 'plain': $read_count dependency slices read from the db directory, none fetched"
fi

# 2. a resumed run: the db of an interrupted solve (over TLS when the binary has it)
tls=0
if "$GOPS" coordinator --help 2>/dev/null | grep -q -- --tls-cert; then
    tls=1
else
    loud "this binary has no --tls-cert: the TLS job is SKIPPED (job 'resume' runs plain)"
fi
partial=$WORK/jobs/partial-db
rc=0
"$GOPS" --log error solve --n "$N" --objective "$OBJECTIVE" --db "$partial" --no-first-moves \
    --stop-after-slices 20 >/dev/null 2>&1 || rc=$?
if [ "$rc" = 0 ] || [ "$rc" = 130 ]; then
    [ "$("$GOPS" --log error status --db "$partial" --json | grep -o '"complete":[a-z]*' | head -n 1)" = '"complete":false' ] ||
        fail "the interrupted solve's db is not incomplete"
    run_job resume "$tls" "$partial"
else
    loud "gops solve --stop-after-slices failed ($rc): no partial db; job 'resume' starts from scratch"
    run_job resume "$tls" "$WORK/jobs/resume/db"
fi

# 3. the same job again on a complete db: the coordinator stops at once
run_job again 0 "$WORK/jobs/plain/db"

log "PASSED in $(($(date +%s) - start)) s"
