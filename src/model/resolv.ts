/**
 * /etc/resolv.conf as the glibc stub resolver reads it (resolv.conf(5); glibc
 * `resolv/res_init.c` `res_vinit_1` and `res_setoptions`, 2.26 and later):
 *
 * - a directive is a keyword at the very start of a line followed by a blank
 *   (`MATCH()`); a line starting with `;` or `#` is a comment; anything else is ignored;
 * - `domain` and `search` both set the search list, the last one in the file wins;
 * - every valid `nameserver` is kept, glibc queries the first three (`MAXNS`);
 * - `options` tokens: `ndots:N` (capped at 15), `timeout:N` seconds (capped at 30),
 *   `attempts:N` (capped at 5), flags; unknown options are ignored;
 * - no `nameserver` → 127.0.0.1; no `search`/`domain` → the domain part of the host name.
 *
 * The model keeps every line (so a pane can show the file and a formatter can write
 * it back) and the effective configuration derived from them.
 */

/** One line of resolv.conf, as classified by glibc's parser. `line` is 1-based. */
export type ResolvLine =
  | {
      readonly kind: 'nameserver';
      readonly line: number;
      /** The first token as written (`10.96.0.10`, `fd00::a%eth0`). */
      readonly address: string;
      /** Tokens after the address, which glibc ignores. */
      readonly ignored: readonly string[];
    }
  | { readonly kind: 'search'; readonly line: number; readonly domains: readonly string[] }
  | { readonly kind: 'domain'; readonly line: number; readonly domain: string; readonly ignored: readonly string[] }
  | { readonly kind: 'options'; readonly line: number; readonly tokens: readonly string[] }
  | { readonly kind: 'sortlist'; readonly line: number; readonly entries: readonly string[] }
  /** `text` includes the `;`/`#` marker. */
  | { readonly kind: 'comment'; readonly line: number; readonly text: string }
  | { readonly kind: 'blank'; readonly line: number; readonly text: string }
  /** A line glibc ignores: unknown keyword, keyword not at column 0, keyword without value. */
  | { readonly kind: 'ignored'; readonly line: number; readonly text: string };

/** A nameserver glibc accepted: `family` of the address, `scopeId` the `%zone` of a link-local IPv6 server. */
export interface ResolvNameserver {
  readonly address: string;
  readonly family: 'inet' | 'inet6';
  readonly scopeId: string | null;
  readonly line: number;
}

/**
 * Effective `options` (glibc `res_setoptions`; the version that added each flag in
 * brackets):
 * - `ndots` (default 1, max 15): dots a name needs to be tried as-is first;
 * - `timeout` seconds per try (default 5, max 30); `attempts` rounds over the servers
 *   (default 2, max 5);
 * - `rotate`: round-robin the servers; `edns0`; `singleRequest` (2.10): send A and AAAA
 *   one after the other; `singleRequestReopen` (2.9): same, on a new socket;
 *   `noTldQuery` (2.14, also `no_tld_query`): never query a dotless name as-is; `useVc`
 *   (2.14): TCP; `noReload` (2.26); `trustAd` (2.31); `noAaaa` (2.36): never send AAAA.
 */
export interface ResolvOptions {
  readonly ndots: number;
  readonly timeout: number;
  readonly attempts: number;
  readonly rotate: boolean;
  readonly edns0: boolean;
  readonly singleRequest: boolean;
  readonly singleRequestReopen: boolean;
  readonly noTldQuery: boolean;
  readonly useVc: boolean;
  readonly noReload: boolean;
  readonly trustAd: boolean;
  readonly noAaaa: boolean;
}

/**
 * A parsed resolv.conf.
 * - `lines`: every line in order (line i+1 is `lines[i]`);
 * - `nameservers`: every accepted server in file order (glibc uses the first 3, see
 *   {@link RESOLV_MAXNS}); empty means glibc falls back to 127.0.0.1;
 * - `search`: the effective search list (from the last `search` or `domain` line,
 *   leading dots kept as written), empty when neither is present;
 * - `searchLine`: the line the search list came from, null when none;
 * - `sortlist`: sortlist entries as written.
 */
export interface ResolvConf {
  readonly lines: readonly ResolvLine[];
  readonly nameservers: readonly ResolvNameserver[];
  readonly search: readonly string[];
  readonly searchLine: number | null;
  readonly options: ResolvOptions;
  readonly sortlist: readonly string[];
}

