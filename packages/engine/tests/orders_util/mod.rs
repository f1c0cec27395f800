//! Shared helpers for the orders tests (included with `#[path]`, not a test target of its own):
//! an engine with orders on a temp journal, one worker whose frames are parsed into messages,
//! and condition waits (bounded in time, woken by the engine's waker).
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tidewire_engine::config::{EngineConfig, OrdersConfig};
use tidewire_engine::order_book::{Order, OrderReject, Side, TimeInForce};
use tidewire_engine::order_desk::{Durable, GatewaySink};
use tidewire_engine::runtime::{Engine, OrderSubmit, Waker};

/// How long any wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(10);

#[derive(Default)]
pub struct Signal {
    woken: Mutex<u64>,
    cv: Condvar,
}

struct SignalWaker(Arc<Signal>);

impl Waker for SignalWaker {
    fn wake(&self) {
        *self.0.woken.lock().unwrap() += 1;
        self.0.cv.notify_all();
    }
}

/// An engine with orders, one worker, and every message it received (session id, message).
pub struct Rig {
    pub engine: Engine,
    pub worker: u32,
    signal: Arc<Signal>,
    pub msgs: Vec<(u32, Value)>,
}

/// Orders config for tests: fsync on, fast fills and passes (so fills happen within ms).
pub fn orders_config(dir: &Path) -> OrdersConfig {
    let mut c = OrdersConfig::new(dir);
    c.default_tick = 0.0001;
    c.fill_interval = Duration::from_millis(5);
    c.pass_interval = Duration::from_millis(20);
    c
}

impl Rig {
    pub fn start(cfg: OrdersConfig) -> Rig {
        Rig::on(Engine::start_with_orders(EngineConfig::default(), Some(cfg)).unwrap())
    }

    /// A rig on a running engine.
    pub fn on(engine: Engine) -> Rig {
        let signal = Arc::new(Signal::default());
        let worker = engine
            .register_worker(Box::new(SignalWaker(Arc::clone(&signal))))
            .unwrap();
        Rig {
            engine,
            worker,
            signal,
            msgs: Vec::new(),
        }
    }

    pub fn session(&self, user: &str) -> u32 {
        self.engine.open_session(self.worker, user, "").unwrap()
    }

