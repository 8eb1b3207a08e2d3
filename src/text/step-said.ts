/**
 * A step of the walk says why in a key and params (issue 22 item 5): the trace engines
 * (src/trace/) record `said` on each step and verdict, and the text layer renders it in
 * the UI language from the tables of src/text/messages/step-reasons.ts. English rendered from
 * the key is the step's `reason` (`nodescope trace` output, JSON), so it never drifts.
 *
 * A param is data copied as it is (an address, a chain name, rule text), another phrase,
 * a list of them, or `{phrase}`: English words a matcher wrote (a rule's condition list,
 * `daddr 10.96.0.10 is in @service-ips`), which Japanese renders through the phrase table
 * (src/text/why.ts) — the conditions are per-match-module words, not one sentence per step.
 */
import type { Lang } from './i18n.js';

// The step tables: what each step says, one key per thing that happened, in English and Japanese.
const stepEn = {
  // rule walkers (src/trace/iptables-eval.ts, nft-eval.ts, reasons.ts)
  'rule-no-match': '{conds}',
  'rule-conditions': '{conds}',
  'and-then': '{first}; {next}',
  'no-target': '{a} (no target: counts and goes on)',
  'chain-end-policy': 'end of {chain}: policy {policy}',
  'chain-end-policy-goto': 'end of {chain} (reached by goto {via}): policy {policy}',
  'chain-end-back-to-rule': 'end of {chain}: back to {caller} rule #{n}',
  'chain-end-back-to-end': 'end of {chain}: back to the end of {caller}',
  'policy-not-captured': 'end of built-in chain {chain}: its policy is not in the capture',
  'policy-unknown': 'policy of {chain} unknown',
  'policy-drop': 'policy DROP of {table} {chain}',
  'nft-policy-drop': 'policy drop of {table} {chain}',
  'random-not-taken': 'random (probability {p} here): not taken, the walk follows branch {i} of {n} ({to})',
  'random-taken': 'branch {i} of {n}: random draw taken (probability {p} here)',
  'random-last-branch': 'branch {n} of {n}: the earlier random draws were not taken',
  'jump-to-missing-chain': 'unsupported: {how} to chain {chain}, which is not in the capture',
  'chain-missing': 'chain {chain} missing',
  'jump-loop': 'the walk entered chains more than {max} times (the last was {chain}): a jump loop',
  'too-many-steps': 'too many steps: a jump loop?',
  unsupported: 'unsupported: {what}',
  'target-not-modelled': 'unsupported: target {target} is not modelled',
  'target-unsupported': 'target {target}',
  'mark-option': 'MARK option',
  'mark-set': 'mark {from} → {to}',
  'rule-drop': '{table} {chain} rule #{n}: DROP',
  'rule-drop-comment': '{table} {chain} rule #{n} ("{comment}"): DROP',
  'reject-with': 'REJECT --reject-with {how}',
  'rule-reject': '{table} {chain} rule #{n}: REJECT with {how}{meaning}',
  'rule-reject-comment': '{table} {chain} rule #{n} ("{comment}"): REJECT with {how}{meaning}',
  'nft-reject': '{table} {chain}: {what}{meaning}',
  'nft-reject-why': '{table} {chain} ({why}): {what}{meaning}',
  'nft-drop': '{table} {chain}: drop',
  'nft-drop-why': '{table} {chain}: drop ({why})',
  'client-gets-refused': ': the client gets "connection refused" at once, not a timeout',
  'client-gets-error': ': the client gets "{error}" at once, not a timeout',
  'nat-binding': '{binding}: NAT binding set up, the rewrite is applied when the nat chain returns',
  'nat-port-range': '{target} --to-ports {ports}: a port range (the kernel picks one)',
  'nat-option-unreadable': '{target} without a readable --{option}',
  'nat-range': '{target} --{option} {value}: a range (the kernel picks one by hash)',
  'log-target': '{target} records the packet and it goes on',
  notrack: 'NOTRACK: conntrack will ignore this packet (no NAT)',
  'ct-notrack': 'CT --notrack: conntrack will ignore this packet (no NAT)',
  // kernel stations (src/trace/stations.ts)
  'ct-untracked': 'conntrack: the packet is untracked (NOTRACK in raw): no flow, no NAT',
  'ct-known-flow': 'conntrack: the packet belongs to a known flow ({dir} direction, ct state {state}): {entry}{nat}; nat chains do not run for it',
  'ct-carries-nat': '; it carries {nat}, which conntrack applies again',
  'ct-new-flow': 'conntrack: no entry has this 5-tuple, the packet starts a NEW flow{pickup}',
  'ct-tcp-loose': ' (a TCP packet without SYN is picked up mid-stream, nf_conntrack_tcp_loose=1)',
  'ct-reopen': 'conntrack: the entry of this 5-tuple is {state} (a closed connection); a SYN reopens it: conntrack deletes the old entry and the packet starts a NEW flow',
  'ct-confirm': 'conntrack: the NEW flow is confirmed and enters the conntrack table (its entry is shown with the result)',
  'word-original': 'original',
  'word-reply': 'reply',
  'word-destination': 'destination',
  'word-source': 'source',
  'word-dnat': 'DNAT',
  'word-stored-dnat': 'the stored DNAT',
  'word-output-interface': 'the output interface',
  'word-input-interface': 'the input interface',
  'masquerade-no-address': 'MASQUERADE: no address to use on {oif} (the kernel drops the packet)',
  'redirect-no-address': 'REDIRECT: {iif} has no address (the kernel drops the packet)',
  're-route': 're-route after {why} (ip_route_me_harder): {route}{oif}',
  'oif-changed': '; output interface {from} → {to}',
  'nat-skipped-untracked': 'NAT: skipped, the packet is untracked',
  'nat-chains-skipped': 'nat chains skipped ({chains}): ',
  'nat-stored': '{skipped}the flow is known, conntrack applies its stored {manip} NAT: {words}',
  'nat-none-stored': '{skipped}the flow is known and has no {manip} NAT',
  'nat-done-earlier': 'nat chains skipped: the flow already got its {manip} NAT on an earlier hook (looped back)',
  'nat-rewrite': 'NAT: {binding} rewrites the {manip}: {words}{random}{rest}',
  'nat-fully-random': ' (fully-random: the kernel picks a random source port)',
  'nat-rest-skipped': '; the remaining nat chains ({chains}) do not run',
  // routing and endings (src/trace/engine.ts, cilium.ts)
  'routing-decision': 'routing decision for {dst}: {route} → {where}',
  'output-route': 'output route for {dst}: {route} → {where}',
  'route-local-deliver': 'the destination is local: deliver to this host (INPUT)',
  'route-send-out': 'send out {dev}',
  'route-send-out-via': 'send out {dev} via {gw}',
  'route-type': 'route type {type}',
  'route-none-reject': '{route}: the kernel answers "network unreachable"{local}',
  'route-enetunreach': ' (connect() fails with ENETUNREACH)',
  'route-blackhole': 'route {route}: silently dropped',
  'route-unreachable': 'route {route}: the kernel answers "host unreachable"',
  'route-prohibit': 'route {route}: the kernel answers "administratively prohibited"',
  'route-type-not-modelled': 'route type {type} ({route}) is not modelled',
  'loop-back-lo': 'the destination {dst} is local: the packet loops back through lo (PREROUTING, INPUT)',
  'delivered-local-listening': 'delivered to a local process listening on {endpoint}',
  'delivered-local': 'delivered to a local process on {endpoint}',
  'forwarded-out': 'forwarded out {dev} to {endpoint}',
  'forwarded-out-via': 'forwarded out {dev} to {endpoint} via {gw}',
  'sent-out': 'sent out {dev} to {endpoint}',
  'sent-out-via': 'sent out {dev} to {endpoint} via {gw}',
  'out-unanswered': '{out}: not translated (no LB entry), so nothing on the way answers for a Service address: unanswered',
  'routes-not-captured-step': "unsupported: the node's routes were not captured (ip -j route show table all): the way through the hooks cannot be decided",
  'routes-not-captured': 'routes not captured',
  'no-route': 'no route to {dst}',
  'no-route-unreachable': 'no route to {dst}: network unreachable',
  'route-to': 'route to {dst}: {route}',
  'route-to-local': 'route to {dst}: {route} (local)',
  // Cilium (src/trace/cilium.ts)
  'who-node-process': 'a process on the node',
  'who-pod': 'the pod {ip}',
  'sock-lb-call': '{who} calls {call}: {prog} runs socket LB ({how})',
  'sock-pods-included': 'pods included: socketLB.hostNamespaceOnly=false',
  'sock-pods-included-assumed': 'pods included: socketLB.hostNamespaceOnly=false, assumed',
  'sock-host-namespace': 'host namespace',
  'sock-lb-disabled': 'socket LB is disabled (cilium-dbg status): host traffic to a Service is not translated at the socket',
  'sock-lb-l4-only': 'socket LB handles TCP and UDP sockets only: a {proto} packet is not translated at the socket',
  'from-container': 'the packet leaves the pod on {dev}: cil_from_container (bpf_lxc, tc ingress) looks up its destination{already}{l4}',
  'already-backend': '; the destination is already the backend {endpoint}',
  'sock-lb-not-proto': '; socket LB does not handle {proto}',
  'from-netdev': 'the packet arrives from outside on {dev}: cil_from_netdev (bpf_host, NodePort/external frontends: nodeport_lb{fam})',
  'svc-lookup': 'service lookup (lb{v}_lookup_service)',
  'svc-lookup-noport': 'service lookup (lb{v}_lookup_service; {proto} has no port: dport 0)',
  'svc-lookup-wildcard': '{dst} is an address of this node without its own frontend: NodePort wildcard lookup (sock4_wildcard_lookup)',
  'svc-lookup-per-packet': 'per-packet service lookup',
  'svc-lookup-hit': '{what}: {key} → {value}',
  'svc-lookup-hit-fe': '{what}: {key} → {value} ({frontend})',
  'svc-lookup-miss': '{what}: {key} → no entry',
  'lb-map-undecoded': '{map} holds {n} entries no known layout decodes ({why})',
  'lb-svc-unknown': 'no decoded entry for {endpoint}, but {why}: whether it is a frontend is unknown',
  'lb-svc-unknown-verdict': 'service lookup unknown: {why}',
  'lb-maglev': 'unsupported: service {id} uses Maglev; nodescope does not decode the maglev map ({read}), so the backend cannot be told',
  'lb-maglev-verdict': 'Maglev backend selection is not decoded',
  'word-read-not-decoded': 'read but not decoded',
  'word-not-read': 'not read',
  'word-unknown-state': 'unknown state',
  'lb-proxy-port': 'proxy port {port}',
  'lb-proxy-port-unknown': 'a proxy port this source does not show (listings before Cilium 1.16 omit it: cilium PR 31503)',
  'lb-l7-proxy': "service {id} {frontend} is an L7 load-balancer frontend (flag l7-load-balancer): the flow is redirected to Cilium's L7 proxy (Envoy) on this node, {port}; the proxy, not the LB map, chooses the backend",
  'lb-l7-verdict': 'redirected to the L7 proxy ({port})',
  'lb-from-service-list': 'cilium-dbg service list printed no backend states',
  'lb-from-bpf-lb-list': 'cilium-dbg bpf lb list prints no count',
  'lb-listed-slot': 'slot {slot} → {ep}{state}',
  'lb-listed-missing': 'slot {slot} → backend {id} not found',
  'lb-count-unknown':
    'service {id} {frontend}: the backend count is unknown, not zero ({from}): which of its {n} listed slots take new flows cannot be told — all of them when every backend is active, none when all are terminating. Listed: {listed}. Capture {cmd} (backend states) or the raw maps (bpftool) to decide',
  'lb-count-unknown-verdict': 'backend count of {frontend} unknown ({from})',
  'lb-no-slot': 'service {id} {frontend} has no backend slot in the listing: no backend to choose',
  'lb-count-zero': 'service {id} {frontend} has count 0: no backend to choose',
  'lb-held-terminating-one': " (its {n} slot after count hold terminating/quarantined backends: flows already in Cilium's conntrack continue to them, new flows do not — cilium PRs 25863, 31840)",
  'lb-held-terminating': " (its {n} slots after count hold terminating/quarantined backends: flows already in Cilium's conntrack continue to them, new flows do not — cilium PRs 25863, 31840)",
  'no-backend-ehostunreach-step': '{why}{held}: connect() fails with EHOSTUNREACH (socket LB, REASON_LB_NO_BACKEND); a packet reaching bpf_lxc/bpf_host instead is dropped with {drop} ({code})',
  'no-backend-ehostunreach': '{why}: connect() fails with EHOSTUNREACH',
  'no-backend-drop-step': '{why}{held}: dropped with {drop} ({code}, "Service backend not found")',
  'no-backend-drop': '{drop}: {why}',
  'lb-slots-missing': 'unsupported: service {id} says count {count} but the capture has none of its slots 1..{count}',
  'lb-slots-missing-verdict': 'backend slots missing from the capture',
  'lb-random-select':
    'random selection (lb4_select_backend_id_random): slot = 1 + random % count {count} → slot {slot}, each of the {n} active slots with probability 1/{n}: {key} → backend_id {id}{skipped}',
  'lb-skipped': '; skipped: {slots}',
  'lb-skipped-slot': 'slot {slot} → backend {id}{ep} {state} (after count {count}, in qcount: kept for existing connections only)',
  'lb-backends-not-read': 'no {map} (or older backend map) was read',
  'lb-backend-unknown': 'backend {id} cannot be looked up: {why}; whether it exists is unknown',
  'lb-backend-unknown-verdict': 'backend {id} unknown: {why}',
  'lb-backend-missing': 'backend {id} is not in {map}: dropped with DROP_NO_SERVICE ({code})',
  'lb-backend-missing-verdict': '{drop}: backend {id} not found',
  'lb-backend-lookup': 'backend lookup (lb4_lookup_backend): key {backend_id {id}} → {value}',
  'socket-lb-connect':
    'socket LB: the socket is connected to {to} instead of {from} at connect(); every packet is sent to the backend from the start (no per-packet DNAT, conntrack shows {to}); recvmsg()/getpeername() show {from} to the application ({map}, rev_nat_index {id})',
  'dnat-to-endpoint': "DNAT {from} → {to} (lb4_local → lb4_xlate); Cilium's conntrack (cilium_ct4_global) records rev_nat_index {id} for the reply",
  'rev-nat-entry': 'reverse NAT: key {rev_nat_index {id}} → {address {ip}, port {port}}: {use}',
  'rev-nat-use-socket': "on the way back the socket layer answers the frontend; the per-packet path (lb4_rev_nat) would rewrite the reply's source with this entry",
  'rev-nat-use-packet': "on the way back lb4_rev_nat rewrites the reply's source with this entry",
  'rev-nat-missing': 'reverse NAT: no entry for rev_nat_index {id}: the reply would not be rewritten',
} as const;

