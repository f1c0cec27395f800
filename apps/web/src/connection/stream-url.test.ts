import { describe, expect, it } from 'vitest';
import { streamUrl } from './stream-url.js';

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
