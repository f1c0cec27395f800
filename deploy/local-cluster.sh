#!/usr/bin/env bash
# A local Tidewire cluster in one command: 3 nats-server processes (one JetStream cluster) and
# 2 Tidewire nodes on 127.0.0.1, data under one directory, Ctrl-C stops them all. A process
# killed meanwhile (a failover drill) is reported; the rest keep running. A node that exits with
# code 3 (its order history diverged from the order stream's) is started again, as a supervisor
# would (docs/operations.md, "A node that diverged").
#
#   deploy/local-cluster.sh [--dir DIR] [--nats-port P] [--port P] [--nodes N] [--fresh] [-- node flags]
#   npm run cluster -- [same flags]       (builds what is stale first)
#
# --dir DIR      data directory (NATS stores, journals, audit logs, logs, the token secret);
#                default .data/cluster of this checkout. Kept between runs: a restart resumes.
# --nats-port P  first NATS client port; the servers take P, P+1, P+2, their routes P+1000..,
#                their monitors P+4000.. (default 4222: 4222-4224, 5222-5224, 8222-8224)
# --port P       HTTP/WebSocket port of the first Tidewire node; node i takes P+i (default 8081)
# --nodes N      Tidewire nodes (default 2)
# --fresh        delete DIR first
# -- flags       passed to every Tidewire node (e.g. -- --config bench-users.json --orders-per-sec 0)
#
# Needs nats-server v2.12.15 on the PATH (go install github.com/nats-io/nats-server/v2@v2.12.15;
# one older than 2.12.15 or 2.14.0 and later starts with a warning: docs/operations.md, "NATS")
# and a built server
# (npm run build). Node tw1 runs the demo feed; the others none (they see its records through
# the cluster). Logs: DIR/logs/*.log; each node's pid: DIR/<node>.pid. docs/operations.md,
# "Running a cluster", explains each part.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.data/cluster"
nats_port=4222
port=8081
nodes=2
fresh=0
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --nats-port) nats_port="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "local-cluster: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in nats_port port nodes; do
  if ! [[ "${!v}" =~ ^[0-9]+$ ]]; then echo "local-cluster: --${v//_/-} must be a number, got ${!v}" >&2; exit 2; fi
done
if [ "$nodes" -lt 1 ] || [ "$nodes" -gt 9 ]; then echo "local-cluster: --nodes must be 1..9, got $nodes" >&2; exit 2; fi

nats_install="go install github.com/nats-io/nats-server/v2@v2.12.15, then put \$(go env GOPATH)/bin first on the PATH"
command -v nats-server >/dev/null 2>&1 || { echo "local-cluster: nats-server is not on the PATH ($nats_install)" >&2; exit 1; }
# before 2.12 a stream's replicas can hold different messages at one seq after a lost quorum;
# 2.14.0 and later (at least to 2.15.3) stop a stream for good when they refuse a publish on
# Nats-Expected-Last-Msg-Id, the fence of the order stream
nats_version="$(nats-server --version 2>/dev/null || true)"
if ! [[ "$nats_version" =~ ^nats-server:\ v([0-9]+)\.([0-9]+)\.([0-9]+) ]]; then
  echo "local-cluster: warning: ${nats_version:-nats-server --version said nothing}: not a version this script can read ($nats_install)" >&2
else
  nats_number=$(( BASH_REMATCH[1] * 1000000 + BASH_REMATCH[2] * 1000 + BASH_REMATCH[3] ))
  if (( nats_number < 2012015 )); then
    echo "local-cluster: warning: $nats_version: older than the pinned v2.12.15 (before 2.12 a stream can desync after a lost quorum; $nats_install)" >&2
  elif (( nats_number >= 2014000 )); then
    echo "local-cluster: warning: $nats_version: 2.14.0 or later, the order stream stops for good on a refused fence ($nats_install)" >&2
  fi
fi
main="$root/apps/server/dist/main.js"
[ -f "$main" ] || { echo "local-cluster: $main is missing: run npm run build (or npm run cluster)" >&2; exit 1; }

[ "$fresh" = 1 ] && rm -rf "$dir"
mkdir -p "$dir/logs"
dir="$(cd "$dir" && pwd)"

pids=()
names=()
stop_all() {
  trap - INT TERM EXIT
  echo
  echo "[cluster] stopping ${#pids[@]} processes"
  # Tidewire nodes first (graceful SIGTERM), then NATS
  for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "[cluster] stopped; data kept in $dir"
}
trap 'stop_all; exit 130' INT TERM
trap stop_all EXIT

# one secret for every node: a token issued by one node logs in on the others
secret="$dir/token-secret"
if [ ! -s "$secret" ]; then
  (umask 077; node -e "process.stdout.write(require('node:crypto').randomBytes(32).toString('hex') + '\n')" > "$secret")
fi

