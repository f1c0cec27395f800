/**
 * Scenario presets of `tidewire-loadgen run`. Only the streaming fan-out presets exist today
 * (../shared/SCENARIOS.md section 1, Caplin Liberator 7.1 benchmark); view, blotter and order
 * presets come with their issues.
 */

/** A streaming fan-out scenario. */
export interface FanoutPreset {
  /** Preset name on the command line. */
  name: string;
  /** Column name in the published table. */
  title: string;
  /** Records the source publishes. */
  subjectCount: number;
  /** Updates per record per second. */
  ratePerSubject: number;
  /** Records each user subscribes to. */
  subsPerUser: number;
  /** Message sizes the scenario is published with, bytes; the first is the default. */
  messageBytes: readonly number[];
  /** Server burst-max settings the scenario is published with, ms (0 = batching off). */
  burstMaxMs: readonly number[];
  /** User steps of the published table (override with --steps). */
  defaultSteps: readonly number[];
  /** Published mean latency per users step, ms (for the report beside ours). */
  publishedMeanMs: Readonly<Record<number, number>>;
}

/** Every fan-out preset, by name. */
export const FANOUT_PRESETS: Readonly<Record<string, FanoutPreset>> = {
  'liberator-low': {
    name: 'liberator-low', title: 'Low', subjectCount: 1_000, ratePerSubject: 0.5, subsPerUser: 2,
    messageBytes: [54], burstMaxMs: [0], defaultSteps: [1_000, 2_000, 5_000, 10_000, 50_000, 100_000],
    publishedMeanMs: { 1000: 0.33, 2000: 0.355, 5000: 0.423, 10000: 0.523, 50000: 1.616, 100000: 3.688 },
  },
  'liberator-medium': {
    name: 'liberator-medium', title: 'Medium', subjectCount: 4_000, ratePerSubject: 0.5, subsPerUser: 20,
    messageBytes: [54], burstMaxMs: [0], defaultSteps: [1_000, 2_000, 5_000, 10_000, 50_000],
    publishedMeanMs: { 1000: 0.448, 2000: 0.526, 5000: 0.653, 10000: 0.891, 50000: 4.783 },
  },
  'liberator-high': {
    name: 'liberator-high', title: 'High', subjectCount: 10_000, ratePerSubject: 0.5, subsPerUser: 100,
    messageBytes: [54, 108, 162, 216], burstMaxMs: [0, 25, 50, 100], defaultSteps: [1_000, 2_000, 5_000, 10_000],
    publishedMeanMs: { 1000: 0.754, 2000: 0.954, 5000: 1.924, 10000: 4.236 },
  },
  'liberator-very-high': {
    name: 'liberator-very-high', title: 'Very High', subjectCount: 20_000, ratePerSubject: 1, subsPerUser: 100,
    messageBytes: [54], burstMaxMs: [0, 25, 50, 100], defaultSteps: [1_000, 2_000, 5_000],
    publishedMeanMs: { 1000: 1.657, 2000: 2.28, 5000: 2.675 },
  },
};

/** Names of the presets `run` accepts. */
export const PRESET_NAMES = Object.keys(FANOUT_PRESETS);
