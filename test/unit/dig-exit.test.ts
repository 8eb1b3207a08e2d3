/** `nodescope dig` exits like dig(1): 0 for any reply, 9 when the server never replied. */
import { describe, expect, it } from 'vitest';
import { DIG_NO_REPLY_EXIT, digExitCode } from '../../src/dns/dig.js';
import { makeExchange, makeNxdomain, makeTimeout } from './builders/dns.js';

describe('digExitCode', () => {
  it('is 0 for a reply, whatever its RCODE', () => {
    expect(digExitCode(makeExchange())).toBe(0);
    expect(digExitCode(makeNxdomain('nope.default.svc.cluster.local'))).toBe(0);
    expect(digExitCode(makeExchange({ outcome: 'servfail', rcode: 'SERVFAIL', answers: [] }))).toBe(0);
  });

  it('is 9 when no reply came: timeout, network error, bad reply, not captured, not sent', () => {
    expect(DIG_NO_REPLY_EXIT).toBe(9);
    for (const outcome of ['timeout', 'network-error', 'bad-reply', 'not-captured', 'failed'] as const) {
      expect(digExitCode(makeTimeout({ outcome })), outcome).toBe(9);
    }
  });
});