/** What {@link buildResolvConf} noticed about one line: severity, stable code, message. */
export interface ResolvNote {
  readonly line: number;
  readonly severity: 'error' | 'warning' | 'info';
  readonly code: string;
  readonly message: string;
}

/** glibc queries at most this many name servers (`MAXNS`). */
export const RESOLV_MAXNS = 3;
/** glibc caps: `RES_MAXNDOTS`, `RES_MAXRETRANS` (seconds), `RES_MAXRETRY`. */
export const RESOLV_LIMITS = { ndots: 15, timeout: 30, attempts: 5 } as const;
/** glibc defaults: ndots 1, `RES_TIMEOUT` 5 s, `RES_DFLRETRY` 2. */
export const RESOLV_DEFAULT_OPTIONS: ResolvOptions = {
  ndots: 1,
  timeout: 5,
  attempts: 2,
  rotate: false,
  edns0: false,
  singleRequest: false,
  singleRequestReopen: false,
  noTldQuery: false,
  useVc: false,
  noReload: false,
  trustAd: false,
  noAaaa: false,
};

type FlagKey = Exclude<keyof ResolvOptions, 'ndots' | 'timeout' | 'attempts'>;
/** Flag options in glibc's table order; matched by prefix as glibc's `strncmp` does. */
const FLAG_OPTIONS: ReadonlyArray<readonly [string, FlagKey]> = [
  ['rotate', 'rotate'],
  ['edns0', 'edns0'],
  ['single-request-reopen', 'singleRequestReopen'],
  ['single-request', 'singleRequest'],
  ['no_tld_query', 'noTldQuery'],
  ['no-tld-query', 'noTldQuery'],
  ['no-reload', 'noReload'],
  ['use-vc', 'useVc'],
  ['trust-ad', 'trustAd'],
  ['no-aaaa', 'noAaaa'],
];
/** Options older glibc knew and current glibc ignores. */
const LEGACY_OPTIONS = ['inet6', 'debug', 'no-check-names', 'ip6-bytestring', 'ip6-dotint', 'no-ip6-dotint', 'insecure1', 'insecure2'];

/** glibc `atoi`: leading digits, 0 when there are none. */
const atoi = (s: string): number => {
  const m = /^\s*([+-]?\d+)/.exec(s);
  return m ? Number(m[1]) : 0;
};

/** Interprets an `options` token list into `into`, noting caps and unknown tokens. */
function applyOptions(tokens: readonly string[], line: number, into: { -readonly [K in keyof ResolvOptions]: ResolvOptions[K] }, notes: ResolvNote[]): void {
  for (const t of tokens) {
    const num = /^(ndots|timeout|attempts):(.*)$/.exec(t);
    if (num) {
      const key = num[1] as 'ndots' | 'timeout' | 'attempts';
      const n = atoi(num[2]!);
      if (!/^\d+$/.test(num[2]!)) notes.push({ line, severity: 'warning', code: 'bad-option-value', message: `${t}: glibc reads ${n}` });
      if (n > RESOLV_LIMITS[key]) notes.push({ line, severity: 'warning', code: 'option-capped', message: `${t} is capped at ${RESOLV_LIMITS[key]}` });
      into[key] = Math.min(n, RESOLV_LIMITS[key]);
      continue;
    }
    const flag = FLAG_OPTIONS.find(([name]) => t.startsWith(name));
    if (flag) {
      into[flag[1]] = true;
      if (t !== flag[0]) notes.push({ line, severity: 'info', code: 'option-prefix', message: `${t} is read as ${flag[0]} (glibc matches option prefixes)` });
    } else if (LEGACY_OPTIONS.includes(t)) {
      notes.push({ line, severity: 'info', code: 'legacy-option', message: `${t} is ignored by current glibc` });
    } else {
      notes.push({ line, severity: 'warning', code: 'unknown-option', message: `unknown option ${t} (ignored)` });
    }
  }
}

