//! napi: the FIX order gateway (`fix::gateway`) started beside a running engine. Converts the
//! server's `fix.*` settings, adapts the server's pre-trade check (a JS function) to
//! `PreTradeCheck`, and exposes the session list and an operator's logout to the admin console.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::{AsyncTask, Function};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status};
use napi_derive::napi;

use super::JsEngine;
use crate::fix::acceptor::SessionHandle;
use crate::fix::gateway::settings::{gateway_config, SessionSpec};
use crate::fix::gateway::{self, OrderPort, PreTradeCheck};

/// One `fix.sessions` entry.
#[napi(object)]
pub struct FixSessionInput {
    /// `FIX.4.2` or `FIX.4.4`.
    pub begin_string: String,
    /// Our CompID.
    pub sender_comp_id: String,
    /// The counterparty's CompID.
    pub target_comp_id: String,
    /// The Tidewire user the session trades as.
    pub user: String,
    /// FIX 4.4: Username (553) the Logon must carry.
    pub username: Option<String>,
    /// FIX 4.4: Password (554) the Logon must carry.
    pub password: Option<String>,
    /// Prefix for Symbols without a leading `/` (e.g. `/FX/`). @default ""
    pub symbol_prefix: Option<String>,
    /// Benchmarks only: echo each NewOrderSingle back instead of taking orders. @default false
    pub bench_echo: Option<bool>,
}

/// The gateway's settings.
#[napi(object)]
pub struct FixGatewayInput {
    /// Address to listen on.
    pub host: String,
    /// TCP port (0: any free port).
    pub port: u32,
    /// Directory of the session stores (sequence numbers, sent messages).
    pub store_dir: String,
    /// The accepted sessions.
    pub sessions: Vec<FixSessionInput>,
}

/// One session as the admin console shows it.
#[napi(object)]
pub struct FixSessionInfo {
    /// `FIX.4.2` / `FIX.4.4`.
    pub begin_string: String,
    /// Our CompID.
    pub sender_comp_id: String,
    /// The counterparty's CompID.
    pub target_comp_id: String,
    /// Tidewire user.
    pub user: String,
    /// `disconnected`, `connected` or `loggedOn`.
    pub state: String,
    /// MsgSeqNum of our next message.
    pub next_sender_seq: f64,
    /// MsgSeqNum expected next from the counterparty.
    pub next_target_seq: f64,
    /// Messages received since start.
    pub messages_in: f64,
    /// Messages written since start (resends included).
    pub messages_out: f64,
    /// The session store's error while it fails (a full disk: messages it cannot take wait,
    /// Logons are refused); absent when it works.
    pub store_error: Option<String>,
    /// When the store started failing (ms since the Unix epoch); absent when it works.
    pub store_failed_since_ms: Option<f64>,
    /// Messages waiting for the store (stored and resent once it takes them).
    pub unstored_messages: f64,
    /// Writes and syncs of the store that failed since start.
    pub store_failures: f64,
}

/// `([user0, instrument0, user1, instrument1, ...]) => (string | null)[]`: one verdict per order,
/// null allows, a string refuses with that text.
type CheckFn = ThreadsafeFunction<Vec<String>, Vec<Option<String>>, Vec<String>, Status, false, true>;

/// The server's check, called on the JS thread from the gateway's intake thread (which waits):
/// one call per batch of new orders.
struct JsCheck(CheckFn);

/// Longest wait for the JS thread's answer (the JS thread also serves the transport; on an
/// overloaded machine it can lag seconds); past it the orders are refused with this reason.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

impl PreTradeCheck for JsCheck {
    fn check(&self, user: &str, instrument: &str) -> Result<(), String> {
        self.check_many(&[(user, instrument)])
            .pop()
            .unwrap_or_else(|| Err("the server's order check gave no answer".into()))
    }

    fn check_many(&self, orders: &[(&str, &str)]) -> Vec<Result<(), String>> {
        let all = |e: String| orders.iter().map(|_| Err(e.clone())).collect();
        let args: Vec<String> = orders
            .iter()
            .flat_map(|(user, instrument)| [(*user).to_owned(), (*instrument).to_owned()])
            .collect();
        let (tx, rx) = crossbeam_channel::bounded(1);
        let status = self.0.call_with_return_value(
            args,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |r: napi::Result<Vec<Option<String>>>, _env| {
                let _ = tx.send(r.map_err(|e| e.to_string()));
                Ok(())
            },
        );
        if status != Status::Ok {
            return all(format!("the server's order check is unavailable ({status})"));
        }
        match rx.recv_timeout(CHECK_TIMEOUT) {
            Ok(Ok(verdicts)) if verdicts.len() == orders.len() => verdicts
                .into_iter()
                .map(|v| match v {
                    None => Ok(()),
                    Some(refusal) => Err(refusal),
                })
                .collect(),
            Ok(Ok(verdicts)) => all(format!(
                "the server's order check failed: {} answers for {} orders",
                verdicts.len(),
                orders.len()
            )),
            Ok(Err(e)) => all(format!("the server's order check failed: {e}")),
            Err(_) => all(format!(
                "the server's order check did not answer within {CHECK_TIMEOUT:?}"
            )),
        }
    }
}

/// Stops the gateway off the JS thread (its intake thread may be waiting for the check).
pub struct FixStopTask(Option<gateway::FixGateway>);

