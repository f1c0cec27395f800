import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEMO_RISK_RULES, loadConfig } from './config.js';
import { CHECKOUT_JOURNAL_DIR } from './config-spec.js';

const load = (sources: Parameters<typeof loadConfig>[0] = {}) => loadConfig({ randomSecret: () => 's'.repeat(32), ...sources });

describe('orders settings', () => {
  it('default to orders off for embedded servers, with the engine defaults otherwise', () => {
    expect(load().orders).toEqual({ journalDir: '', journalTruncateToConsistent: false, fsync: true, commitWindowUs: 100, maxQuantity: 1_000_000_000, defaultTick: 0.00001, maxPriceTicks: 1_000_000_000, simulatorSeed: 1, fillIntervalMs: 300, endOfDay: '22:00', risk: DEMO_RISK_RULES });
  });

  it('the command default is .data/journal of this checkout (gitignored)', () => {
    expect(path.isAbsolute(CHECKOUT_JOURNAL_DIR)).toBe(true);
    expect(CHECKOUT_JOURNAL_DIR.endsWith(`${path.sep}.data${path.sep}journal`)).toBe(true);
    expect(path.dirname(path.dirname(CHECKOUT_JOURNAL_DIR))).toBe(path.resolve(new URL('../../..', import.meta.url).pathname));
    // flags beat the command default; an empty flag turns orders off
    const overrides = { orders: { journalDir: CHECKOUT_JOURNAL_DIR } };
    expect(load({ overrides }).orders.journalDir).toBe(CHECKOUT_JOURNAL_DIR);
    expect(load({ overrides, argv: ['--journal-dir', '/var/tw'] }).orders.journalDir).toBe('/var/tw');
    expect(load({ overrides, argv: ['--journal-dir='] }).orders.journalDir).toBe('');
  });

  it('reads every order setting from env and flags', () => {
    const c = load({
      env: { TIDEWIRE_JOURNAL_DIR: 'j', TIDEWIRE_ORDER_DEFAULT_TICK: '0.25', TIDEWIRE_ORDER_MAX_PRICE_TICKS: '40000', TIDEWIRE_SIMULATOR_SEED: '7' },
      argv: ['--no-journal-fsync', '--journal-truncate-to-consistent', '--journal-commit-window-us', '0', '--order-max-quantity', '5000', '--fill-interval-ms', '20', '--orders-end-of-day', '21:30'],
    });
    expect(c.orders).toEqual({ journalDir: 'j', journalTruncateToConsistent: true, fsync: false, commitWindowUs: 0, maxQuantity: 5000, defaultTick: 0.25, maxPriceTicks: 40_000, simulatorSeed: 7, fillIntervalMs: 20, endOfDay: '21:30', risk: DEMO_RISK_RULES });
    expect(load({ argv: ['--orders-end-of-day='] }).orders.endOfDay).toBe('');
    expect(load({ env: { TIDEWIRE_JOURNAL_TRUNCATE_TO_CONSISTENT: 'true' } }).orders.journalTruncateToConsistent).toBe(true);
    expect(load({ argv: ['--order-default-tick', '1e-4'] }).orders.defaultTick).toBe(0.0001);
    expect(load({ overrides: { orders: { defaultTick: 0.5 } } }).orders.defaultTick).toBe(0.5);
    expect(load({ argv: ['--order-max-price-ticks', '1000000'] }).orders.maxPriceTicks).toBe(1_000_000);
  });

  it('stops startup on a bad value, naming the setting, the rule and the value', () => {
    expect(() => load({ argv: ['--order-default-tick', 'abc'] })).toThrow(new ConfigError('--order-default-tick must be a number 1e-12..1000000, got "abc"'));
    expect(() => load({ argv: ['--order-default-tick', '0'] })).toThrow(ConfigError);
    expect(() => load({ argv: ['--order-default-tick', 'Infinity'] })).toThrow(ConfigError);
    expect(() => load({ argv: ['--order-max-price-ticks', '1000000001'] })).toThrow(new ConfigError('--order-max-price-ticks must be an integer 1..1000000000, got "1000000001"'));
    expect(() => load({ env: { TIDEWIRE_ORDER_MAX_PRICE_TICKS: '0.5' } })).toThrow(ConfigError);
    expect(() => load({ env: { TIDEWIRE_ORDER_MAX_QUANTITY: '0' } })).toThrow('TIDEWIRE_ORDER_MAX_QUANTITY must be an integer 1..9007199254740991, got "0"');
    expect(() => load({ overrides: { orders: { fsync: 'yes please' } } })).toThrow(ConfigError);
    expect(() => load({ overrides: { orders: { journal: 'x' } } })).toThrow('unknown setting "orders.journal"');
    expect(() => load({ argv: ['--journal-commit-window-us', '10001'] })).toThrow(new ConfigError('--journal-commit-window-us must be an integer 0..10000, got "10001"'));
    expect(() => load({ argv: ['--orders-end-of-day', '24:00'] })).toThrow(new ConfigError('--orders-end-of-day must be "HH:MM" (UTC, 00:00..23:59) or empty, got "24:00"'));
    expect(() => load({ overrides: { orders: { endOfDay: '9:30' } } })).toThrow(ConfigError);
  });

  it('takes risk rules from the config file; the demo feed has its own, a server without it none', () => {
    expect(load({ argv: ['--no-demo'] }).orders.risk).toEqual([]);
    const risk = [{ pattern: '/EQ/**', collarPct: 2.5, maxNotional: 1e6, maxOpenNotional: 5e6, maxQuoteAgeMs: 10_000 }, { pattern: '/FX/*', notionalBasis: 'quantity', maxNotional: 2e7 }];
    expect(load({ overrides: { orders: { risk } } }).orders.risk).toEqual(risk);
    // an empty list turns the demo's rules off
    expect(load({ overrides: { orders: { risk: [] } } }).orders.risk).toEqual([]);
  });

  it('refuses a bad risk rule, naming the rule and the key', () => {
    const bad = (risk: unknown) => () => load({ overrides: { orders: { risk } } });
    expect(bad({ pattern: '/FX/*' })).toThrow('orders.risk must be an array of {pattern, notionalBasis?, collarPct?, maxNotional?, maxOpenNotional?, maxQuoteAgeMs?}');
    expect(bad([{ pattern: '/FX/*', notionalBasis: 'base' }])).toThrow('orders.risk.0.notionalBasis must be "price" or "quantity", got "base"');
    expect(bad([{ pattern: 'FX' }])).toThrow('orders.risk.0.pattern must be a subject pattern starting with "/", got "FX"');
    expect(bad([{ pattern: '/FX/*', collarPct: 0 }])).toThrow('orders.risk.0.collarPct must be a number above 0, got 0');
    expect(bad([{ pattern: '/FX/*' }, { pattern: '/EQ/*', maxQuoteAgeMs: 1.5 }])).toThrow('orders.risk.1.maxQuoteAgeMs must be a whole number of ms above 0, got 1.5');
    expect(bad([{ pattern: '/FX/*', maxNotionl: 5 }])).toThrow('orders.risk.0: unknown key "maxNotionl"');
  });
});
