/**
 * nft -j documents edited away from nft's printed shape (unknown and reordered keys, escapes,
 * unicode, numbers of every form, nested sets, maps and concatenations, verdict maps, rules
 * of unlisted chains, other item kinds): the cases the direct reader
 * (test/unit/nft-json-direct.test.ts) and the lazy reader (test/unit/nft-json-lazy.test.ts)
 * are compared with their reference on. Each document is valid JSON.
 */
export const META = '{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}';
export const TABLE = '{"table": {"family": "ip", "name": "t", "handle": 1}}';
export const CHAIN = (name: string, extra = '') => `{"chain": {"family": "ip", "table": "t", "name": ${JSON.stringify(name)}, "handle": 2${extra}}}`;
export const RULE = (chain: string, expr: string, extra = '') => `{"rule": {"family": "ip", "table": "t", "chain": ${JSON.stringify(chain)}, "handle": 3${extra}, "expr": [${expr}]}}`;
export const doc = (...items: string[]) => `{"nftables": [${items.join(', ')}]}\n`;

export const SADDR = '{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": "10.0.0.1"}}';
export const JUMP = '{"jump": {"target": "c"}}';

/** Rule bodies (statement lists) of every shape the reader reads itself or hands on. */
export const STATEMENTS: Readonly<Record<string, string>> = {
  'kube-proxy endpoint rules': `${SADDR}, ${JUMP}`,
  'dnat to address and port': '{"match": {"op": "==", "left": {"meta": {"key": "l4proto"}}, "right": "tcp"}}, {"dnat": {"addr": "10.0.0.1", "port": 8080}}',
  'a numgen verdict map': '{"vmap": {"key": {"numgen": {"mode": "random", "mod": 2, "offset": 0}}, "data": {"set": [[0, {"goto": {"target": "c"}}], [1, {"goto": {"target": "d"}}]]}}}',
  'a concat verdict map on a named map': '{"vmap": {"key": {"concat": [{"payload": {"protocol": "ip", "field": "daddr"}}, {"meta": {"key": "l4proto"}}, {"payload": {"protocol": "th", "field": "dport"}}]}, "data": "@service-ips"}}',
  'set and prefix matches': '{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": "@cluster-ips"}}, {"match": {"op": "!=", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"prefix": {"addr": "10.128.0.0", "len": 9}}}}',
  'an anonymous set of concatenations and ranges': '{"match": {"op": "==", "left": {"concat": [{"meta": {"key": "l4proto"}}, {"payload": {"protocol": "th", "field": "dport"}}]}, "right": {"set": [{"concat": ["tcp", 80]}, {"concat": ["udp", {"range": [1000, 2000]}]}]}}}',
  'elem wrappers with timeouts and comments': '{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"set": [{"elem": {"val": "10.0.0.9", "timeout": 30, "comment": "x"}}, "10.0.0.8"]}}}',
  'a data map': '{"dnat": {"addr": {"map": {"key": {"numgen": {"mode": "inc", "mod": 2, "offset": 0}}, "data": {"set": [[0, "10.0.0.1"], [1, "10.0.0.2"]]}}}}}',
  'binop, ct, counters, masquerade, reject, log': '{"match": {"op": "==", "left": {"&": [{"meta": {"key": "mark"}}, 16384]}, "right": 0}}, {"match": {"op": "in", "left": {"ct": {"key": "state"}}, "right": ["established", "related"]}}, {"counter": {"packets": 12, "bytes": 3456}}, {"masquerade": {"flags": "fully-random"}}, {"reject": {"type": "icmp", "expr": "port-unreachable"}}, {"log": {"prefix": "p "}}',
  'verdicts': '{"accept": null}, {"drop": null}, {"return": null}, {"continue": null}, {"goto": {"target": "d"}}',
  'an empty statement list': '',
  'counters above 2^53 and above 2^64': '{"counter": {"packets": 9007199254740993, "bytes": 123456789012345678901234}}',
  'statements not modelled (raw payload, xt, named limit)': '{"match": {"op": "==", "left": {"payload": {"base": "ll", "offset": 0, "len": 8}}, "right": 1}}, {"xt": {"type": "match", "name": "comment"}}, {"limit": "lim1"}',
  'a match with an unknown operator': '{"match": {"op": "~", "left": {"meta": {"key": "mark"}}, "right": 1}}',
  'malformed statements': '{"match": {"op": "==", "left": {"meta": {"key": 5}}, "right": 1}}, {"dnat": {"addr": "1.2.3.4", "port": "x", "family": "ip9"}}, 5, {"a": 1, "b": 2}',
  'numbers of every form': '{"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": 1e3}}, {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": -0}}, {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": 1.5}}, {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": 1234567890123456}}, {"match": {"op": "<", "left": {"meta": {"key": "mark"}}, "right": -17}}, {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": true}}',
  'escapes and unicode in values': '{"match": {"op": "==", "left": {"meta": {"key": "iifname"}}, "right": "eth\\"0\\\\ \\u00e9 ノ 😀"}}, {"jump": {"target": "c\\u0041"}}',
};

