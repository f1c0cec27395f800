//! napi glue (the only place `napi` is used): converts JS values, delegates to
//! `runtime::Engine`, converts back. No logic lives here.

mod error;
mod fix;
mod grants;
mod orders;
mod privacy;
mod stats;
mod task;
mod views;

use std::time::Duration;

use napi::bindgen_prelude::{
    AsyncTask, Buffer, Either, Float64Array, Float64ArraySlice, Function, Uint32Array, Uint32ArraySlice,
    Uint8ArraySlice,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status};
use napi_derive::napi;

use self::error::to_js;
use self::orders::{JournalRecovery, NatsServerInfo, OrderStage, OrderSubmitInput};
use self::stats::EngineStats;
use self::task::EngineTask;
use self::views::{whole, ContainerMembersInfo, ContainerOpInput, SessionViewInfo, ViewResumeInput, ViewStat};
use crate::config::{ms, BatchingConfig as RustBatching, RawConfig};
use crate::error::EngineError;
use crate::runtime::{self, Waker};

/// Batching settings for `setBatching` (all required), ms.
#[napi(object)]
pub struct BatchingConfig {
    /// Shortest batching interval, ms.
    pub burst_min_ms: f64,
    /// Longest batching interval, ms; 0 = batching off.
    pub burst_max_ms: f64,
    /// Growth / shrink step, ms.
    pub burst_increment_ms: f64,
    /// Per-record throttle interval, ms; 0 = off.
    pub throttle_ms: f64,
}

/// Frames ready for one worker: `index` holds `[sessionId, offset, length, closeCode]` per
/// entry; closeCode 0 = a text frame `data[offset..offset+length]`, else close the socket with
/// that code and the UTF-8 reason in the slice.
#[napi(object)]
pub struct Drained {
    /// Frame bytes, back to back.
    pub data: Buffer,
    /// Four u32 per entry.
    pub index: Uint32Array,
    /// Messages per entry (0 for a close instruction).
    pub messages: Uint32Array,
    /// Latency samples: `(entry * 2 + kind, ts)` pairs in entry order; kind 0: a record
    /// message's ts, 1: an updated view row's ts.
    pub samples: Float64Array,
}

/// The engine's ingest lane (`Engine.ingestQueue`): what sources sent that is not applied yet.
#[napi(object)]
pub struct IngestQueue {
    /// Frames queued (one per `ingest` / `containerPublish` call).
    pub frames: f64,
    /// Bytes of those frames (UTF-8 length; a container publish counts its subjects).
    pub bytes: f64,
}

/// What a statement reads (`Engine.statementStream`): a subject pattern or a container.
#[napi(object)]
pub struct StatementStream {
    /// The subject pattern (`/MKT/*`), when the statement reads one.
    pub pattern: Option<String>,
    /// The container subject, when the statement reads `container <subject>`.
    pub container: Option<String>,
}

type ReadyFn = ThreadsafeFunction<(), (), (), Status, false, true>;

struct JsWaker(ReadyFn);

