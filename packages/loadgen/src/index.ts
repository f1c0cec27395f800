/**
 * @tidewire/loadgen as a library: the sweep runner, source publisher, client fleets, presets and
 * report renderers the `tidewire-loadgen` CLI is made of (tests and scripts use them directly).
 */

export { epochNowMs, clockAnchor, type Clock, type ClockAnchor } from './util/clock.js';
export { LoadgenError, type LoadgenErrorCode } from './util/errors.js';
export { Pacer, runPaced, type DueSends, type PacedLoop, type PacedOptions, type TickScheduler } from './util/pacer.js';
export { makeFields, payloadShape, PUBLISHED_MESSAGE_BYTES, type PayloadShape } from './sources/payload.js';
export { SourcePublisher, type SourceOptions, type SourceStats } from './sources/source.js';
export { subjectName, subjectsForUser } from './sources/subjects.js';
export { SeqTracker, type SeqVerdict } from './clients/seq-tracker.js';
export { encodeHistogram, mergeEncoded, newLatencyHistogram, recordLatencyMs, summarizeMs, type LatencySummaryMs } from './util/histogram.js';
export type { ClientFleet, ConnectResult, FleetOptions, FleetReport } from './clients/fleet.js';
export { startNativeFleet, nativeAvailable, NATIVE_BINARY } from './clients/native-fleet.js';
export { startNodeFleet } from './clients/node-fleet.js';
export { runSweep, startFleet, type StepResult, type SweepOptions, type SweepReport, type Progress } from './presets/runner.js';
export { FANOUT_PRESETS, PRESET_NAMES, type FanoutPreset } from './presets/presets.js';
export { renderTable } from './report/report-table.js';
export { renderHtml } from './report/report-html.js';
export { sampleServer, cpuPercent, type ServerSample } from './server/server-metrics.js';