const stepJa: Record<keyof typeof stepEn, string> = {
  'rule-no-match': '{conds}',
  'rule-conditions': '{conds}',
  'and-then': '{first}。{next}',
  'no-target': '{a}（ターゲットなし: 数えて次へ）',
  'chain-end-policy': '{chain} の終わり: ポリシー {policy}',
  'chain-end-policy-goto': '{chain} の終わり（goto {via} で到達）: ポリシー {policy}',
  'chain-end-back-to-rule': '{chain} の終わり: {caller} のルール #{n} へ戻る',
  'chain-end-back-to-end': '{chain} の終わり: {caller} の終わりへ戻る',
  'policy-not-captured': '組み込みチェイン {chain} の終わり: そのポリシーはキャプチャにありません',
  'policy-unknown': '{chain} のポリシーは不明',
  'policy-drop': '{table} {chain} のポリシー DROP',
  'nft-policy-drop': '{table} {chain} のポリシー drop',
  'random-not-taken': '乱数（ここでの確率 {p}）: 選ばれず、分岐 {i}/{n}（{to}）をたどります',
  'random-taken': '分岐 {i}/{n}: 乱数で選ばれました（ここでの確率 {p}）',
  'random-last-branch': '分岐 {n}/{n}: それより前の乱数では選ばれませんでした',
  'jump-to-missing-chain': '未対応: チェイン {chain} への {how} ですが、そのチェインはキャプチャにありません',
  'chain-missing': 'チェイン {chain} がありません',
  'jump-loop': 'チェインに入った回数が {max} を超えました（最後は {chain}）: jump のループ',
  'too-many-steps': 'ステップが多すぎます: jump のループ？',
  unsupported: '未対応: {what}',
  'target-not-modelled': '未対応: ターゲット {target} はモデル化していません',
  'target-unsupported': 'ターゲット {target}',
  'mark-option': 'MARK のオプション',
  'mark-set': 'マーク {from} → {to}',
  'rule-drop': '{table} {chain} ルール #{n}: DROP',
  'rule-drop-comment': '{table} {chain} ルール #{n}（"{comment}"）: DROP',
  'reject-with': 'REJECT --reject-with {how}',
  'rule-reject': '{table} {chain} ルール #{n}: {how} で REJECT{meaning}',
  'rule-reject-comment': '{table} {chain} ルール #{n}（"{comment}"）: {how} で REJECT{meaning}',
  'nft-reject': '{table} {chain}: {what}{meaning}',
  'nft-reject-why': '{table} {chain}（{why}）: {what}{meaning}',
  'nft-drop': '{table} {chain}: drop',
  'nft-drop-why': '{table} {chain}: drop（{why}）',
  'client-gets-refused': ': クライアントはタイムアウトを待たず、すぐに「connection refused」を受け取ります',
  'client-gets-error': ': クライアントはタイムアウトを待たず、すぐに「{error}」を受け取ります',
  'nat-binding': '{binding}: NAT の対応を設定。書き換えは nat チェインを抜けるときに行われます',
  'nat-port-range': '{target} --to-ports {ports}: ポートの範囲（カーネルが 1 つ選ぶ）',
  'nat-option-unreadable': '{target} の --{option} が読めません',
  'nat-range': '{target} --{option} {value}: 範囲（カーネルがハッシュで 1 つ選ぶ）',
  'log-target': '{target} がパケットを記録して次へ',
  notrack: 'NOTRACK: conntrack はこのパケットを無視します（NAT なし）',
  'ct-notrack': 'CT --notrack: conntrack はこのパケットを無視します（NAT なし）',
  'ct-untracked': 'conntrack: パケットは追跡されません（raw の NOTRACK）: フローも NAT もなし',
  'ct-known-flow': 'conntrack: パケットは既知のフローに属します（{dir}方向、ct state {state}）: {entry}{nat}。nat チェインは実行されません',
  'ct-carries-nat': '。{nat} を持ち、conntrack がそれを再び適用します',
  'ct-new-flow': 'conntrack: この 5 タプルのエントリはなく、パケットは NEW のフローを始めます{pickup}',
  'ct-tcp-loose': '（SYN のない TCP パケットは途中から拾われます: nf_conntrack_tcp_loose=1）',
  'ct-reopen': 'conntrack: この 5 タプルのエントリは {state}（閉じた接続）: SYN が接続を開き直すので、conntrack は古いエントリを消し、パケットは NEW のフローを始めます',
  'ct-confirm': 'conntrack: NEW のフローが確定し、conntrack テーブルに入ります（エントリは結果とともに表示）',
  'word-original': '元の',
  'word-reply': '応答',
  'word-destination': '宛先',
  'word-source': '送信元',
  'word-dnat': 'DNAT',
  'word-stored-dnat': '保存済みの DNAT',
  'word-output-interface': '出力インタフェース',
  'word-input-interface': '入力インタフェース',
  'masquerade-no-address': 'MASQUERADE: {oif} に使えるアドレスがありません（カーネルはパケットを破棄）',
  'redirect-no-address': 'REDIRECT: {iif} にアドレスがありません（カーネルはパケットを破棄）',
  're-route': '{why} の後の経路の選び直し（ip_route_me_harder）: {route}{oif}',
  'oif-changed': '。出力インタフェース {from} → {to}',
  'nat-skipped-untracked': 'NAT: パケットは追跡されないので飛ばします',
  'nat-chains-skipped': 'nat チェインは飛ばします（{chains}）: ',
  'nat-stored': '{skipped}既知のフローなので、conntrack が保存済みの{manip} NAT を適用: {words}',
  'nat-none-stored': '{skipped}既知のフローで、{manip} NAT はありません',
  'nat-done-earlier': 'nat チェインは飛ばします: フローは前のフックで{manip} NAT を受けています（ループバック）',
  'nat-rewrite': 'NAT: {binding} が{manip}を書き換え: {words}{random}{rest}',
  'nat-fully-random': '（fully-random: 送信元ポートはカーネルが乱数で選ぶ）',
  'nat-rest-skipped': '。残りの nat チェイン（{chains}）は実行されません',
  'routing-decision': '{dst} の経路決定: {route} → {where}',
  'output-route': '{dst} への出力経路: {route} → {where}',
  'route-local-deliver': '宛先はローカル: このホストに配送（INPUT）',
  'route-send-out': '{dev} から送出',
  'route-send-out-via': '{dev} から {gw} 経由で送出',
  'route-type': '経路の種類 {type}',
  'route-none-reject': '{route}: カーネルは「network unreachable」を返します{local}',
  'route-enetunreach': '（connect() は ENETUNREACH で失敗）',
  'route-blackhole': '経路 {route}: 黙って破棄',
  'route-unreachable': '経路 {route}: カーネルは「host unreachable」を返します',
  'route-prohibit': '経路 {route}: カーネルは「administratively prohibited」を返します',
  'route-type-not-modelled': '経路の種類 {type}（{route}）はモデル化していません',
  'loop-back-lo': '宛先 {dst} はローカル: パケットは lo を通って戻ります（PREROUTING、INPUT）',
  'delivered-local-listening': '{endpoint} で待ち受けるローカルプロセスに配送',
  'delivered-local': '{endpoint} のローカルプロセスに配送',
  'forwarded-out': '{dev} から {endpoint} へ転送',
  'forwarded-out-via': '{dev} から {gw} 経由で {endpoint} へ転送',
  'sent-out': '{dev} から {endpoint} へ送出',
  'sent-out-via': '{dev} から {gw} 経由で {endpoint} へ送出',
  'out-unanswered': '{out}: 変換されず（LB エントリなし）、途中で Service アドレスに答えるものはありません: 応答なし',
  'routes-not-captured-step': '未対応: ノードの経路が取得されていません（ip -j route show table all）: フックの通り道を決められません',
  'routes-not-captured': '経路は取得されていません',
  'no-route': '{dst} への経路なし',
  'no-route-unreachable': '{dst} への経路なし: ネットワークに到達できません',
  'route-to': '{dst} への経路: {route}',
  'route-to-local': '{dst} への経路: {route}（ローカル）',
  'who-node-process': 'ノード上のプロセス',
  'who-pod': 'Pod {ip}',
  'sock-lb-call': '{who} が {call} を呼び、{prog} が socket LB を実行（{how}）',
  'sock-pods-included': 'Pod も対象: socketLB.hostNamespaceOnly=false',
  'sock-pods-included-assumed': 'Pod も対象: socketLB.hostNamespaceOnly=false（仮定）',
  'sock-host-namespace': 'ホストの名前空間',
  'sock-lb-disabled': 'socket LB は無効（cilium-dbg status）: ホストから Service への通信はソケットで変換されません',
  'sock-lb-l4-only': 'socket LB が扱うのは TCP と UDP のソケットだけ: {proto} パケットはソケットで変換されません',
  'from-container': 'パケットは {dev} から Pod を出ます: cil_from_container（bpf_lxc、tc ingress）が宛先を検索{already}{l4}',
  'already-backend': '。宛先はすでにバックエンド {endpoint}',
  'sock-lb-not-proto': '。socket LB は {proto} を扱いません',
  'from-netdev': 'パケットは外から {dev} に届きます: cil_from_netdev（bpf_host、NodePort/外部フロントエンド: nodeport_lb{fam}）',
  'svc-lookup': 'サービス検索（lb{v}_lookup_service）',
  'svc-lookup-noport': 'サービス検索（lb{v}_lookup_service。{proto} にはポートがないので dport 0）',
  'svc-lookup-wildcard': '{dst} は自前のフロントエンドを持たないこのノードのアドレス: NodePort のワイルドカード検索（sock4_wildcard_lookup）',
  'svc-lookup-per-packet': 'パケットごとのサービス検索',
  'svc-lookup-hit': '{what}: {key} → {value}',
  'svc-lookup-hit-fe': '{what}: {key} → {value}（{frontend}）',
  'svc-lookup-miss': '{what}: {key} → エントリなし',
  'lb-map-undecoded': '{map} には既知のレイアウトで読めないエントリが {n} 件あります（{why}）',
  'lb-svc-unknown': '{endpoint} の読めたエントリはありませんが、{why}: フロントエンドかどうかは不明',
  'lb-svc-unknown-verdict': 'サービス検索の結果は不明: {why}',
  'lb-maglev': '未対応: サービス {id} は Maglev を使います。nodescope は maglev マップを読み解かない（{read}）ので、バックエンドは決められません',
  'lb-maglev-verdict': 'Maglev によるバックエンド選択は読み解いていません',
  'word-read-not-decoded': '読んだが未解読',
  'word-not-read': '未読',
  'word-unknown-state': '状態不明',
  'lb-proxy-port': 'プロキシポート {port}',
  'lb-proxy-port-unknown': 'このソースには出ないプロキシポート（Cilium 1.16 より前の一覧は省略: cilium PR 31503）',
  'lb-l7-proxy': 'サービス {id} {frontend} は L7 ロードバランサのフロントエンド（フラグ l7-load-balancer）: フローはこのノードの Cilium L7 プロキシ（Envoy）の {port} に回されます。バックエンドは LB マップではなくプロキシが選びます',
  'lb-l7-verdict': 'L7 プロキシに回されます（{port}）',
  'lb-from-service-list': 'cilium-dbg service list はバックエンドの状態を出していません',
  'lb-from-bpf-lb-list': 'cilium-dbg bpf lb list は count を出しません',
  'lb-listed-slot': 'スロット {slot} → {ep}{state}',
  'lb-listed-missing': 'スロット {slot} → バックエンド {id} が見つかりません',
  'lb-count-unknown':
    'サービス {id} {frontend}: バックエンド数は 0 ではなく不明です（{from}）: 一覧の {n} スロットのどれが新しいフローを受けるかは分かりません — すべてのバックエンドが有効ならすべて、すべて終了中ならどれも受けません。一覧: {listed}。決めるには {cmd}（バックエンドの状態）か生のマップ（bpftool）を取得してください',
  'lb-count-unknown-verdict': '{frontend} のバックエンド数は不明（{from}）',
  'lb-no-slot': 'サービス {id} {frontend} は一覧にバックエンドのスロットがありません: 選べるバックエンドがありません',
  'lb-count-zero': 'サービス {id} {frontend} は count 0: 選べるバックエンドがありません',
  'lb-held-terminating-one': '（count の後の {n} スロットは終了中・隔離中のバックエンド: Cilium の conntrack にあるフローはそこへ続き、新しいフローは行きません — cilium PR 25863、31840）',
  'lb-held-terminating': '（count の後の {n} スロットは終了中・隔離中のバックエンド: Cilium の conntrack にあるフローはそこへ続き、新しいフローは行きません — cilium PR 25863、31840）',
  'no-backend-ehostunreach-step': '{why}{held}: connect() は EHOSTUNREACH で失敗します（socket LB、REASON_LB_NO_BACKEND）。bpf_lxc/bpf_host に届いたパケットは {drop}（{code}）で破棄されます',
  'no-backend-ehostunreach': '{why}: connect() は EHOSTUNREACH で失敗します',
  'no-backend-drop-step': '{why}{held}: {drop}（{code}、バックエンドが見つからない）で破棄',
  'no-backend-drop': '{drop}: {why}',
  'lb-slots-missing': '未対応: サービス {id} は count {count} ですが、キャプチャにはスロット 1..{count} がどれもありません',
  'lb-slots-missing-verdict': 'バックエンドのスロットがキャプチャにありません',
  'lb-random-select':
    '乱数による選択（lb4_select_backend_id_random）: slot = 1 + random % count {count} → スロット {slot}（有効な {n} スロットそれぞれ確率 1/{n}）: {key} → backend_id {id}{skipped}',
  'lb-skipped': '。飛ばしたもの: {slots}',
  'lb-skipped-slot': 'スロット {slot} → バックエンド {id}{ep} {state}（count {count} の後、qcount 内: 既存の接続だけに使われる）',
  'lb-backends-not-read': '{map}（または古いバックエンドマップ）は読まれていません',
  'lb-backend-unknown': 'バックエンド {id} は検索できません: {why}。存在するかどうかは不明',
  'lb-backend-unknown-verdict': 'バックエンド {id} は不明: {why}',
  'lb-backend-missing': 'バックエンド {id} は {map} にありません: DROP_NO_SERVICE（{code}）で破棄',
  'lb-backend-missing-verdict': '{drop}: バックエンド {id} が見つかりません',
  'lb-backend-lookup': 'バックエンド検索（lb4_lookup_backend）: キー {backend_id {id}} → {value}',
  'socket-lb-connect':
    'socket LB: connect() の時点でソケットは {from} ではなく {to} に接続されます。最初からすべてのパケットがバックエンドに送られます（パケットごとの DNAT なし、conntrack には {to}）。アプリケーションには recvmsg()/getpeername() が {from} を見せます（{map}、rev_nat_index {id}）',
  'dnat-to-endpoint': 'DNAT {from} → {to}（lb4_local → lb4_xlate）。Cilium の conntrack（cilium_ct4_global）が応答のために rev_nat_index {id} を記録',
  'rev-nat-entry': '逆 NAT: キー {rev_nat_index {id}} → {address {ip}, port {port}}: {use}',
  'rev-nat-use-socket': '戻りではソケット層がフロントエンドとして答えます。パケットごとの経路（lb4_rev_nat）ならこのエントリで応答の送信元を書き換えます',
  'rev-nat-use-packet': '戻りでは lb4_rev_nat がこのエントリで応答の送信元を書き換えます',
  'rev-nat-missing': '逆 NAT: rev_nat_index {id} のエントリなし: 応答は書き換えられません',
};

