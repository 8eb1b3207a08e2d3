/**
 * Rule semantics of both evaluators on small hand-written rulesets over the lab node's
 * network: jump/goto/return, policies, negation, interfaces with wildcards, multiport,
 * marks, conntrack state, -m recent with and without its list, nft sets (anonymous,
 * named, intervals, prefixes, concatenations), vmaps, numgen dnat maps, and the
 * `unsupported` stop for what is not modelled.
 */
import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { walkPacket } from '../../src/trace/engine.js';
import type { TraceInput } from '../../src/trace/input.js';
import type { TraceResult } from '../../src/trace/types.js';
import { caliName } from '../lab/names.js';
import { labInput, labPod, packet } from './trace-builders.js';

const net = (() => {
  const { addrs, routes } = labInput('iptables');
  return { addrs, routes };
})();
const client = labPod('client');
const web2 = labPod('web-2');

/** An iptables-save dump from `{table: rules}`; user chains are declared from the rules. */
function iptablesDump(tables: Readonly<Record<string, readonly string[]>>, policies: Readonly<Record<string, string>> = {}): TraceInput {
  const builtins = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);
  let text = '';
  for (const [table, rules] of Object.entries(tables)) {
    const chains = new Set<string>();
    for (const r of rules) {
      const m = /^-A (\S+)/.exec(r);
      if (m) chains.add(m[1]!);
      const t = / -[jg] (\S+)/.exec(r);
      if (t && /^[A-Z][A-Z0-9-]*[a-z0-9-]*$/.test(t[1]!) && t[1]!.startsWith('X-')) chains.add(t[1]!);
    }
    text += `*${table}\n`;
    for (const c of chains) text += builtins.has(c) ? `:${c} ${policies[`${table}/${c}`] ?? 'ACCEPT'} [0:0]\n` : `:${c} - [0:0]\n`;
    text += `${rules.join('\n')}\nCOMMIT\n`;
  }
  const parsed = parseIptablesSave(text, 'test', { family: 'ipv4' });
  expect(parsed.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
  return { ...net, iptables: [parsed.value] };
}

