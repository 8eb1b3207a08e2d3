/**
 * Parser for /etc/resolv.conf (resolv.conf(5)), classifying lines exactly as glibc's
 * `res_vinit_1` does: comments only when `;`/`#` is the first character, a directive
 * only when its keyword starts the line and is followed by a blank, tokens separated by
 * spaces and tabs. Lines glibc ignores are kept (kind `ignored`) and reported. The
 * effective configuration is derived by {@link buildResolvConf} (src/model/resolv.ts).
 *
 * Line-fed ({@link createResolvConfParser}) and never throws.
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import { buildResolvConf, type ResolvConf, type ResolvLine } from '../model/resolv.js';
import type { LineParser } from './ipvsadm.js';

const KEYWORDS = ['nameserver', 'search', 'domain', 'options', 'sortlist'] as const;
type Keyword = (typeof KEYWORDS)[number];

/** glibc's `MATCH(line, name)`: keyword at column 0 followed by a space or tab. */
function matchKeyword(line: string): Keyword | null {
  return KEYWORDS.find((k) => line.startsWith(k) && (line[k.length] === ' ' || line[k.length] === '\t')) ?? null;
}

/** Classifies one line (without its newline) as glibc would; `note` receives what glibc ignores. */
export function classifyResolvLine(
  text: string,
  line: number,
  note: (severity: 'warning' | 'info', code: string, message: string) => void,
): ResolvLine {
  if (text.startsWith(';') || text.startsWith('#')) return { kind: 'comment', line, text };
  if (text.trim() === '') return { kind: 'blank', line, text };
  const kw = matchKeyword(text);
  if (kw === null) {
    const word = text.trimStart().split(/[ \t]/)[0] ?? '';
    if ((KEYWORDS as readonly string[]).includes(word) && text !== text.trimStart()) {
      note('warning', 'indented-directive', `glibc ignores "${word}" unless it starts the line`);
    } else if (/^[#;]/.test(text.trimStart())) {
      note('warning', 'indented-comment', 'not a comment for glibc (the marker must be the first character); ignored');
    } else if ((KEYWORDS as readonly string[]).includes(word)) {
      note('warning', 'empty-directive', `"${word}" without a value is ignored`);
    } else {
      note('warning', 'unknown-line', 'not a resolv.conf directive; glibc ignores it');
    }
    return { kind: 'ignored', line, text };
  }
  const tokens = text.slice(kw.length).split(/[ \t]+/).filter((t) => t !== '');
  if (tokens.length === 0) {
    note('warning', 'empty-directive', `"${kw}" without a value is ignored`);
    return { kind: 'ignored', line, text };
  }
  switch (kw) {
    case 'nameserver':
      return { kind: 'nameserver', line, address: tokens[0]!, ignored: tokens.slice(1) };
    case 'search':
      return { kind: 'search', line, domains: tokens };
    case 'domain':
      return { kind: 'domain', line, domain: tokens[0]!, ignored: tokens.slice(1) };
    case 'options':
      return { kind: 'options', line, tokens };
    case 'sortlist':
      return { kind: 'sortlist', line, entries: tokens };
  }
}

/** Creates a line-fed resolv.conf parser; `end()` derives the configuration and reports. Never throws. */
export function createResolvConfParser(origin: string): LineParser<ResolvConf> {
  const diagnostics: Diagnostic[] = [];
  const lines: ResolvLine[] = [];
  const texts: string[] = [];
  const push = (input: string): void => {
    const lineNo = lines.length + 1;
    let text = input;
    if (text.endsWith('\r')) {
      text = text.slice(0, -1);
      diagnostics.push(diagnostic('warning', origin, lineNo, text, 'crlf',
        'CRLF line end: glibc keeps the carriage return in the last token (a nameserver line then fails to parse)'));
    }
    texts.push(text);
    lines.push(classifyResolvLine(text, lineNo, (sev, code, message) => {
      diagnostics.push(diagnostic(sev, origin, lineNo, text, code, message));
    }));
  };
  const end = (): ParseResult<ResolvConf> => {
    const { conf, notes } = buildResolvConf(lines);
    for (const n of notes) diagnostics.push(diagnostic(n.severity, origin, n.line, texts[n.line - 1] ?? '', n.code, n.message));
    diagnostics.sort((a, b) => a.line - b.line);
    return { value: conf, diagnostics };
  };
  return { push, end };
}

/** Parses a whole resolv.conf text (LF or CRLF, final newline optional). Never throws. */
export function parseResolvConf(text: string, origin: string): ParseResult<ResolvConf> {
  const parser = createResolvConfParser(origin);
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const l of lines) parser.push(l);
  return parser.end();
}
