#!/usr/bin/env bash
# Captures a fixture bundle from the node lab with `nodescope capture`, exactly as a
# user would capture a node. Root only (the lab uses network namespaces).
#   scripts/capture-lab-fixture.sh iptables|nftables|cilium OUTDIR
# Traffic before the capture (kube-proxy modes): 9 HTTP requests from the client pod to the
# web ClusterIP, 3 from outside to the NodePort, 4 DNS queries to kube-dns (UDP), so
# counters and conntrack entries are real. Cilium mode: the lab attaches no BPF program, so
# Service addresses are not translated; the client talks to a backend and a DNS pod
# directly (3 HTTP requests to 10.244.0.23:8080, 2 DNS queries to 10.244.0.2), which is what
# conntrack shows on a node whose socket LB translated at connect(). The LB maps are read
# from the lab's own bpffs (`--bpf-root`). Files of OUTDIR other than the bundle's own
# (a README.md with the provenance) are kept.
set -euo pipefail
mode=${1:?mode: iptables|nftables|cilium}
out=${2:?output directory}
cd "$(dirname "$0")/.."
npx tsc -p . >/dev/null || echo "warning: tsc reported type errors; using what it emitted" >&2
lab() { node dist/test/lab/cli.js "$@"; }
lab down >/dev/null 2>&1 || true
lab up "$mode"
trap 'lab down >/dev/null 2>&1 || true' EXIT
extra=()
if [ "$mode" = cilium ]; then
  lab traffic http http://10.244.0.23:8080/ -n 3 --from client
  for i in 1 2; do lab traffic dns web.default.svc.cluster.local --server 10.244.0.2 --from client >/dev/null; done
  # The lab translates no ClusterIP: record the DNS answers from the first CoreDNS pod.
  extra=(--bpf-root /run/nodescope-lab/ns-/bpffs/tc/globals --dns-server 10.244.0.2)
  note="node lab (cilium mode: CILIUM_* chains, LB maps pinned under /run/nodescope-lab/ns-/bpffs/tc/globals, no cilium-agent), captured by scripts/capture-lab-fixture.sh: 3 HTTP requests client→10.244.0.23:8080, 2 DNS queries client→10.244.0.2:53/udp (pod to pod: the lab translates no Service address)"
else
  lab traffic http http://10.96.12.34/ -n 9 --from client
  lab traffic http http://192.168.49.2:30080/ -n 3 --from outside
  for i in 1 2 3 4; do lab traffic dns web.default.svc.cluster.local --from client >/dev/null; done
  note="node lab ($mode mode), captured by scripts/capture-lab-fixture.sh: 9 HTTP requests client→10.96.12.34:80, 3 outside→192.168.49.2:30080, 4 DNS queries client→10.96.0.10:53/udp"
fi
node dist/src/cli.js capture --netns ns-node --api-file /run/nodescope-lab/ns-/api-objects.json "${extra[@]}" -o "$out" --force --note "$note"
