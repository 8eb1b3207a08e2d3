/**
 * The step walk's sentences in Japanese: each row is an English sentence the step engine
 * writes (src/trace/*.ts, src/analysis/expectation-lookup.ts) with `$name` holes, and its
 * Japanese. `$*name` holes hold a sentence of their own and are translated in turn; plain
 * holes hold data (addresses, chain names, rule text) and are copied. Read by
 * src/text/why.ts; the first row that matches the whole sentence wins, so narrower rows
 * come before wider ones. Holes are written `$name` (not `{name}`) because the engine's
 * own sentences quote Cilium map keys in braces.
 */
export const WHY_PHRASES: readonly (readonly [en: string, ja: string])[] = [
  // conntrack (src/trace/stations.ts)
  ['conntrack: the entry of this 5-tuple is $st (a closed connection); a SYN reopens it: conntrack deletes the old entry and the packet starts a NEW flow', 'conntrack: この 5 タプルのエントリは $st（閉じた接続）: SYN が接続を開き直すので、conntrack は古いエントリを消し、パケットは NEW のフローを始めます'],
  ['conntrack: no entry has this 5-tuple, the packet starts a NEW flow', 'conntrack: この 5 タプルのエントリはなく、パケットは NEW のフローを始めます'],
  ['$*a (a TCP packet without SYN is picked up mid-stream, nf_conntrack_tcp_loose=1)', '$a（SYN のない TCP パケットは途中から拾われます: nf_conntrack_tcp_loose=1）'],
  ['conntrack: the NEW flow is confirmed and enters the conntrack table (its entry is shown with the result)', 'conntrack: NEW のフローが確定し、conntrack テーブルに入ります（エントリは結果とともに表示）'],
  ['conntrack: the packet belongs to a known flow ($*dir direction, ct state $state): $entry; it carries $*nat, which conntrack applies again; nat chains do not run for it', 'conntrack: パケットは既知のフローに属します（$dir方向、ct state $state）: $entry。$nat を持ち、conntrack がそれを再び適用するので nat チェインは実行されません'],
  ['conntrack: the packet belongs to a known flow ($*dir direction, ct state $state): $entry; nat chains do not run for it', 'conntrack: パケットは既知のフローに属します（$dir方向、ct state $state）: $entry。nat チェインは実行されません'],
  ['original', '元の'],
  // a Cilium map lookup's verdict when the map has no entry (src/trace/cilium.ts NO_ENTRY)
  ['no entry', 'エントリなし'],
  // socket LB's verdicts: connect()/sendmsg() go to the backend, no packet is DNATed (src/trace/cilium.ts rewrite)
  ['connect to $to', '$to に接続'],
  ['send to $to', '$to へ送信'],
  ['reply', '応答'],
  ['DNAT and SNAT', 'DNAT と SNAT'],
  ['the conntrack table was not captured: the packet is taken as the first of a new flow', 'conntrack テーブルは取得されていません: パケットは新しいフローの最初のものとして扱います'],
  // rules (src/trace/iptables-*.ts, nft-*.ts)
  ['no conditions: every packet matches', '条件なし: すべてのパケットが一致'],
  ['$*a (negated match !: holds)', '$a（否定のマッチ !: 成立）'],
  ['$*a (negated match !: fails)', '$a（否定のマッチ !: 不成立）'],
  ['end of $c (reached by goto $g): policy $p', '$c の終わり（goto $g で到達）: ポリシー $p'],
  ['end of $c: policy $p', '$c の終わり: ポリシー $p'],
  ['end of $c: back to the end of $d', '$c の終わり: $d の終わりへ戻る'],
  ['end of $c: back to $d rule #$n', '$c の終わり: $d のルール #$n へ戻る'],
  ['branch $i of $n: random draw taken (probability $p here)', '分岐 $i/$n: 乱数で選ばれました（ここでの確率 $p）'],
  ['random (probability $p here): not taken, the walk follows branch $i of $n ($t)', '乱数（ここでの確率 $p）: 選ばれず、分岐 $i/$n（$t）をたどります'],
  ['numgen random mod $m: branch $i of $n (probability $p)', 'numgen random mod $m: 分岐 $i/$n（確率 $p）'],
  ['$*a: NAT binding set up, the rewrite is applied when the nat chain returns', '$a: NAT の対応を設定。書き換えは nat チェインを抜けるときに行われます'],
  ['$*a (no target: counts and goes on)', '$a（ターゲットなし: 数えて次へ）'],
  ['$t records the packet and it goes on', '$t がパケットを記録して次へ'],
  ['NOTRACK: conntrack will ignore this packet (no NAT)', 'NOTRACK: conntrack はこのパケットを無視します（NAT なし）'],
  ['CT --notrack: conntrack will ignore this packet (no NAT)', 'CT --notrack: conntrack はこのパケットを無視します（NAT なし）'],
  ['too many steps: a jump loop?', 'ステップが多すぎます: jump のループ？'],
  // NAT (src/trace/stations.ts)
  ['NAT: $x rewrites the destination: $a → $b', 'NAT: $x が宛先を書き換え: $a → $b'],
  ['NAT: $x rewrites the source: $a → $b (fully-random: the kernel picks a random source port)', 'NAT: $x が送信元を書き換え: $a → $b（fully-random: 送信元ポートはカーネルが乱数で選ぶ）'],
  ['NAT: $x rewrites the source: $a → $b', 'NAT: $x が送信元を書き換え: $a → $b'],
  // routing and endings (src/trace/engine.ts, src/trace/cilium.ts)
  ['routing decision for $d: $r → $*w', '$d の経路決定: $r → $w'],
  ['output route for $d: $r → $*w', '$d への出力経路: $r → $w'],
  ['the destination is local: deliver to this host (INPUT)', '宛先はローカル: このホストに配送（INPUT）'],
  ['send out $o via $g', '$o から $g 経由で送出'],
  ['send out $o', '$o から送出'],
  ['re-route after DNAT (ip_route_me_harder): $r; output interface $a → $b', 'DNAT 後の経路の選び直し（ip_route_me_harder）: $r。出力インタフェース $a → $b'],
  ['the destination $d is local: the packet loops back through lo (PREROUTING, INPUT)', '宛先 $d はローカル: パケットは lo を通って戻ります（PREROUTING、INPUT）'],
  ['forwarded out $o to $e via $g', '$o から $g 経由で $e へ転送'],
  ['forwarded out $o to $e: not translated (no LB entry), so nothing on the way answers for a Service address: unanswered', '$o から $e へ転送: 変換されず（LB エントリなし）、途中で Service アドレスに答えるものはありません: 応答なし'],
  ['forwarded out $o to $e', '$o から $e へ転送'],
  ['sent out $o to $e via $g', '$o から $g 経由で $e へ送出'],
  ['sent out $o to $e: not translated (no LB entry), so nothing on the way answers for a Service address: unanswered', '$o から $e へ送出: 変換されず（LB エントリなし）、途中で Service アドレスに答えるものはありません: 応答なし'],
  ['sent out $o to $e', '$o から $e へ送出'],
  ['delivered to a local process listening on $e', '$e で待ち受けるローカルプロセスに配送'],
  ['delivered to a local process on $e', '$e のローカルプロセスに配送'],
  ['route to $d: $r (local)', '$d への経路: $r（ローカル）'],
  ['route to $d: $r', '$d への経路: $r'],
  ['no route to $d: network unreachable', '$d への経路なし: ネットワークに到達できません'],
  ['no route to $d', '$d への経路なし'],
  ['route $r: silently dropped', '経路 $r: 黙って破棄'],
  ['$*a: the client gets "connection refused" at once, not a timeout', '$a: クライアントはタイムアウトを待たず、すぐに「connection refused」を受け取ります'],
  ['$*a: the client gets "$e" at once, not a timeout', '$a: クライアントはタイムアウトを待たず、すぐに「$e」を受け取ります'],
  ['$t $c rule #$n ("$m"): REJECT with $h', '$t $c ルール #$n（"$m"）: $h で REJECT'],
  ['$t $c rule #$n: REJECT with $h', '$t $c ルール #$n: $h で REJECT'],
  ['$t $c rule #$n ("$m"): DROP', '$t $c ルール #$n（"$m"）: DROP'],
  ['$t $c rule #$n: DROP', '$t $c ルール #$n: DROP'],
  ['$f $t $c ("$s" in $set: has no endpoints): $r', '$f $t $c（"$s" は $set にあり: エンドポイントなし）: $r'],
  ['policy DROP of $t $c', '$t $c のポリシー DROP'],
  ['policy drop of $t', '$t のポリシー drop'],
  ['routes not captured', '経路は取得されていません'],
  // where the packet enters (src/trace/input.ts)
  ["the route back to $ip is $r: the pod's packets arrive on $i", '$ip への戻りの経路は $r: Pod のパケットは $i から届きます'],
  ['the route back to $ip is $r: the packet arrives from outside on $i', '$ip への戻りの経路は $r: 外からのパケットは $i から届きます'],
  ['the node sends the packet; source $ip is the first global address of $i', 'ノード自身が送信します。送信元 $ip は $i の最初のグローバルアドレス'],
  // the reply (src/trace/engine.ts, src/trace/cilium.ts)
  ["the reply $a → $b matches the flow's reply tuple; conntrack rewrites it: $*c", '応答 $a → $b はフローの応答タプルに一致し、conntrack が書き換えます: $c'],
  ["the reply $a → $b matches the flow's reply tuple and is not rewritten", '応答 $a → $b はフローの応答タプルに一致し、書き換えられません'],
  ['its source $a becomes $b again (reverse DNAT)', '送信元 $a は $b に戻ります（逆 DNAT）'],
  ['its destination $a becomes $b (reverse SNAT)', '宛先 $a は $b になります（逆 SNAT）'],
  ['no translation: the reply comes back as sent', '変換なし: 応答は送られたまま戻ります'],
  ["Cilium rewrites the reply's source back to $a ($b)", 'Cilium が応答の送信元を $a に書き戻します（$b）'],
  ['the reply arrives from $a unchanged on the wire; the application sees $b through the socket (socket LB reverse translation)', '応答は回線上では $a から変わらずに届き、アプリケーションはソケット越しに $b を見ます（socket LB の逆変換）'],
  // notes (src/trace/engine.ts, src/trace/cilium.ts)
  ['forwarding assumes net.ipv4.ip_forward=1 and that rp_filter accepts the source (neither is captured)', '転送は net.ipv4.ip_forward=1 で、rp_filter が送信元を受け入れるものとしています（どちらも取得していません）'],
  ['forwarding assumes net.ipv6.conf.all.forwarding=1 (not captured)', '転送は net.ipv6.conf.all.forwarding=1 を前提としています（取得していません）'],
  ['nft table $t is managed by iptables-nft: its rules are evaluated once, from the iptables dump', 'nft テーブル $t は iptables-nft が管理: そのルールは iptables のダンプから 1 度だけ評価します'],
  ['no KUBE- chains: kube-proxy replacement rewrites Service addresses in eBPF, so nft/iptables show no Service rules; the LB map steps above are the rewrite table (`nodescope show lb` lists the maps)', 'KUBE- チェインなし: kube-proxy replacement は Service アドレスを eBPF で書き換えるため、nft/iptables に Service のルールはありません。上の LB マップの手順が書き換え表です（マップの一覧は "nodescope show lb"）'],
  ["socket LB settings assumed, not read (no cilium-dbg status in this source): enabled with socketLB.hostNamespaceOnly=false, Cilium's default with kube-proxy replacement", 'socket LB の設定は読めていないため仮定です（このソースに cilium-dbg status なし）: kube-proxy replacement での Cilium の既定どおり socketLB.hostNamespaceOnly=false で有効'],
  ["Cilium's own conntrack (cilium_ct4_global) is not read: the packet is taken as the first of a new flow", 'Cilium 自身の conntrack（cilium_ct4_global）は読んでいません: パケットは新しいフローの最初のものとして扱います'],
  ["XDP acceleration (loadBalancer.acceleration) is not read; assumed disabled, Cilium's default: with it, the same lookup runs in cil_xdp_entry before the packet reaches tc", 'XDP アクセラレーション（loadBalancer.acceleration）は読んでいないため、Cilium の既定どおり無効と仮定: 有効なら同じ検索がパケットが tc に届く前に cil_xdp_entry で行われます'],
  ["only slots 1..count take new connections; terminating, quarantined and maintenance backends sit after count (qcount) and serve only flows already in Cilium's conntrack (graceful termination, Cilium 1.11+; quarantine 1.14+; maintenance 1.16+). Before graceful termination, a terminating backend was removed from the maps at once", '新しい接続を受けるのはスロット 1..count だけです。終了中・隔離中・保守中のバックエンドは count の後（qcount）に置かれ、Cilium の conntrack にあるフローだけを受けます（グレースフル終了は Cilium 1.11 以降、隔離は 1.14 以降、保守は 1.16 以降）。グレースフル終了より前は、終了中のバックエンドはすぐにマップから消されていました'],
  ['$d is a Service frontend, but no entry has protocol $p and port $n: Cilium does not translate it', '$d は Service のフロントエンドですが、プロトコル $p・ポート $n のエントリはありません: Cilium は変換しません'],
  ['$d is a Service frontend, but no entry has protocol $p: Cilium does not translate it', '$d は Service のフロントエンドですが、プロトコル $p のエントリはありません: Cilium は変換しません'],
  ['the frontend was found under protocol 0 (ANY): the map was written without L4 protocol differentiation', 'フロントエンドはプロトコル 0（ANY）で見つかりました: マップは L4 プロトコルを区別せずに書かれています'],
  ['a NodePort backend on another node is reached with SNAT to the node address by bpf_host (nodeport_nat_fwd) unless DSR is on; not modelled', '別ノードの NodePort バックエンドには、DSR でない限り bpf_host（nodeport_nat_fwd）がノードアドレスへ SNAT して届けます。これはモデル化していません'],
  // Cilium steps (src/trace/cilium.ts)
  ['$*who calls $f: $p runs socket LB ($*how)', '$who が $f を呼び、$p が socket LB を実行（$how）'],
  ['a process on the node', 'ノード上のプロセス'],
  ['the pod $ip', 'Pod $ip'],
  ['host namespace', 'ホストの名前空間'],
  ['pods included: socketLB.hostNamespaceOnly=false, assumed', 'Pod も対象: socketLB.hostNamespaceOnly=false（仮定）'],
  ['pods included: socketLB.hostNamespaceOnly=false', 'Pod も対象: socketLB.hostNamespaceOnly=false'],
  ['the packet leaves the pod on $d: cil_from_container (bpf_lxc, tc ingress) looks up its destination; the destination is already the backend $e', 'パケットは $d から Pod を出ます: cil_from_container（bpf_lxc、tc ingress）が宛先を検索。宛先はすでにバックエンド $e'],
  ['the packet leaves the pod on $d: cil_from_container (bpf_lxc, tc ingress) looks up its destination', 'パケットは $d から Pod を出ます: cil_from_container（bpf_lxc、tc ingress）が宛先を検索'],
  ['the packet arrives from outside on $d: cil_from_netdev (bpf_host, NodePort/external frontends: nodeport_lb$f)', 'パケットは外から $d に届きます: cil_from_netdev（bpf_host、NodePort/外部フロントエンド: nodeport_lb$f）'],
  ['service lookup (lb4_lookup_service): $k → $*v', 'サービス検索（lb4_lookup_service）: $k → $v'],
  ['per-packet service lookup: $k → $*v', 'パケットごとのサービス検索: $k → $v'],
  ['no entry', 'エントリなし'],
  ['slot $s → backend $b $e $st (after count $c, in qcount: kept for existing connections only)', 'スロット $s → バックエンド $b $e $st（count $c の後、qcount 内: 既存の接続だけに使われる）'],
  ['random selection (lb4_select_backend_id_random): slot = 1 + random % count $c → slot $s, each of the $n active slots with probability 1/$m: $k → backend_id $b; skipped: $*skipped', '乱数による選択（lb4_select_backend_id_random）: slot = 1 + random % count $c → スロット $s（有効な $n スロットそれぞれ確率 1/$m）: $k → backend_id $b。飛ばしたもの: $skipped'],
  ['random selection (lb4_select_backend_id_random): slot = 1 + random % count $c → slot $s, each of the $n active slots with probability 1/$m: $k → backend_id $b', '乱数による選択（lb4_select_backend_id_random）: slot = 1 + random % count $c → スロット $s（有効な $n スロットそれぞれ確率 1/$m）: $k → backend_id $b'],
  ['backend lookup (lb4_lookup_backend): key $k → $v', 'バックエンド検索（lb4_lookup_backend）: キー $k → $v'],
  ["socket LB: the socket is connected to $to instead of $from at connect(); every packet is sent to the backend from the start (no per-packet DNAT, conntrack shows $to2); recvmsg()/getpeername() show $from2 to the application ($m, rev_nat_index $i)", 'socket LB: connect() の時点でソケットは $from ではなく $to に接続されます。最初からすべてのパケットがバックエンドに送られます（パケットごとの DNAT なし、conntrack には $to2）。アプリケーションには recvmsg()/getpeername() が $from2 を見せます（$m、rev_nat_index $i）'],
  ["DNAT $a → $b (lb4_local → lb4_xlate); Cilium's conntrack (cilium_ct4_global) records rev_nat_index $i for the reply", 'DNAT $a → $b（lb4_local → lb4_xlate）。Cilium の conntrack（cilium_ct4_global）が応答のために rev_nat_index $i を記録'],
  ['reverse NAT: key $k → $v: on the way back the socket layer answers the frontend; the per-packet path (lb4_rev_nat) would rewrite the reply\'s source with this entry', '逆 NAT: キー $k → $v: 戻りではソケット層がフロントエンドとして答えます。パケットごとの経路（lb4_rev_nat）ならこのエントリで応答の送信元を書き換えます'],
  ["reverse NAT: key $k → $v: on the way back lb4_rev_nat rewrites the reply's source with this entry", '逆 NAT: キー $k → $v: 戻りでは lb4_rev_nat がこのエントリで応答の送信元を書き換えます'],
  ['reverse NAT: no entry for rev_nat_index $i: the reply would not be rewritten', '逆 NAT: rev_nat_index $i のエントリなし: 応答は書き換えられません'],
  ['$*a: connect() fails with EHOSTUNREACH (socket LB, REASON_LB_NO_BACKEND); a packet reaching bpf_lxc/bpf_host instead is dropped with $d ($c)', '$a: connect() は EHOSTUNREACH で失敗します（socket LB、REASON_LB_NO_BACKEND）。bpf_lxc/bpf_host に届いたパケットは $d（$c）で破棄されます'],
  ['$*a: connect() fails with EHOSTUNREACH', '$a: connect() は EHOSTUNREACH で失敗します'],
  ['$*a: dropped with $d ($c, "Service backend not found")', '$a: $d（$c、バックエンドが見つからない）で破棄'],
  ['service $i $f has count 0: no backend to choose', 'サービス $i $f は count 0: 選べるバックエンドがありません'],
  ['service $i $f has no backend slot in the listing: no backend to choose', 'サービス $i $f は一覧にバックエンドのスロットがありません: 選べるバックエンドがありません'],
  ['socket LB is disabled (cilium-dbg status): host traffic to a Service is not translated at the socket', 'socket LB は無効（cilium-dbg status）: ホストから Service への通信はソケットで変換されません'],
  ['socket LB handles TCP and UDP sockets only: a $p packet is not translated at the socket', 'socket LB が扱うのは TCP と UDP のソケットだけ: $p パケットはソケットで変換されません'],
  // why a fleet node's proxy freshness was not read (src/fleet/diagnose.ts)
  ['cilium-dbg status was not readable ($s: $e)', 'cilium-dbg status を読めませんでした（$s: $e）'],
  ['cilium-dbg status was not readable ($s)', 'cilium-dbg status を読めませんでした（$s）'],
  ["the agent's StateDB frontends were not readable ($s: $e)", 'エージェントの StateDB フロントエンドを読めませんでした（$s: $e）'],
  ["the agent's StateDB frontends were not readable ($s)", 'エージェントの StateDB フロントエンドを読めませんでした（$s）'],
  ["kube-proxy's metrics were not readable ($s: $e)", 'kube-proxy のメトリクスを読めませんでした（$s: $e）'],
  ["kube-proxy's metrics were not readable ($s)", 'kube-proxy のメトリクスを読めませんでした（$s）'],
  ['the capture did not read $p', 'この取得は $p を読んでいません'],
  ['the StateDB frontends table was empty or not understood', 'StateDB のフロントエンド表は空か、読み取れませんでした'],
  // why a fleet node was not captured (src/fleet/capture.ts, the reason kept in fleet.json)
  ['timed out after $m min $s s while opening the node', 'ノードを開く途中で時間切れ（$m 分 $s 秒）'],
  ['timed out after $m min while opening the node', 'ノードを開く途中で時間切れ（$m 分）'],
  ['timed out after $s s while opening the node', 'ノードを開く途中で時間切れ（$s 秒）'],
  ['timed out after $m min $s s while running the probes', 'プローブの実行中に時間切れ（$m 分 $s 秒）'],
  ['timed out after $m min while running the probes', 'プローブの実行中に時間切れ（$m 分）'],
  ['timed out after $s s while running the probes', 'プローブの実行中に時間切れ（$s 秒）'],
  // what the API expects (src/analysis/expectation-lookup.ts)
  ['the API expects $t traffic to $s ($p, $q policy) on this node: $*v — $*why', 'API によれば、このノードで $s 宛ての $t 通信（$p、ポリシー $q）は: $v。$why'],
  ['the API expects $t traffic to $s ($p, $q policy) on this node: $*v', 'API によれば、このノードで $s 宛ての $t 通信（$p、ポリシー $q）は: $v'],
  ['the walk reached $e, which kube-proxy on this node would not use: $*why', '辿った先は $e ですが、このノードの kube-proxy はそれを使いません: $why'],
  ['the walk reached $e, which kube-proxy on this node would not use', '辿った先は $e ですが、このノードの kube-proxy はそれを使いません'],
  ['the walk reached $e, yet the API expects $v here', '辿った先は $e ですが、API によればここは $v'],
  // the notes of a DNS result (src/dns/replay.ts, src/dns/compare.ts, src/analysis/dns-describe.ts): show dns, dig
  ["recorded answer replayed from the capture: its path (via), query time and WHEN are the capture's, not asked now", 'キャプチャに記録された応答を再生しています: 経路（via）、問い合わせ時間、"WHEN" はキャプチャ時のもので、今問い合わせたものではありません'],
  ["$*a; the recorded answers could not all be read — $b", '$a。記録された応答の一部を読めませんでした — $b'],
  ['TTLs are not compared; the additional section is shown, not compared', 'TTL は比較しません。追加セクションは表示するだけで比較しません'],
  ["asked through a port-forward (Kubernetes API) to one CoreDNS pod: the node's ClusterIP DNAT (kube-proxy rules, Cilium LB map) is not on this path", 'Kubernetes API の port-forward で CoreDNS Pod 1 つに問い合わせました: ノードの ClusterIP DNAT（kube-proxy のルール、Cilium の LB マップ）はこの経路にありません'],
];