/** An IPv4 dotted quad (what `inet_aton_exact` accepts in practice) or IPv6 with an optional `%zone`. */
function nameserverAddress(text: string): { family: 'inet' | 'inet6'; address: string; scopeId: string | null } | null {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(text) && text.split('.').every((p) => Number(p) <= 255)) {
    return { family: 'inet', address: text, scopeId: null };
  }
  const pct = text.indexOf('%');
  const addr = pct < 0 ? text : text.slice(0, pct);
  const scopeId = pct < 0 ? null : text.slice(pct + 1);
  if (!addr.includes(':') || !/^[0-9A-Fa-f:.]+$/.test(addr)) return null;
  const halves = addr.split('::');
  if (halves.length > 2) return null;
  const groups = halves.flatMap((h) => (h === '' ? [] : h.split(':')));
  const ok = groups.every((g, i) => /^[0-9A-Fa-f]{1,4}$/.test(g) || (i === groups.length - 1 && /^\d{1,3}(\.\d{1,3}){3}$/.test(g)));
  const count = groups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  if (!ok || (halves.length === 1 ? count !== 8 : count > 7)) return null;
  return { family: 'inet6', address: addr, scopeId };
}

/**
 * Derives the effective configuration from classified lines, exactly as glibc would,
 * and notes what glibc ignores or changes (invalid nameserver, servers past the third,
 * an overridden search/domain line, capped or unknown options, a search domain that
 * looks like an inline comment). Pure; never throws.
 */
export function buildResolvConf(lines: readonly ResolvLine[]): { conf: ResolvConf; notes: ResolvNote[] } {
  const notes: ResolvNote[] = [];
  const nameservers: ResolvNameserver[] = [];
  const options = { ...RESOLV_DEFAULT_OPTIONS };
  let search: readonly string[] = [];
  let searchLine: number | null = null;
  const sortlist: string[] = [];
  for (const l of lines) {
    switch (l.kind) {
      case 'nameserver': {
        const a = nameserverAddress(l.address);
        if (!a) {
          notes.push({ line: l.line, severity: 'warning', code: 'bad-nameserver', message: `${l.address} is not an IP address; glibc ignores the line` });
          break;
        }
        nameservers.push({ ...a, line: l.line });
        if (nameservers.length > RESOLV_MAXNS) {
          notes.push({ line: l.line, severity: 'info', code: 'nameserver-unused', message: `glibc queries only the first ${RESOLV_MAXNS} name servers` });
        }
        if (l.ignored.length > 0) notes.push({ line: l.line, severity: 'info', code: 'trailing-ignored', message: `ignored after the address: ${l.ignored.join(' ')}` });
        break;
      }
      case 'search':
      case 'domain':
        if (searchLine !== null) {
          notes.push({ line: searchLine, severity: 'info', code: 'search-overridden', message: `replaced by the ${l.kind} line ${l.line} (the last search/domain line wins)` });
        }
        search = l.kind === 'search' ? l.domains : [l.domain];
        searchLine = l.line;
        if (l.kind === 'domain' && l.ignored.length > 0) {
          notes.push({ line: l.line, severity: 'info', code: 'trailing-ignored', message: `domain takes one name; ignored: ${l.ignored.join(' ')}` });
        }
        for (const d of search) {
          if (d.startsWith('#') || d.startsWith(';')) {
            notes.push({ line: l.line, severity: 'warning', code: 'inline-comment', message: `glibc has no inline comments: "${d}" is used as a search domain` });
          }
        }
        break;
      case 'options':
        applyOptions(l.tokens, l.line, options, notes);
        break;
      case 'sortlist':
        sortlist.push(...l.entries);
        break;
      default:
        break;
    }
  }
  return { conf: { lines, nameservers, search, searchLine, options, sortlist }, notes };
}

/**
 * Writes the lines back as resolv.conf text, one per {@link ResolvLine}, tokens joined
 * by one space, comments/blank/ignored lines verbatim, with a final newline.
 */
export function formatResolvConf(conf: Pick<ResolvConf, 'lines'>): string {
  const text = conf.lines.map((l) => {
    switch (l.kind) {
      case 'nameserver':
        return ['nameserver', l.address, ...l.ignored].join(' ');
      case 'search':
        return ['search', ...l.domains].join(' ');
      case 'domain':
        return ['domain', l.domain, ...l.ignored].join(' ');
      case 'options':
        return ['options', ...l.tokens].join(' ');
      case 'sortlist':
        return ['sortlist', ...l.entries].join(' ');
      default:
        return l.text;
    }
  });
  return `${text.join('\n')}\n`;
}