impl Waker for JsWaker {
    fn wake(&self) {
        // NonBlocking: the engine thread never waits on JS. A full/closing queue only loses a
        // wake-up of a worker that is going away.
        let _ = self.0.call((), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// The Tidewire engine: one engine thread per instance; `Engine.attach(id)` gives worker
/// threads a handle on the same one.
#[napi(js_name = "Engine")]
pub struct JsEngine {
    inner: runtime::Engine,
}

#[napi]
impl JsEngine {
    /// Starts an engine. Throws BAD_REQUEST naming the setting when `config` is invalid.
    #[napi(constructor)]
    pub fn new(env: Env, config: Option<RawConfig>) -> napi::Result<Self> {
        let raw = config.unwrap_or_default();
        let cfg = raw.resolve().map_err(|e| to_js(&env, e))?;
        let cluster = raw.resolve_cluster(&runtime::host_name()).map_err(|e| to_js(&env, e))?;
        let orders = match cluster {
            None => raw.resolve_orders(),
            Some(_) => raw.resolve_cluster_orders().map(Some),
        }
        .map_err(|e| to_js(&env, e))?;
        let status = raw.resolve_status().map_err(|e| to_js(&env, e))?;
        let history = raw.resolve_history().map_err(|e| to_js(&env, e))?;
        let view_resume = raw.resolve_view_resume().map_err(|e| to_js(&env, e))?;
        let inner = runtime::Engine::start_node(cfg, orders, cluster).map_err(|e| to_js(&env, e))?;
        inner.set_status(status).map_err(|e| to_js(&env, e))?;
        inner.set_history(history).map_err(|e| to_js(&env, e))?;
        inner.set_view_resume(view_resume).map_err(|e| to_js(&env, e))?;
        Ok(JsEngine { inner })
    }

    /// The running engine `engineId` (from another worker thread). Throws NOT_FOUND.
    #[napi(factory)]
    pub fn attach(env: Env, engine_id: u32) -> napi::Result<Self> {
        let inner = runtime::Engine::attach(engine_id).map_err(|e| to_js(&env, e))?;
        Ok(JsEngine { inner })
    }

    /// This engine's id (for `Engine.attach`).
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.inner.id()
    }

    /// Registers the calling worker; `onReady()` is called (on this thread, not keeping the
    /// event loop alive) when frames become ready for it. Returns the worker id. `topics`: the
    /// worker applies topic entries in `drainInto` (kinds 1 subscribe, 2 unsubscribe, 3 publish
    /// in the close-code column, docs/architecture.md "Direct delivery"); default false.
    #[napi]
    pub fn register_worker(&self, env: Env, on_ready: Function<(), ()>, topics: Option<bool>) -> napi::Result<u32> {
        let tsfn: ReadyFn = on_ready.build_threadsafe_function().weak::<true>().build()?;
        let waker = Box::new(JsWaker(tsfn));
        let worker = if topics == Some(true) {
            self.inner.register_topic_worker(waker)
        } else {
            self.inner.register_worker(waker)
        };
        worker.map_err(|e| to_js(&env, e))
    }

    /// Unregisters a worker and closes its sessions.
    #[napi]
    pub fn unregister_worker(&self, env: Env, worker_id: u32) -> napi::Result<()> {
        self.inner.unregister_worker(worker_id).map_err(|e| to_js(&env, e))
    }

    /// Opens a session on `workerId`; returns its id at once.
    #[napi]
    pub fn open_session(&self, env: Env, worker_id: u32, user: String, tier: String) -> napi::Result<u32> {
        self.inner
            .open_session(worker_id, &user, &tier)
            .map_err(|e| to_js(&env, e))
    }

    /// Closes a session; unknown ids are ignored. `keepViews`: the connection dropped (its client
    /// did not close it), so its views are held for `view.resume` (`viewResumeGraceMs`).
    #[napi]
    pub fn close_session(&self, env: Env, session_id: u32, keep_views: Option<bool>) -> napi::Result<()> {
        if keep_views == Some(true) {
            return self.inner.detach_session(session_id).map_err(|e| to_js(&env, e));
        }
        self.inner.close_session(session_id).map_err(|e| to_js(&env, e))
    }

    /// `source.register` of a source session: it serves `patterns`, active or standby by
    /// `priority` (lower takes over first); `source.registered`, later `source.activate`, or an
    /// `error` arrive in the session's frames.
    #[napi]
    pub fn source_register(
        &self,
        env: Env,
        session_id: u32,
        req_id: u32,
        patterns: Vec<String>,
        priority: u32,
    ) -> napi::Result<()> {
        self.inner
            .source_register(session_id, req_id, patterns, priority)
            .map_err(|e| to_js(&env, e))
    }

    /// Subscribes; `record.subscribed` + images (or an `error`) arrive in the session's frames.
    #[napi]
    pub fn subscribe(&self, env: Env, session_id: u32, req_id: u32, subjects: Vec<String>) -> napi::Result<()> {
        self.inner
            .subscribe(session_id, req_id, subjects)
            .map_err(|e| to_js(&env, e))
    }

    /// `record.resume`: `subjects[i]` was held as record `ids[i]` at `seqs[i]` (0: none) in
    /// `epoch`; `record.resumed`, then per record its missed messages or an image flagged
    /// `reset` (or an `error`) arrive in the session's frames. Throws BAD_REQUEST when the arrays
    /// differ in length.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn resume(
        &self,
        env: Env,
        session_id: u32,
        req_id: u32,
        epoch: f64,
        subjects: Vec<String>,
        ids: Vec<u32>,
        seqs: Vec<f64>,
    ) -> napi::Result<()> {
        let records = crate::hub::ResumeRecord::zip(subjects, &ids, &seqs).map_err(|e| to_js(&env, e))?;
        self.inner
            .resume(session_id, req_id, epoch as u64, records)
            .map_err(|e| to_js(&env, e))
    }

    /// This engine's epoch (`session.loggedIn`'s `epoch`): differs from every earlier run's.
    #[napi(getter)]
    pub fn epoch(&self) -> f64 {
        self.inner.epoch() as f64
    }

    /// Unsubscribes; `record.unsubscribed` (or an `error`) arrives in the session's frames.
    #[napi]
    pub fn unsubscribe(&self, env: Env, session_id: u32, req_id: u32, subjects: Vec<String>) -> napi::Result<()> {
        self.inner
            .unsubscribe(session_id, req_id, subjects)
            .map_err(|e| to_js(&env, e))
    }

    /// Opens a view (sort as text, `name asc, bid desc`); `view.created` (or an `error`) arrives
    /// in the session's frames, then `view.size` / `view.rows` as the window changes.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn view_create(
        &self,
        env: Env,
        session_id: u32,
        req_id: u32,
        container: String,
        filter: String,
        sort: String,
        offset: u32,
        size: u32,
    ) -> napi::Result<()> {
        self.inner
            .view_create(session_id, req_id, container, filter, sort, offset, size)
            .map_err(|e| to_js(&env, e))
    }