    /// Ingests `frame` and waits (bounded by `WAIT`) until the engine applied it: orders travel
    /// the control lane, which is served before queued ingest, so an order sent right after an
    /// unapplied market publish would not find its instrument yet.
    pub fn publish(&self, frame: &str) {
        self.engine.ingest_str(frame).unwrap();
        let deadline = Instant::now() + WAIT;
        while self.engine.ingest_queue() != (0, 0) {
            assert!(Instant::now() < deadline, "ingest not applied within {WAIT:?}");
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// Publishes an instrument record with a market.
    pub fn market(&self, subject: &str, bid: f64, ask: f64) {
        self.publish(&format!(
            r#"[{{"type":"record.publish","subject":"{subject}","fields":{{"bid":{bid},"ask":{ask}}}}}]"#
        ));
    }

    /// Moves everything ready into `msgs`.
    pub fn pump(&mut self) {
        while let Some(d) = self.engine.drain(self.worker).unwrap() {
            for e in d.index.chunks(4) {
                let (sid, off, len, close) = (e[0], e[1] as usize, e[2] as usize, e[3]);
                assert_eq!(close, 0, "unexpected close");
                let frame: Value = serde_json::from_slice(&d.data[off..off + len]).unwrap();
                for m in frame.as_array().unwrap() {
                    self.msgs.push((sid, m.clone()));
                }
            }
        }
    }

    /// Waits (bounded by `WAIT`) until a received message of `sid` matches; returns it and removes
    /// every message before it.
    pub fn wait(&mut self, sid: u32, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_within(WAIT, sid, what, pred)
    }

    /// `wait`, bounded by `within`.
    pub fn wait_within(&mut self, within: Duration, sid: u32, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + within;
        loop {
            self.pump();
            if let Some(i) = self.msgs.iter().position(|(s, m)| *s == sid && pred(m)) {
                let (_, m) = self.msgs.remove(i);
                return m;
            }
            let now = Instant::now();
            assert!(now < deadline, "timed out waiting for {what}; got {:?}", self.msgs);
            let g = self.signal.woken.lock().unwrap();
            let _ = self
                .signal
                .cv
                .wait_timeout(g, (deadline - now).min(Duration::from_millis(20)))
                .unwrap();
        }
    }

    /// Waits for the reply (`order.ack`, `order.reject` or `error`) to `req_id`.
    pub fn reply(&mut self, sid: u32, req_id: u32) -> Value {
        self.wait(sid, &format!("reply to reqId {req_id}"), |m| m["reqId"] == req_id)
    }

    /// Waits until the engine's condition holds (polled on each wake and every 20 ms).
    pub fn until(&mut self, what: &str, cond: impl Fn(&Engine) -> bool) {
        self.until_within(WAIT, what, cond)
    }

    /// `until`, bounded by `within`.
    pub fn until_within(&mut self, within: Duration, what: &str, cond: impl Fn(&Engine) -> bool) {
        let deadline = Instant::now() + within;
        while !cond(&self.engine) {
            self.pump();
            let now = Instant::now();
            assert!(now < deadline, "timed out waiting for {what}");
            let g = self.signal.woken.lock().unwrap();
            let _ = self
                .signal
                .cv
                .wait_timeout(g, (deadline - now).min(Duration::from_millis(20)))
                .unwrap();
        }
    }
}

/// A DAY order.
pub fn order(cid: &str, instrument: &str, side: Side, quantity: f64, price: Option<f64>) -> OrderSubmit {
    OrderSubmit {
        client_order_id: cid.into(),
        instrument: instrument.into(),
        side,
        quantity,
        price,
        time_in_force: TimeInForce::Day,
    }
}

/// What a gateway sink saw, as text lines (`Recorder`).
#[derive(Default)]
pub struct Seen {
    lines: Mutex<Vec<String>>,
    cv: Condvar,
}

impl Seen {
    pub fn push(&self, line: String) {
        self.lines.lock().unwrap().push(line);
        self.cv.notify_all();
    }
    /// Waits (bounded) until `n` lines arrived; returns them.
    pub fn wait(&self, n: usize) -> Vec<String> {
        let deadline = Instant::now() + WAIT;
        let mut g = self.lines.lock().unwrap();
        while g.len() < n {
            assert!(Instant::now() < deadline, "got only {:?}", *g);
            g = self.cv.wait_timeout(g, WAIT).unwrap().0;
        }
        g.clone()
    }
}

/// Records what a gateway sink is told: everything but `appended` in `.0`, `appended` in `.1`
/// (when given: appended and durable lines interleave as the journal's timing has it).
pub struct Recorder(pub Arc<Seen>, pub Option<Arc<Seen>>);

impl GatewaySink for Recorder {
    fn attached(&self, orders: &[&Order]) {
        let ids: Vec<String> = orders
            .iter()
            .map(|o| format!("{}:{}", o.user, o.client_order_id))
            .collect();
        self.0.push(format!("attached {}", ids.join(",")));
    }
    fn refused(&self, request: u64, reject: &OrderReject) {
        self.0.push(format!("refused {request} {}", reject.rule.as_str()));
    }
    fn unavailable(&self, request: u64, message: &str) {
        self.0.push(format!("unavailable {request} {message}"));
    }
    fn appended(&self, u: &Durable<'_>) {
        let Some(seen) = &self.1 else { return };
        seen.push(format!(
            "appended {} {} {} {:?} {}",
            u.order.client_order_id,
            u.event.kind(),
            u.order.status.as_str(),
            u.request,
            u.seq
        ));
    }
    fn durable(&self, u: &Durable<'_>) {
        self.0.push(format!(
            "durable {} {} {} {:?} {}",
            u.order.client_order_id,
            u.event.kind(),
            u.order.status.as_str(),
            u.request,
            u.seq
        ));
    }
    fn failed(&self, durable: u64, message: &str) {
        self.0.push(format!("failed {durable} {message}"));
    }
}