function nftInput(text: string): TraceInput {
  const parsed = parseNftText(text, 'test');
  expect(parsed.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
  return { ...net, nft: parsed.value };
}

const toWeb2 = (extra: { flags?: string; mark?: string; port?: number } = {}) =>
  packet({ from: `${client.ip}:40000`, to: `${web2.ip}:${extra.port ?? 8080}/tcp`, ...(extra.flags ? { flags: extra.flags } : {}), ...(extra.mark ? { mark: extra.mark } : {}) });

function ruleSteps(r: TraceResult) {
  return r.steps.filter((s) => s.kind === 'rule').map((s) => `${s.chain}#${s.ruleIndex}${s.matched ? '✓' : '✗'}${s.matched ? ` ${s.verdict}` : ''}`);
}

describe('iptables evaluator', () => {
  it('goto does not come back: the end of the goto target returns to the caller of the chain that jumped', () => {
    const input = iptablesDump({ filter: ['-A FORWARD -j X-A', '-A X-A -g X-B', '-A X-A -j DROP', '-A X-B -p udp -j DROP'] });
    const r = walkPacket(input, toWeb2());
    expect(ruleSteps(r)).toEqual(['FORWARD#1✓ jump X-A', 'X-A#1✓ goto X-B', 'X-B#1✗']);
    expect(r.verdict.kind).toBe('forwarded');
  });

  it('RETURN goes back to the caller; the end of the built-in chain applies its policy', () => {
    const input = iptablesDump({ filter: ['-A FORWARD -j X-A', '-A FORWARD -p tcp -j X-B', '-A X-A -j RETURN', '-A X-A -j ACCEPT', '-A X-B -s 10.0.0.0/8 -j RETURN'] }, { 'filter/FORWARD': 'DROP' });
    const r = walkPacket(input, toWeb2());
    expect(ruleSteps(r)).toEqual(['FORWARD#1✓ jump X-A', 'X-A#1✓ return', 'FORWARD#2✓ jump X-B', 'X-B#1✓ return']);
    expect(r.steps.find((s) => s.kind === 'policy')!.verdict).toBe('drop');
    expect(r.verdict.kind).toBe('dropped');
  });

  it('negation, interface wildcards, multiport and tcp flags', () => {
    const input = iptablesDump({
      filter: [
        `-A FORWARD ! -s ${client.ip}/32 -j DROP`,
        '-A FORWARD ! -i cali+ -j DROP',
        `-A FORWARD -o ${caliName(web2)} -p tcp -m multiport --dports 80,8000:9000 -m tcp --tcp-flags SYN,ACK SYN -j X-OK`,
        '-A FORWARD -j DROP',
        '-A X-OK -j ACCEPT',
      ],
    });
    const syn = walkPacket(input, toWeb2());
    expect(ruleSteps(syn)).toEqual(['FORWARD#1✗', 'FORWARD#2✗', 'FORWARD#3✓ jump X-OK', 'X-OK#1✓ accept']);
    expect(syn.verdict.kind).toBe('forwarded');
    const ack = walkPacket(input, toWeb2({ flags: 'syn,ack' }));
    expect(ack.verdict.kind).toBe('dropped');
    const otherPort = walkPacket(input, toWeb2({ port: 9443 }));
    expect(otherPort.steps.find((s) => s.ruleIndex === 3)!.reason).toMatch(/dport 9443 not in 80,8000:9000/);
  });

  it('MARK targets change the mark, -m mark reads it, the mark survives to later hooks', () => {
    const input = iptablesDump({
      mangle: ['-A PREROUTING -j MARK --set-xmark 0x10/0xff', '-A PREROUTING -j MARK --or-mark 0x4000'],
      filter: ['-A FORWARD -m mark --mark 0x4010/0x40ff -j ACCEPT', '-A FORWARD -j DROP'],
    });
    const r = walkPacket(input, toWeb2({ mark: '0x3' }));
    expect(r.steps.filter((s) => s.table === 'mangle').map((s) => s.header.mark)).toEqual([0x10, 0x4010, 0x4010]);
    expect(r.verdict.kind).toBe('forwarded');
  });

  it('conntrack state: NEW before, DNAT after destination NAT', () => {
    const input = iptablesDump({
      nat: [`-A PREROUTING -p tcp -d 10.96.9.9 -j DNAT --to-destination ${web2.ip}:8080`],
      filter: ['-A FORWARD -m conntrack --ctstate DNAT -j ACCEPT', '-A FORWARD -j DROP'],
    });
    const r = walkPacket(input, packet({ from: client.ip, to: '10.96.9.9:80/tcp' }));
    expect(r.verdict.kind).toBe('forwarded');
    expect(r.final.dst).toBe(web2.ip);
    const direct = walkPacket(input, toWeb2());
    expect(direct.verdict.kind).toBe('dropped');
  });

  it('-m recent --rcheck is unsupported without the list, and evaluated with it', () => {
    const rules = { filter: ['-A FORWARD -m recent --rcheck --seconds 60 --name SEEN --mask 255.255.255.255 --rsource -j DROP'] };
    const without = walkPacket(iptablesDump(rules), toWeb2());
    expect(without.verdict.kind).toBe('unsupported');
    expect(without.steps.at(-1)!.reason).toMatch(/xt_recent\/SEEN/);
    const input = { ...iptablesDump(rules), xtRecent: { SEEN: [{ address: client.ip, ageSeconds: 10 }] } };
    expect(walkPacket(input, toWeb2()).verdict.kind).toBe('dropped');
    const old = { ...input, xtRecent: { SEEN: [{ address: client.ip, ageSeconds: 600 }] } };
    expect(walkPacket(old, toWeb2()).verdict.kind).toBe('forwarded');
  });

  it('stops with an unsupported step at a match it does not model, and never guesses past it', () => {
    const input = iptablesDump({ filter: ['-A FORWARD -m physdev --physdev-in veth0 -j DROP', '-A FORWARD -j ACCEPT'] });
    const r = walkPacket(input, toWeb2());
    expect(r.verdict.kind).toBe('unsupported');
    const last = r.steps.at(-1)!;
    expect(last.kind).toBe('unsupported');
    expect(last.reason).toMatch(/physdev/);
    expect(r.steps.some((s) => s.kind === 'final')).toBe(false);
    expect(r.conntrack).toBeNull();
  });

  it('a jump to a chain that is not in the capture is unsupported', () => {
    const parsed = parseIptablesSave('-A FORWARD -j KUBE-MISSING\n', 'fragment', { family: 'ipv4', table: 'filter' });
    const r = walkPacket({ ...net, iptables: [parsed.value] }, toWeb2());
    expect(r.verdict.kind).toBe('unsupported');
  });
});

const NFT_BASE = `table inet t {
  set allowed { type ipv4_addr . inet_service; flags interval; elements = { 10.244.0.0/24 . 8000-8100, 10.9.0.1 . 53 } }
  chain fwd {
    type filter hook forward priority 0; policy drop;
    iifname != "cali*" drop
    ip daddr . tcp dport @allowed jump ok
    tcp dport { 22, 443 } accept
  }
  chain ok {
    meta mark set meta mark | 0x20
    ct state { established, related } accept
    ct state new accept
  }
}
`;

describe('nft evaluator', () => {
  it('named interval sets of concatenations, wildcards, mark set and ct state', () => {
    const r = walkPacket(nftInput(NFT_BASE), toWeb2());
    expect(ruleSteps(r)).toEqual(['fwd#1✗', 'fwd#2✓ jump ok', 'ok#1✓ continue', 'ok#2✗', 'ok#3✓ accept']);
    expect(r.final.mark).toBe(0x20);
    expect(r.verdict.kind).toBe('forwarded');
    const blocked = walkPacket(nftInput(NFT_BASE), toWeb2({ port: 9000 }));
    expect(blocked.steps.find((s) => s.kind === 'policy')!.verdict).toBe('drop');
    expect(blocked.verdict.kind).toBe('dropped');
    const anon = walkPacket(nftInput(NFT_BASE), toWeb2({ port: 443 }));
    expect(ruleSteps(anon).at(-1)).toBe('fwd#3✓ accept');
  });

  it('a dnat map keyed by numgen is a branch point with every endpoint', () => {
    const text = `table ip lb {
  chain pre {
    type nat hook prerouting priority dstnat; policy accept;
    ip daddr 10.96.7.7 tcp dport 8080 dnat to numgen random mod 4 map { 0-2 : ${web2.ip}, 3 : ${labPod('web-1').ip} }
  }
}
`;
    const input = nftInput(text);
    const spec = packet({ from: client.ip, to: '10.96.7.7:8080/tcp' });
    const r = walkPacket(input, spec, { branch: { kind: 'endpoint', endpoint: `${labPod('web-1').ip}:8080` } });
    const branches = r.steps.find((s) => s.branches)!.branches!;
    expect(branches.map((b) => [b.endpoint, b.probability])).toEqual([
      [`${web2.ip}:8080`, 0.75],
      [`${labPod('web-1').ip}:8080`, 0.25],
    ]);
    expect(r.final.dst).toBe(labPod('web-1').ip);
    expect(r.final.dport).toBe(8080);
  });

  it('limit and other stateful statements are unsupported', () => {
    const text = 'table ip f {\n  chain fwd {\n    type filter hook forward priority 0; policy accept;\n    limit rate 10/second accept\n  }\n}\n';
    const r = walkPacket(nftInput(text), toWeb2());
    expect(r.verdict.kind).toBe('unsupported');
    expect(r.steps.at(-1)!.reason).toMatch(/limit/);
  });

  it('runs base chains of every table at a hook in priority order, nat chains in the NAT station', () => {
    const text = `table ip a {
  chain late { type filter hook prerouting priority 10; policy accept; counter }
  chain natpre { type nat hook prerouting priority -90; policy accept; ip daddr 10.96.7.7 dnat to ${web2.ip} }
}
table inet b {
  chain early { type filter hook prerouting priority -250; policy accept; counter }
  chain first-nat { type nat hook prerouting priority -110; policy accept; ip daddr 10.96.7.7 dnat to ${labPod('web-1').ip} }
}
`;
    const r = walkPacket(nftInput(text), packet({ from: client.ip, to: '10.96.7.7:8080/tcp' }));
    const order = r.steps.filter((s) => s.hook === 'prerouting').map((s) => s.chain ?? s.kind);
    // early (-250) → conntrack (-200) → nat station (-100): first-nat (-110) binds, natpre never runs → late (10).
    expect(order).toEqual(['early', 'early', 'conntrack', 'first-nat', 'nat', 'late', 'late']);
    expect(r.final.dst).toBe(labPod('web-1').ip);
  });
});
