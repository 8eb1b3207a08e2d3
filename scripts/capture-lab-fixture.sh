#!/usr/bin/env bash
# Captures a fixture bundle from the node lab with `nodescope capture`, exactly as a
# user would capture a node. Root only (the lab uses network namespaces).
#   scripts/capture-lab-fixture.sh iptables|nftables OUTDIR
# Traffic before the capture: 9 HTTP requests from the client pod to the web ClusterIP,
# 3 from outside to the NodePort, 4 DNS queries to kube-dns (UDP), so counters and
# conntrack entries are real.
set -euo pipefail
mode=${1:?mode: iptables|nftables}
out=${2:?output directory}
cd "$(dirname "$0")/.."
npx tsc -p . >/dev/null || echo "warning: tsc reported type errors; using what it emitted" >&2
lab() { node dist/test/lab/cli.js "$@"; }
lab down >/dev/null 2>&1 || true
lab up "$mode"
trap 'lab down >/dev/null 2>&1 || true' EXIT
lab traffic http http://10.96.12.34/ -n 9 --from client
lab traffic http http://192.168.49.2:30080/ -n 3 --from outside
for i in 1 2 3 4; do lab traffic dns web.default.svc.cluster.local --from client >/dev/null; done
rm -rf "$out"
node dist/src/cli.js capture --netns ns-node --api-file /run/nodescope-lab/ns-/api-objects.json -o "$out" \
  --note "node lab ($mode mode), captured by scripts/capture-lab-fixture.sh: 9 HTTP requests client→10.96.12.34:80, 3 outside→192.168.49.2:30080, 4 DNS queries client→10.96.0.10:53/udp"
