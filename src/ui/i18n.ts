/**
 * Every user-visible UI string, in English and Japanese. Panes call `t(lang, key)`
 * (or `tf` with `{name}` parameters) and never hard-code text.
 */

/** A supported UI language. */
export type Lang = 'en' | 'ja';

const en = {
  'pane.services': 'Services',
  'pane.rules': 'Rules',
  'pane.lb': 'LB maps',
  'pane.conntrack': 'Conntrack',
  'pane.dns': 'DNS',
  'pane.step': 'Step',
  'header.node': 'node',
  'header.source': 'source',
  'header.mode': 'mode',
  'header.live': 'live',
  'header.replay': 'replay',
  'header.capturedAt': 'captured {time}',
  'header.age': 'data {age} old',
  'header.stale': 'stale since {age}: {reason}',
  'header.refreshing': 'refreshing…',
  'status.loading': 'loading…',
  'status.failed': 'failed: {reason}',
  'status.empty': 'nothing here',
  'status.noApi': 'no API objects in this source (use --api-file or a cluster)',
  'status.notCaptured': '{what} was not captured on this node',
  'status.diagnostics': '{count} line(s) not understood',
  'col.namespace': 'NAMESPACE',
  'col.name': 'NAME',
  'col.type': 'TYPE',
  'col.clusterIP': 'CLUSTER-IP',
  'col.ports': 'PORTS',
  'col.endpoints': 'ENDPOINTS',
  'col.address': 'ADDRESS',
  'col.port': 'PORT',
  'col.conditions': 'CONDITIONS',
  'col.nodeName': 'NODE',
  'col.zone': 'ZONE',
  'col.num': '#',
  'col.pkts': 'PKTS',
  'col.bytes': 'BYTES',
  'col.rate': 'RATE',
  'col.rule': 'RULE',
  'col.target': 'TARGET',
  'col.prob': 'PROB',
  'col.chain': 'CHAIN',
  'col.policy': 'POLICY',
  'col.rules': 'RULES',
  'rules.tables': 'tables and chains',
  'rules.chain': 'chain {table}/{chain}',
  'rules.noRules': 'no netfilter rules in this source',
  'rules.back': 'Esc: back to {chain}',
  'rules.derived': 'derived from conntrack',
  'services.endpointsOf': 'endpoints of {name}',
  'services.noEndpoints': 'no endpoints (EndpointSlice empty)',
  'services.onThisNode': 'this node',
  'filter.prompt': 'filter: ',
  'help.title': 'Keys',
  'help.close': 'press ? or Esc to close',
  'key.panes': 'switch pane',
  'key.move': 'move',
  'key.page': 'page up / down',
  'key.ends': 'first / last',
  'key.open': 'open / follow jump',
  'key.back': 'back',
  'key.filter': 'filter',
  'key.help': 'help',
  'key.quit': 'quit',
  'key.refresh': 'refresh now',
  'key.trace': 'step mode from the selected Service',
  'footer.hint': '?:help  /:filter  Enter:open  Esc:back  q:quit',
  'error.title': 'nodescope could not show this',
  'diag.title': 'Not understood ({count})',
} as const;

/** A UI string key. */
export type MessageKey = keyof typeof en;

const ja: Record<MessageKey, string> = {
  'pane.services': 'サービス',
  'pane.rules': 'ルール',
  'pane.lb': 'LBマップ',
  'pane.conntrack': 'コネクション追跡',
  'pane.dns': 'DNS',
  'pane.step': 'ステップ',
  'header.node': 'ノード',
  'header.source': 'ソース',
  'header.mode': 'モード',
  'header.live': 'ライブ',
  'header.replay': 'リプレイ',
  'header.capturedAt': '取得 {time}',
  'header.age': 'データは{age}前',
  'header.stale': '{age}前から古いデータ: {reason}',
  'header.refreshing': '更新中…',
  'status.loading': '読み込み中…',
  'status.failed': '失敗: {reason}',
  'status.empty': '何もありません',
  'status.noApi': 'このソースにはAPIオブジェクトがありません（--api-file かクラスタを指定）',
  'status.notCaptured': 'このノードでは{what}を取得していません',
  'status.diagnostics': '解釈できない行が{count}行あります',
  'col.namespace': '名前空間',
  'col.name': '名前',
  'col.type': '種類',
  'col.clusterIP': 'クラスタIP',
  'col.ports': 'ポート',
  'col.endpoints': 'エンドポイント',
  'col.address': 'アドレス',
  'col.port': 'ポート',
  'col.conditions': '状態',
  'col.nodeName': 'ノード',
  'col.zone': 'ゾーン',
  'col.num': '#',
  'col.pkts': 'パケット',
  'col.bytes': 'バイト',
  'col.rate': 'レート',
  'col.rule': 'ルール',
  'col.target': 'ターゲット',
  'col.prob': '確率',
  'col.chain': 'チェイン',
  'col.policy': 'ポリシー',
  'col.rules': 'ルール数',
  'rules.tables': 'テーブルとチェイン',
  'rules.chain': 'チェイン {table}/{chain}',
  'rules.noRules': 'このソースにはnetfilterルールがありません',
  'rules.back': 'Esc: {chain} に戻る',
  'rules.derived': 'conntrackから算出',
  'services.endpointsOf': '{name} のエンドポイント',
  'services.noEndpoints': 'エンドポイントなし（EndpointSliceが空）',
  'services.onThisNode': 'このノード',
  'filter.prompt': '絞り込み: ',
  'help.title': 'キー操作',
  'help.close': '? か Esc で閉じる',
  'key.panes': 'ペイン切り替え',
  'key.move': '移動',
  'key.page': 'ページ送り',
  'key.ends': '先頭 / 末尾',
  'key.open': '開く / ジャンプ先へ',
  'key.back': '戻る',
  'key.filter': '絞り込み',
  'key.help': 'ヘルプ',
  'key.quit': '終了',
  'key.refresh': '今すぐ更新',
  'key.trace': '選択中のサービスからステップ実行',
  'footer.hint': '?:ヘルプ  /:絞り込み  Enter:開く  Esc:戻る  q:終了',
  'error.title': 'nodescope はこれを表示できませんでした',
  'diag.title': '解釈できない行 ({count})',
};

const tables: Record<Lang, Record<MessageKey, string>> = { en, ja };

/** The string for `key` in `lang`. */
export function t(lang: Lang, key: MessageKey): string {
  return tables[lang][key];
}

/** The string for `key` with `{name}` parameters filled. */
export function tf(lang: Lang, key: MessageKey, params: Readonly<Record<string, string | number>>): string {
  return tables[lang][key].replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}

/**
 * The language from an explicit flag, else from `LANG`/`LC_ALL`/`LC_MESSAGES`
 * (`ja_JP.UTF-8` → `ja`), else English.
 */
export function detectLang(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): Lang {
  if (flag === 'en' || flag === 'ja') return flag;
  const loc = env.LC_ALL || env.LC_MESSAGES || env.LANG || '';
  return loc.startsWith('ja') ? 'ja' : 'en';
}

/** Every key, for the test that checks both languages are complete. */
export const messageKeys = Object.keys(en) as MessageKey[];