/** Whole items around those rule bodies, and items of other shapes. */
export function editedDocuments(): Record<string, string> {
  const out: Record<string, string> = {};
  const chains = [CHAIN('c'), CHAIN('d'), CHAIN('cA')];
  for (const [name, expr] of Object.entries(STATEMENTS)) out[name] = doc(META, TABLE, ...chains, RULE('c', expr), RULE('d', expr));
  const base = [META, TABLE, ...chains];
  Object.assign(out, {
    'an unknown key in a rule': doc(...base, RULE('c', SADDR, ', "x-new": {"a": [1, 2]}')),
    'keys reordered in a rule': doc(...base, `{"rule": {"table": "t", "family": "ip", "handle": 3, "chain": "c", "expr": [${SADDR}]}}`),
    'keys reordered in a statement': doc(...base, RULE('c', '{"match": {"left": {"meta": {"key": "l4proto"}}, "op": "==", "right": "tcp"}}')),
    'a duplicate key in a rule (the last one wins)': doc(...base, RULE('c', SADDR).replace('"handle": 3', '"handle": 3, "handle": 4')),
    'a duplicate key in a statement': doc(...base, RULE('c', '{"jump": {"target": "c", "target": "d"}}')),
    'a rule comment with quotes, backslashes and unicode': doc(...base, RULE('c', SADDR, ', "comment": "a \\"q\\" \\\\ \\u00e9 ノ 😀 \\n"'), RULE('c', JUMP, ', "comment": "plain é"')),
    'a rule of a chain not listed': doc(...base, RULE('nowhere', SADDR)),
    'a rule of a table not listed': doc(META, TABLE, ...chains, RULE('c', SADDR).replace('"table": "t"', '"table": "u"')),
    'a rule of another family': doc(...base, RULE('c', SADDR).replace('"family": "ip"', '"family": "ip6"'), RULE('c', SADDR).replace('"family": "ip"', '"family": "ipx"')),
    'a chain with comment, a base chain, a chain of an unlisted table': doc(META, TABLE, CHAIN('c', ', "comment": "x"'), CHAIN('b', ', "type": "nat", "hook": "prerouting", "prio": -100, "policy": "accept"'), CHAIN('d').replace('"table": "t"', '"table": "u"')),
    'a chain listed twice': doc(...base, CHAIN('c').replace('"handle": 2', '"handle": 9')),
    'handles of every form': doc(...base, RULE('c', JUMP).replace('"handle": 3', '"handle": 1e2'), RULE('c', JUMP).replace('"handle": 3', '"handle": -5'), RULE('c', JUMP).replace('"handle": 3', '"handle": 12345678901234567')),
    'pretty-printed': JSON.stringify(JSON.parse(doc(...base, RULE('c', STATEMENTS['a numgen verdict map']!))), null, 2),
    'no space after separators': JSON.stringify(JSON.parse(doc(...base, RULE('c', `${SADDR}, ${JUMP}`)))),
    'sets and maps with elements, elements added later': doc(
      ...base,
      '{"set": {"family": "ip", "name": "s", "table": "t", "type": "ipv4_addr", "handle": 4, "flags": ["interval"], "elem": [{"prefix": {"addr": "10.0.0.0", "len": 8}}, {"range": ["10.1.0.1", "10.1.0.9"]}]}}',
      '{"map": {"family": "ip", "name": "m", "table": "t", "type": ["ipv4_addr", "inet_service"], "handle": 5, "map": "verdict", "elem": [[{"elem": {"val": {"concat": ["10.0.0.1", 80]}, "comment": "x"}}, {"goto": {"target": "c"}}]]}}',
      '{"element": {"family": "ip", "table": "t", "name": "s", "elem": ["10.2.0.1"]}}',
    ),
    'items of other kinds and shapes': doc(...base, '{"counter": {"family": "ip", "table": "t", "name": "k", "handle": 6, "packets": 1, "bytes": 2}}', '{"flowtable": {"family": "ip", "table": "t", "name": "f", "handle": 7}}', '{"chain": 5}', '"a string item"', '{"add": {"rule": {"family": "ip", "table": "t", "chain": "c", "expr": []}}}'),
    'schema version 2': doc(META.replace('"json_schema_version": 1', '"json_schema_version": 2'), TABLE, CHAIN('c'), RULE('c', SADDR)),
  });
  return out;
}