    /// Moves the session's window on view `viewId`; the next `view.rows` carries `reqId`.
    #[napi]
    pub fn view_change(
        &self,
        env: Env,
        session_id: u32,
        req_id: u32,
        view_id: u32,
        offset: u32,
        size: u32,
    ) -> napi::Result<()> {
        self.inner
            .view_change(session_id, req_id, view_id, offset, size)
            .map_err(|e| to_js(&env, e))
    }

    /// `view.resume`: continues a view held since its session dropped (`view.resumed`, then the
    /// diff it missed) or opens `resume`'s definition afresh (`view.created` flagged `reset`); or
    /// an `error`. Arrives in the session's frames.
    #[napi]
    pub fn view_resume(&self, env: Env, session_id: u32, req_id: u32, resume: ViewResumeInput) -> napi::Result<()> {
        let r = crate::hub::ViewResume {
            epoch: whole(resume.epoch),
            session_id: resume.session_id,
            view_id: resume.view_id,
            seq: whole(resume.seq),
            container: resume.container,
            filter: resume.filter,
            sort: resume.sort,
            offset: resume.offset,
            size: resume.size,
        };
        self.inner
            .view_resume(session_id, req_id, r)
            .map_err(|e| to_js(&env, e))
    }

    /// Closes view `viewId`; `view.closed` (or an `error`) arrives in the session's frames.
    #[napi]
    pub fn view_close(&self, env: Env, session_id: u32, req_id: u32, view_id: u32) -> napi::Result<()> {
        self.inner
            .view_close(session_id, req_id, view_id)
            .map_err(|e| to_js(&env, e))
    }