impl napi::Task for FixStopTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        if let Some(g) = self.0.take() {
            g.stop();
        }
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _out: ()) -> napi::Result<()> {
        Ok(())
    }
}

/// An operator's logout off the JS thread.
pub struct FixLogoutTask(Option<SessionHandle>, String);

impl napi::Task for FixLogoutTask {
    type Output = bool;
    type JsValue = bool;

    fn compute(&mut self) -> napi::Result<bool> {
        Ok(self.0.as_ref().is_some_and(|h| h.logout(&self.1)))
    }

    fn resolve(&mut self, _env: Env, out: bool) -> napi::Result<bool> {
        Ok(out)
    }
}

/// The FIX order gateway of a running engine (orders enabled).
#[napi(js_name = "FixGateway")]
pub struct JsFixGateway {
    inner: Option<gateway::FixGateway>,
    port: u32,
}

#[napi]
impl JsFixGateway {
    /// Opens the session stores, listens, attaches to `engine`'s order desk and reports what
    /// happened to the sessions' orders while it was down. `check([user0, instrument0, user1,
    /// instrument1, ...])` runs before new orders, once per batch, and answers one verdict per
    /// order in order (null: allowed; a string: refused with that text). Throws with `code`
    /// `EADDRINUSE` when the port is taken, `INVALID` for a bad setting.
    #[napi(factory)]
    pub fn start(
        env: Env,
        engine: &JsEngine,
        config: FixGatewayInput,
        check: Function<Vec<String>, Vec<Option<String>>>,
    ) -> napi::Result<Self> {
        let specs: Vec<SessionSpec> = config
            .sessions
            .into_iter()
            .map(|s| SessionSpec {
                begin_string: s.begin_string,
                sender_comp_id: s.sender_comp_id,
                target_comp_id: s.target_comp_id,
                user: s.user,
                username: s.username,
                password: s.password,
                symbol_prefix: s.symbol_prefix.unwrap_or_default(),
                bench_echo: s.bench_echo.unwrap_or(false),
            })
            .collect();
        let port = u16::try_from(config.port)
            .map_err(|_| napi::Error::new(Status::InvalidArg, format!("fix port {} is not a port", config.port)))?;
        let cfg = gateway_config(&config.host, port, config.store_dir.into(), &specs)
            .map_err(|e| coded(&env, "INVALID", &e))?;
        let tsfn: CheckFn = check.build_threadsafe_function().weak::<true>().build()?;
        let orders: Arc<dyn OrderPort> = Arc::new(engine.inner.clone());
        let started = gateway::FixGateway::start(cfg, orders, Some(Arc::new(JsCheck(tsfn))));
        let inner = started.map_err(|e| {
            let code = if e.kind() == std::io::ErrorKind::AddrInUse {
                "EADDRINUSE"
            } else {
                "FIX_START"
            };
            coded(&env, code, &e.to_string())
        })?;
        let port = inner.local_addr().map_or(0, |a| u32::from(a.port()));
        Ok(JsFixGateway {
            inner: Some(inner),
            port,
        })
    }

    /// The port the acceptor listens on.
    #[napi(getter)]
    pub fn port(&self) -> u32 {
        self.port
    }

    /// Every configured session: state, sequence numbers, message counters, store health.
    #[napi]
    pub fn sessions(&self) -> Vec<FixSessionInfo> {
        let Some(g) = &self.inner else { return Vec::new() };
        g.sessions()
            .into_iter()
            .map(|s| FixSessionInfo {
                begin_string: s.id.begin_string,
                sender_comp_id: s.id.sender_comp_id,
                target_comp_id: s.id.target_comp_id,
                user: s.user,
                state: s.state.as_str().to_owned(),
                next_sender_seq: s.next_sender_seq as f64,
                next_target_seq: s.next_target_seq as f64,
                messages_in: s.messages_in as f64,
                messages_out: s.messages_out as f64,
                store_error: s.store_error,
                store_failed_since_ms: s.store_failed_since_ms.map(|ms| ms as f64),
                unstored_messages: s.unstored_messages as f64,
                store_failures: s.store_failures as f64,
            })
            .collect()
    }

    /// Logs the session out (Logout with `text`, then disconnect), off the JS thread (the
    /// session may be busy); resolves false when it is not configured or not logged on.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn logout(
        &self,
        begin_string: String,
        sender_comp_id: String,
        target_comp_id: String,
        text: String,
    ) -> AsyncTask<FixLogoutTask> {
        let handle = self
            .inner
            .as_ref()
            .and_then(|g| g.session(&begin_string, &sender_comp_id, &target_comp_id));
        AsyncTask::new(FixLogoutTask(handle, text))
    }

    /// Stops (off the JS thread): reports the desk handed over are stored, connections close.
    /// Stop the engine first. Idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn stop(&mut self) -> AsyncTask<FixStopTask> {
        AsyncTask::new(FixStopTask(self.inner.take()))
    }
}

/// A JS Error with `code`, thrown now.
fn coded(env: &Env, code: &str, message: &str) -> napi::Error {
    match env.throw_error(message, Some(code)) {
        Ok(()) => napi::Error::from_status(Status::PendingException),
        Err(_) => napi::Error::new(Status::GenericFailure, format!("{code}: {message}")),
    }
}
