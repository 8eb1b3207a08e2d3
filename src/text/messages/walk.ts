/**
 * The step walk's navigation strings and the cross-pane find view's (issue 22 items 1 and 2:
 * src/ui/step-target.ts, src/ui/find-view.ts, src/ui/panes/FindView.tsx), in English and Japanese.
 */

export const en = {
  'step.keysAll': 'n/p ↑↓ step · Enter open · b branch · Esc back · : trace · ? keys',
  'notice.stepNoRow': 'this step has no rule, map entry or flow to open (a kernel station: routing, NAT, delivery)',
  'notice.stepNewFlow': 'a new flow: its conntrack entry is made by this packet, so the capture has none to open',
  'key.findAll': 'find an IP or Service name in every pane: :find TEXT (Enter opens a hit, Esc back)',
  'find.title': 'find {query}: {count} hits (rules, set elements, LB frontends/backends, flows, Services)',
  'find.more': '… more than {limit} hits of one kind: the first {limit} are listed',
  'find.none': 'nothing on this node holds {query}',
  'col.find.pane': 'PANE',
  'col.find.where': 'WHERE',
  'col.find.text': 'TEXT',
} as const;

export const ja: Record<keyof typeof en, string> = {
  'step.keysAll': 'n/p ↑↓ ステップ · Enter 開く · b 分岐 · Esc 戻る · : trace · ? キー',
  'notice.stepNoRow': 'このステップには開けるルール・マップ項目・フローがありません (カーネル内の処理: ルーティング、NAT、配送)',
  'notice.stepNewFlow': '新しいフローです: この conntrack エントリはこのパケットが作るので、キャプチャには開けるものがありません',
  'key.findAll': 'IP や Service 名を全ペインから探す: :find 文字列 (Enter でヒットを開く、Esc で戻る)',
  'find.title': '{query} の検索: {count} 件 (ルール、セット要素、LB フロントエンド/バックエンド、フロー、Service)',
  'find.more': '… 同じ種類のヒットが {limit} 件を超えました: 最初の {limit} 件を表示',
  'find.none': 'このノードで {query} を含むものはありません',
  'col.find.pane': 'ペイン',
  'col.find.where': '場所',
  'col.find.text': '内容',
};