routes=""
for i in 0 1 2; do routes="$routes${routes:+, }nats-route://127.0.0.1:$((nats_port + 1000 + i))"; done
urls=""
for i in 0 1 2; do
  name="n$i"
  mkdir -p "$dir/nats/store-$i"
  cat > "$dir/nats/$name.conf" <<EOF
server_name: $name
listen: 127.0.0.1:$((nats_port + i))
http: 127.0.0.1:$((nats_port + 4000 + i))
jetstream { store_dir: "$dir/nats/store-$i" }
cluster { name: tidewire-local
 listen: 127.0.0.1:$((nats_port + 1000 + i))
 routes: [$routes] }
EOF
  nats-server -c "$dir/nats/$name.conf" >>"$dir/logs/nats-$name.log" 2>&1 &
  pids+=($!)
  names+=("nats-server $name")
  urls="$urls${urls:+,}nats://127.0.0.1:$((nats_port + i))"
done

# healthy = JetStream current on every server (bounded: 60 s)
healthy() {
  node -e "fetch('http://127.0.0.1:$1/healthz').then(r => r.json()).then(j => process.exit(j.status === 'ok' ? 0 : 1), () => process.exit(1))"
}
for i in 0 1 2; do
  for _ in $(seq 1 300); do healthy $((nats_port + 4000 + i)) && break; sleep 0.2; done
  healthy $((nats_port + 4000 + i)) || { echo "[cluster] nats-server n$i not healthy within 60 s: see $dir/logs/nats-n$i.log" >&2; exit 1; }
done
echo "[cluster] NATS up: $urls (monitor: http://127.0.0.1:$((nats_port + 4000))..$((nats_port + 4002)))"

# exit code of a node whose order history diverged from the stream's (apps/server/src/server.ts)
exit_diverged=3
# node i (1-based) as pids[slot]: started in the background, its pid in DIR/<node>.pid
start_node() {
  local i="$1" slot="$2" name="tw$1" p=$((port + $1 - 1)) demo=(--no-demo)
  [ "$i" = 1 ] && demo=(--demo)
  mkdir -p "$dir/$name"
  node "$main" --host 127.0.0.1 --port "$p" "${demo[@]}" \
    --cluster "$urls" --cluster-node "$name" --cluster-name tidewire-local \
    --token-secret-file "$secret" \
    --journal-dir "$dir/$name/journal" --audit-dir "$dir/$name/audit" "${node_flags[@]}" \
    >>"$dir/logs/$name.log" 2>&1 &
  pids[$slot]=$!
  names[$slot]="node $name"
  node_of[$slot]=$i
  echo "${pids[$slot]}" > "$dir/$name.pid"   # for failover drills: kill -9 $(cat DIR/tw1.pid)
}
node_flags=("$@")
declare -A node_of=()
servers=""
for ((i=1; i<=nodes; i++)); do
  name="tw$i"
  p=$((port + i - 1))
  start_node "$i" "${#pids[@]}"
  pid="${pids[${#pids[@]}-1]}"
  servers="$servers${servers:+,}127.0.0.1:$p"
  # wait until it listens (bounded: 60 s), or report its log if it stopped
  for _ in $(seq 1 300); do
    grep -q "Tidewire listening on" "$dir/logs/$name.log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { echo "[cluster] node $name stopped:" >&2; tail -n 20 "$dir/logs/$name.log" >&2; exit 1; }
    sleep 0.2
  done
  grep -q "Tidewire listening on" "$dir/logs/$name.log" || { echo "[cluster] node $name not listening within 60 s: see $dir/logs/$name.log" >&2; exit 1; }
  echo "[cluster] node $name: http://127.0.0.1:$p (stream ws://127.0.0.1:$p/stream)"
done

echo "[cluster] web app with failover: http://127.0.0.1:$port/?servers=$servers"
echo "[cluster] data: $dir   logs: $dir/logs   Ctrl-C stops everything"
# runs until Ctrl-C (stop_all); a process that dies (a failover drill: kill -9 $(cat DIR/tw1.pid))
# is reported, and the others keep running; a node that exits with $exit_diverged is started again
# (it rebuilds its order state from the stream)
declare -A reported=()
while true; do
  for ((i=0; i<${#pids[@]}; i++)); do
    if [ -z "${reported[$i]:-}" ] && ! kill -0 "${pids[$i]}" 2>/dev/null; then
      rc=0
      wait "${pids[$i]}" 2>/dev/null || rc=$?
      if [ -n "${node_of[$i]:-}" ] && [ "$rc" = "$exit_diverged" ]; then
        echo "[cluster] ${names[$i]} (pid ${pids[$i]}) exited $rc (its order history diverged from the stream's): starting it again" >&2
        start_node "${node_of[$i]}" "$i"
        continue
      fi
      reported[$i]=1
      echo "[cluster] ${names[$i]} (pid ${pids[$i]}) exited ($rc): see $dir/logs; the others keep running" >&2
    fi
  done
  sleep 1
done