/** The step tables (tests). */
export const STEP_TABLES = { en: stepEn, ja: stepJa };

/** A key of the step tables: named for what happened (`dnat-to-endpoint`, `no-endpoints-reject`). */
export type StepKey = keyof typeof stepEn;

/** English words of a matcher, rendered through the phrase table in Japanese. */
export interface StepPhrase {
  readonly phrase: string;
}

/** Params joined by `sep` (English) and `sepJa` (Japanese, default `sep`). */
export interface StepList {
  readonly list: readonly StepParam[];
  readonly sep: string;
  readonly sepJa?: string;
}

/** A param of a step phrase (see the module comment). */
export type StepParam = string | number | StepSaid | StepPhrase | StepList;

/** What a step (or verdict) said: a key of the step tables and its `{params}`. */
export interface StepSaid {
  readonly key: StepKey;
  readonly params: Readonly<Record<string, StepParam>>;
}

/** A phrase: `key` with `params`. */
export function stepSaid(key: StepKey, params: Readonly<Record<string, StepParam>> = {}): StepSaid {
  return { key, params };
}

/** Matcher words (a condition list) as a param. */
export function phrase(text: string): StepPhrase {
  return { phrase: text };
}

/** The text of `s` in `lang`; `phraseIn` renders a {@link StepPhrase} (identity for English). */
export function stepSaidText(lang: Lang, s: StepSaid, phraseIn: (text: string) => string = (x) => x): string {
  const table: Record<string, string> = lang === 'en' ? stepEn : stepJa;
  const param = (v: StepParam): string => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number') return String(v);
    if ('key' in v) return stepSaidText(lang, v, phraseIn);
    if ('phrase' in v) return lang === 'en' ? v.phrase : phraseIn(v.phrase);
    return v.list.map(param).join(lang === 'en' ? v.sep : (v.sepJa ?? v.sep));
  };
  return table[s.key]!.replace(/\{(\w+)\}/g, (m, name: string) => {
    const v = s.params[name];
    return v === undefined ? m : param(v);
  });
}

/** The English of `s` (a step's `reason`). */
export function stepSaidEn(s: StepSaid): string {
  return stepSaidText('en', s);
}