/**
 * Sentences so wide that they are tried only after a text with `; ` was cut into its parts
 * (a condition list `daddr … is in …; protocol tcp = tcp`): tried whole first, `$a is in $b`
 * would swallow the whole list.
 */
export const WHY_GENERIC: readonly (readonly [en: string, ja: string])[] = [
  ['protocol $a = $b', 'プロトコル $a = $b'],
  ['protocol $a ≠ $b', 'プロトコル $a ≠ $b'],
  ['$a is not in $b', '$a は $b に含まれない'],
  ['$a is in $b', '$a は $b に含まれる'],
  ['$a is one of $b', '$a は $b のいずれか'],
  ['$a not in $b', '$a は $b に含まれない'],
  ['$a in $b', '$a は $b に含まれる'],
  ['daddr $a is $t, not $u', 'daddr $a は $t（$u ではない）'],
  ['saddr $a is $t, not $u', 'saddr $a は $t（$u ではない）'],
  ['daddr $a is $t', 'daddr $a は $t'],
  ['saddr $a is $t', 'saddr $a は $t'],
];

/**
 * Pieces replaced wherever they stand, after the sentences: words inside a line that is
 * otherwise data (the packet line's `ct (not tracked yet)`, a random port).
 */
export const WHY_PIECES: readonly (readonly [en: string, ja: string])[] = [
  ['ct (not tracked yet)', 'ct（未追跡）'],
  ['<random port>', '<乱数ポート>'],
  ['<random>', '<乱数>'],
  [' (no entry)', '（エントリなし）'],
  [' (on this node)', '（このノード上）'],
  ['exit code ', '終了コード '],
];
