/**
 * @tidewire/loadgen as a library: the sweep runner, source publisher, client fleets, presets and
 * report renderers the `tidewire-loadgen` CLI is made of (tests and scripts use them directly).
 */

export { epochNowMs, clockAnchor, type Clock, type ClockAnchor } from './clock.js';
export { LoadgenError, type LoadgenErrorCode } from './errors.js';
export { Pacer, runPaced, type DueSends, type PacedLoop, type PacedOptions, type TickScheduler } from './pacer.js';
export { makeFields, payloadShape, PUBLISHED_MESSAGE_BYTES, type PayloadShape } from './payload.js';
export { SourcePublisher, type SourceOptions, type SourceStats } from './source.js';
export { subjectName, subjectsForUser } from './subjects.js';
export { SeqTracker, type SeqVerdict } from './seq-tracker.js';
export { encodeHistogram, mergeEncoded, newLatencyHistogram, recordLatencyMs, summarizeMs, type LatencySummaryMs } from './histogram.js';
export type { ClientFleet, ConnectResult, FleetOptions, FleetReport } from './fleet.js';
export { startNativeFleet, nativeAvailable, NATIVE_BINARY } from './native-fleet.js';
export { startNodeFleet } from './node-fleet.js';
export { runSweep, startFleet, type StepResult, type SweepOptions, type SweepReport, type Progress } from './runner.js';
export { FANOUT_PRESETS, PRESET_NAMES, type FanoutPreset } from './presets.js';
export { renderTable } from './report-table.js';
export { renderHtml } from './report-html.js';
export { sampleServer, cpuPercent, type ServerSample } from './server-metrics.js';
