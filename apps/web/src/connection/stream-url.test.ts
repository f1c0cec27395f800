import { describe, expect, it } from 'vitest';
import { streamUrl, streamUrls } from './stream-url.js';

describe('streamUrl', () => {
  it('uses ws for http and wss for https, keeping the port', () => {
    expect(streamUrl({ protocol: 'http:', host: '127.0.0.1:8080' })).toBe('ws://127.0.0.1:8080/stream');
    expect(streamUrl({ protocol: 'https:', host: 'desk.example.com' })).toBe('wss://desk.example.com/stream');
  });
  it('rejects pages not served over http(s)', () => {
    expect(() => streamUrl({ protocol: 'file:', host: '' })).toThrow(/'location.protocol' \("file:"\)/);
    expect(() => streamUrl({ protocol: 'http:', host: '' })).toThrow(/'location.host'/);
  });
});

describe('streamUrls', () => {
  const page = { protocol: 'http:', host: 'node-a:8080' };
  it('puts the page\'s own server first, then the listed ones in order, without repeats', () => {
    expect(streamUrls(page)).toEqual(['ws://node-a:8080/stream']);
    expect(streamUrls(page, 'node-b:8080, http://node-c:8080 ,ws://node-d:9000/stream', 'wss://node-e', 'node-a:8080,node-b:8080')).toEqual([
      'ws://node-a:8080/stream',
      'ws://node-b:8080/stream',
      'ws://node-c:8080/stream',
      'ws://node-d:9000/stream',
      'wss://node-e/stream',
    ]);
    expect(streamUrls({ protocol: 'https:', host: 'a.example.com' }, 'b.example.com,https://c.example.com/', '', undefined)).toEqual([
      'wss://a.example.com/stream',
      'wss://b.example.com/stream',
      'wss://c.example.com/stream',
    ]);
    expect(streamUrls(page, '[::1]:8081,10.0.0.2')).toEqual(['ws://node-a:8080/stream', 'ws://[::1]:8081/stream', 'ws://10.0.0.2/stream']);
  });
  it('names a bad entry', () => {
    expect(() => streamUrls(page, 'node-b:8080,ftp://x')).toThrow(new TypeError('server "ftp://x" must be host:port, http(s)://host:port or ws(s)://host:port/stream'));
    expect(() => streamUrls(page, 'node b')).toThrow(/server "node b"/);
  });
});