    /// `statement.create` for the session, within its user's quota (`maxCount` statements,
    /// `maxCost` window events per key summed: the server's `limits.maxStatement*` settings);
    /// `statement.created` or an `error` arrives in the session's frames.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn statement_create(
        &self,
        env: Env,
        session_id: u32,
        req_id: u32,
        name: String,
        text: String,
        max_count: u32,
        max_cost: f64,
    ) -> napi::Result<()> {
        let quota = crate::hub::StatementQuota {
            max_count,
            max_cost: max_cost.clamp(0.0, u64::MAX as f64) as u64,
        };
        self.inner
            .statement_create(session_id, req_id, name, text, quota)
            .map_err(|e| to_js(&env, e))
    }

    /// `statement.close`: releases one of the session's references to statement `name`.
    #[napi]
    pub fn statement_close(&self, env: Env, session_id: u32, req_id: u32, name: String) -> napi::Result<()> {
        self.inner
            .statement_close(session_id, req_id, name)
            .map_err(|e| to_js(&env, e))
    }

    /// The stream statement `text` reads, parsed exactly as `statementCreate` will parse it (the
    /// server checks the user's rules on it first). Throws BAD_REQUEST (`field: "statement"`,
    /// the message naming the column) for a statement that does not parse. Pure: no engine work.
    #[napi]
    pub fn statement_stream(&self, env: Env, text: String) -> napi::Result<StatementStream> {
        match crate::analytics::parse(&text, &crate::analytics::AnalyticsLimits::default()) {
            Ok(st) => Ok(match st.source {
                crate::analytics::Source::Pattern(p) => StatementStream {
                    pattern: Some(p.as_str().to_owned()),
                    container: None,
                },
                crate::analytics::Source::Container(c) => StatementStream {
                    pattern: None,
                    container: Some(c),
                },
            }),
            Err(e) => Err(to_js(&env, e.into_engine_error("statement"))),
        }
    }

    /// Creates a server statement (the config's `statements`), held for the engine's life;
    /// resolves to its canonical text, rejects with `CODE: message` (a parse error names its
    /// column: `BAD_REQUEST: statement at 14: ...`).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn create_server_statement(&self, name: String, text: String) -> AsyncTask<EngineTask<String, String>> {
        let engine = self.inner.clone();
        task::ask(
            move || engine.create_server_statement(name, text, Duration::from_secs(5)),
            |text| text,
        )
    }

    /// Applies a source's `container.publish` (ops in order). Throws `{code, message, field}` for
    /// an unknown op name (nothing applied).
    #[napi]
    pub fn container_publish(&self, env: Env, subject: String, ops: Vec<ContainerOpInput>) -> napi::Result<()> {
        let ops = ops
            .into_iter()
            .enumerate()
            .map(|(i, o)| views::container_op(i, o))
            .collect::<crate::error::Result<Vec<_>>>()
            .map_err(|e| to_js(&env, e))?;
        self.inner.container_publish(subject, ops).map_err(|e| to_js(&env, e))
    }

    /// Reports `ws.send` buffering (true) or the socket's drain (false).
    #[napi]
    pub fn set_blocked(&self, env: Env, session_id: u32, blocked: bool) -> napi::Result<()> {
        self.inner.set_blocked(session_id, blocked).map_err(|e| to_js(&env, e))
    }

    /// Validates a source frame on this thread and queues it; returns the number of publishes.
    /// Throws `{code, message, index?, field?}` and accepts nothing when any message is bad.
    /// With `grants` (the source's, compiled at login or reload), a subject they do not permit
    /// refuses the frame NOT_ENTITLED (index and field `subject`), checked while it is decoded.
    /// With `drainWorker` (this thread's worker id), the caller drains that worker as this
    /// returns: a frame applied on this thread (the engine thread was idle) does not call its
    /// `onReady`. The bytes are read before this returns and not kept: a view of a buffer that
    /// dies after the call (uWS's message) needs no copy.
    #[napi]
    pub fn ingest(
        &self,
        env: Env,
        frame: Either<Uint8ArraySlice, String>,
        grants: Option<&grants::PublishGrants>,
        source_session_id: Option<u32>,
        drain_worker: Option<u32>,
    ) -> napi::Result<u32> {
        let grants = grants.map(|g| &g.inner);
        let source = source_session_id.unwrap_or(0);
        let worker = drain_worker.unwrap_or(0);
        let n = match &frame {
            Either::A(bytes) => self.inner.ingest_draining(bytes, grants, source, worker),
            Either::B(text) => self.inner.ingest_str_draining(text, grants, source, worker),
        };
        n.map(|n| n as u32).map_err(|e| to_js(&env, e))
    }

    /// Compiles a source's publish rules (`patterns` as configured, its role's then its own: `!`
    /// for deny rules, `{user}` becomes `user`) for `ingest`; `user` and `role` are named in its
    /// refusals. Made once per login and configuration reload, not per frame. Throws BAD_REQUEST
    /// naming the first invalid pattern.
    #[napi]
    pub fn publish_grants(
        &self,
        env: Env,
        user: String,
        role: String,
        patterns: Vec<String>,
    ) -> napi::Result<grants::PublishGrants> {
        grants::compile(&env, &user, &role, &patterns)
    }

    /// Everything ready for `workerId`, or null, in buffers made for this call (tests, benches;
    /// the transport uses `drainInto`). The next frame calls `onReady`.
    #[napi]
    pub fn drain(&self, env: Env, worker_id: u32) -> napi::Result<Option<Drained>> {
        let d = self.inner.drain(worker_id).map_err(|e| to_js(&env, e))?;
        Ok(d.map(|d| Drained {
            data: d.data.into(),
            index: Uint32Array::new(d.index),
            messages: Uint32Array::new(d.messages),
            samples: Float64Array::new(d.samples),
        }))
    }

    /// Moves everything ready for `workerId` into the caller's reused buffers (no allocation per
    /// drain). `index` row 0 (5 u32s) is a header: entries, sample pairs, data bytes; then one
    /// row per entry: session id, offset, length, close code, messages. Frame bytes go to `data`
    /// from 0, the latency samples (`(entry * 2 + kind, ts)` pairs) to `samples`. Returns the
    /// entries taken; 0 when nothing is ready (the next frame calls `onReady`); -1 when a buffer
    /// is too small (nothing taken; the header holds the sizes needed). After a non-empty drain
    /// `onReady` is not called for frames that arrive meanwhile: call again until 0. With `arm`
    /// (default false) the caller does not call again: the next frame calls `onReady` (a worker
    /// draining what its own `ingest` readied).
    #[napi]
    pub fn drain_into(
        &self,
        env: Env,
        worker_id: u32,
        mut data: Uint8ArraySlice,
        mut index: Uint32ArraySlice,
        mut samples: Float64ArraySlice,
        arm: Option<bool>,
    ) -> napi::Result<i32> {
        // SAFETY: the slices borrow the caller's typed arrays for this synchronous call only; JS
        // cannot run (and touch them) until it returns, and the three are only written here.
        let (data, index, samples) = unsafe { (data.as_mut(), index.as_mut(), samples.as_mut()) };
        let took = self
            .inner
            .drain_into(worker_id, data, index, samples, arm.unwrap_or(false))
            .map_err(|e| to_js(&env, e))?;
        Ok(match took {
            runtime::TakeInto::Empty => 0,
            runtime::TakeInto::Taken(n) => i32::try_from(n).unwrap_or(i32::MAX),
            runtime::TakeInto::TooSmall => -1,
        })
    }

    /// Latency samples of `workerId`'s sessions: the origin ts of one record message or updated
    /// view row in `every` comes back with the drained frames (`drainInto` / `drain().samples`).
    #[napi]
    pub fn set_latency_sampling(&self, env: Env, worker_id: u32, every: u32) -> napi::Result<()> {
        self.inner
            .set_latency_sampling(worker_id, every)
            .map_err(|e| to_js(&env, e))
    }

    /// New batching/throttle settings, from the next message on.
    #[napi]
    pub fn set_batching(&self, env: Env, config: BatchingConfig) -> napi::Result<()> {
        let b = (|| {
            Ok::<_, crate::EngineError>(RustBatching {
                burst_min: ms("burstMinMs", Some(config.burst_min_ms), Default::default())?,
                burst_max: ms("burstMaxMs", Some(config.burst_max_ms), Default::default())?,
                burst_increment: ms("burstIncrementMs", Some(config.burst_increment_ms), Default::default())?,
                throttle: ms("throttleMs", Some(config.throttle_ms), Default::default())?,
            })
        })()
        .map_err(|e| to_js(&env, e))?;
        self.inner.set_batching(b).map_err(|e| to_js(&env, e))
    }

    /// The materialised views (referenced or in their grace period), as the engine thread
    /// sees them at its next pass; computed off the JS thread. Rejects (`UNAVAILABLE: ...`)
    /// after shutdown or when the engine thread does not answer within 2 s.
    #[napi(ts_return_type = "Promise<Array<ViewStat>>")]
    pub fn view_stats(&self) -> AsyncTask<EngineTask<Vec<crate::hub::ViewStat>, Vec<ViewStat>>> {
        let engine = self.inner.clone();
        task::ask(move || engine.view_stats(Duration::from_secs(2)), views::view_stats)
    }

    /// Current counters.
    #[napi]
    pub fn stats(&self) -> EngineStats {
        self.inner.stats().into()
    }

    /// Submits an order for `sessionId`'s user: `order.ack` (only once the journal entry is on
    /// disk), `order.reject` (nothing changed) or `error` arrives in the session's frames. Throws
    /// UNAVAILABLE when orders are disabled (no journalDir), BAD_REQUEST for a side/timeInForce
    /// outside the protocol's values.
    #[napi]
    pub fn order_submit(&self, env: Env, session_id: u32, req_id: u32, order: OrderSubmitInput) -> napi::Result<()> {
        let submit = (|| {
            Ok::<_, EngineError>(runtime::OrderSubmit {
                side: orders::order_side(&order.side)?,
                time_in_force: orders::time_in_force(&order.time_in_force)?,
                client_order_id: order.client_order_id,
                instrument: order.instrument,
                quantity: order.quantity,
                price: order.price,
            })
        })()
        .map_err(|e| to_js(&env, e))?;
        self.inner
            .order_submit(session_id, req_id, submit)
            .map_err(|e| to_js(&env, e))
    }

    /// Submits the `order.submit` in `frame` (a client frame's UTF-8 bytes) for `sessionId` in
    /// one call: the frame is read as is (napi/orders.rs), its instrument checked against the
    /// session's `grants` (`orderGrants`, compiled at login), then `orderToken` (the caller took
    /// one of the user's order rate), then it is submitted as `orderSubmit` does. Returns the
    /// frame's reqId when submitted; -1 (nothing checked or submitted) when the frame is not an
    /// `order.submit` this path takes: decode it with the protocol decoder; -2 when the order is
    /// permitted but `orderToken` is false (nothing submitted: answer RATE_LIMITED). Throws
    /// NOT_ENTITLED (field `instrument`) when the grants refuse the instrument, else as
    /// `orderSubmit`.
    #[napi]
    pub fn order_submit_frame(
        &self,
        env: Env,
        session_id: u32,
        frame: &[u8],
        grants: &grants::OrderGrants,
        order_token: bool,
    ) -> napi::Result<i32> {
        orders::submit_frame(&self.inner, &env, session_id, frame, &grants.inner, order_token)
    }

    /// Compiles a trader's order rules (`patterns` as configured, its role's then its own: `!`
    /// for deny rules, `{user}` becomes `user`) with its price `tier` (null: none) and every
    /// configured tier in `tiers` (another tier's price is never orderable), for
    /// `orderSubmitFrame`; `user` and `role` are named in its refusals. Made once per login and
    /// configuration reload, not per order. Throws BAD_REQUEST naming the first invalid pattern.
    #[napi]
    pub fn order_grants(
        &self,
        env: Env,
        user: String,
        role: String,
        patterns: Vec<String>,
        tier: Option<String>,
        tiers: Vec<String>,
    ) -> napi::Result<grants::OrderGrants> {
        grants::compile_order(&env, &user, &role, &patterns, tier.as_deref(), &tiers)
    }

    /// Cancels the session user's open order; replies as `orderSubmit`.
    #[napi]
    pub fn order_cancel(&self, env: Env, session_id: u32, req_id: u32, client_order_id: String) -> napi::Result<()> {
        self.inner
            .order_cancel(session_id, req_id, client_order_id)
            .map_err(|e| to_js(&env, e))
    }

    /// Amends the session user's open order (new total quantity and/or limit price; null leaves it);
    /// replies as `orderSubmit`.
    #[napi]
    pub fn order_amend(
        &self,
        env: Env,
        session_id: u32,
        req_id: u32,
        client_order_id: String,
        quantity: Option<f64>,
        price: Option<f64>,
    ) -> napi::Result<()> {
        self.inner
            .order_amend(session_id, req_id, client_order_id, quantity, price)
            .map_err(|e| to_js(&env, e))
    }

    /// The journal replay done at construction; null when orders are disabled.
    #[napi]
    pub fn recovery(&self) -> Option<JournalRecovery> {
        self.inner.recovery().map(|r| JournalRecovery {
            records: r.records as f64,
            bytes_dropped: r.bytes_dropped as f64,
            last_seq: r.last_seq as f64,
            orders: r.orders as f64,
            open_orders: r.open_orders as f64,
            log_line: r.log_line,
            records_dropped: r.records_dropped as f64,
            cut_line: r.cut_line,
        })
    }

    /// Accept -> durable-ack latencies in microseconds since the last call (at most 65,536, oldest
    /// dropped); empty when orders are disabled.
    #[napi]
    pub fn take_order_ack_latencies(&self) -> Float64Array {
        Float64Array::new(self.inner.take_order_ack_latencies())
    }

    /// Cluster mode: the NATS server's version (from its INFO at connect) and, for a version
    /// Tidewire is known not to run safely on, a warning naming the problem and the fix; null on
    /// a single node.
    #[napi]
    pub fn cluster_nats_server(&self) -> Option<NatsServerInfo> {
        self.inner
            .cluster_nats_server()
            .map(|(version, warning)| NatsServerInfo { version, warning })
    }

    /// Cluster mode: where an order's time goes in this node, one histogram per stage, in path
    /// order (docs/operations.md, `tidewire_cluster_order_stage_seconds`); empty on a single node.
    #[napi]
    pub fn order_stages(&self) -> Vec<OrderStage> {
        self.inner
            .order_stages()
            .into_iter()
            .map(|c| OrderStage {
                stage: c.stage.name().to_owned(),
                le_us: crate::cluster::stages::BOUNDS_US.iter().map(|&b| b as f64).collect(),
                buckets: c.le.iter().map(|&n| n as f64).collect(),
                count: c.count as f64,
                sum_us: c.sum_us as f64,
            })
            .collect()
    }

    /// Stops the engine thread (joins it); later calls throw UNAVAILABLE. Idempotent. Commands
    /// queued before it are handled for at most `shutdownDrainMs` (default 5000); returns a line
    /// to log when the rest was dropped (how many commands, order requests, completions), else null.
    #[napi]
    pub fn shutdown(&self, env: Env) -> napi::Result<Option<String>> {
        let report = self.inner.shutdown_report().map_err(|e| to_js(&env, e))?;
        Ok(report.log_line())
    }

    /// Commands queued for the engine thread now (publishes, session and order requests, journal
    /// completions). Backpressure: a server can stop reading its sources while this is above a
    /// high-water mark and resume below a low one.
    #[napi]
    pub fn queue_depth(&self) -> u32 {
        self.inner.queue_depth().min(u32::MAX as usize) as u32
    }

    /// The ingest lane now: source publishes and container publishes queued for the engine thread
    /// and not yet applied (`frames`, `bytes` of their frames). A server pauses its sources above a
    /// high-water mark (`limits.sourceHighWaterBytes`) and resumes them below a low one.
    #[napi]
    pub fn ingest_queue(&self) -> IngestQueue {
        let (frames, bytes) = self.inner.ingest_queue();
        IngestQueue {
            frames: frames as f64,
            bytes: bytes as f64,
        }
    }

    /// Resolves once the engine has applied every source publish and container publish queued
    /// (from any thread) before this call: a source's barrier (`/source` answers `session.ping`
    /// after it). Waits off the JS thread; rejects (`UNAVAILABLE: ...`) after shutdown or when
    /// the frames before it are not applied within 30 s.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn ingest_barrier(&self) -> AsyncTask<EngineTask<(), ()>> {
        let engine = self.inner.clone();
        task::ask(move || engine.ingest_barrier(Duration::from_secs(30)), |()| ())
    }

    /// The open views of sessions `sessionIds` (unknown ids have none), by session then view id,
    /// after every command queued before this call; computed off the JS thread. Rejects
    /// (`UNAVAILABLE: ...`) after shutdown or when the engine thread does not answer within 2 s.
    #[napi(ts_return_type = "Promise<Array<SessionViewInfo>>")]
    pub fn session_views(
        &self,
        session_ids: Vec<u32>,
    ) -> AsyncTask<EngineTask<Vec<crate::hub::SessionView>, Vec<SessionViewInfo>>> {
        let engine = self.inner.clone();
        task::ask(
            move || engine.session_views(session_ids, Duration::from_secs(2)),
            views::session_views,
        )
    }

    /// The members of `containers` (subjects), one entry per name in the order asked (an unknown
    /// or empty container: no members); an empty list asks for every container with members (never
    /// the engine's internal per-tier mirrors). Answered after every command queued before this
    /// call (container publishes travel the ingest lane and are not ordered with it); computed
    /// off the JS thread. Rejects (`UNAVAILABLE: ...`) after shutdown or when the engine thread
    /// does not answer within 2 s.
    #[napi(ts_return_type = "Promise<Array<ContainerMembersInfo>>")]
    pub fn container_members(
        &self,
        containers: Vec<String>,
    ) -> AsyncTask<EngineTask<Vec<crate::hub::ContainerMembers>, Vec<ContainerMembersInfo>>> {
        let engine = self.inner.clone();
        task::ask(
            move || engine.container_members(containers, Duration::from_secs(2)),
            views::container_members,
        )
    }

    /// Closes the session's view `viewId` after a rule change: an `error` NOT_ENTITLED with
    /// `reason` as its message (`field: "viewId"`, no reqId), then `view.closed` with reqId 0,
    /// arrive in the session's frames; nothing when the view is no longer open.
    #[napi]
    pub fn revoke_view(&self, env: Env, session_id: u32, view_id: u32, reason: String) -> napi::Result<()> {
        self.inner
            .view_revoke(session_id, view_id, reason)
            .map_err(|e| to_js(&env, e))
    }
}
