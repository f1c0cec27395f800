//! The FIX acceptor: listens on TCP, binds each connection to a configured session by the
//! CompIDs and BeginString of its first message (which must be a Logon), and runs the session
//! on a thread per connection. One connection per session: a Logon for a session that already
//! has a connection is refused by closing the new connection (the live one is untouched).

mod app;
mod commit;
pub(crate) mod echo;
mod slot;

pub use app::{
    Application, NewOrderSingle, OrdType, OrderCancelReplaceRequest, OrderCancelRequest, SessionHandle, SessionId,
    SessionState, SessionStatus, Side,
};
pub use echo::EchoApplication;

use crate::fix::codec::{tag, Frame, Framer, Parser};
use crate::fix::session::{Clock, FileStore, MemoryStore, Session, SessionConfig, SessionStore};
use commit::Committer;
use slot::SessionSlot;
use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One session the acceptor accepts, and the Tidewire user it trades as.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    /// Session-layer settings (version, CompIDs, credentials, timers).
    pub config: SessionConfig,
    /// The Tidewire user the session's orders belong to.
    pub user: String,
}

/// Acceptor settings.
#[derive(Debug, Clone)]
pub struct AcceptorConfig {
    /// Address to listen on, e.g. `127.0.0.1:9878` (port 0: any free port).
    pub bind: SocketAddr,
    /// The sessions accepted; a Logon for any other BeginString/CompID pair is refused.
    pub sessions: Vec<SessionSettings>,
    /// Directory of the session stores (one subdirectory per session). `None`: in memory,
    /// sequence numbers start at 1 on every start.
    pub store_dir: Option<PathBuf>,
    /// Per session (same order as `sessions`): true keeps that session's store in memory even
    /// with a `store_dir` (a benchmark echo session, which carries no orders). Missing: false.
    pub memory_stores: Vec<bool>,
    /// Largest BodyLength accepted; a larger one is garbled. @default 65536
    pub max_message_bytes: usize,
    /// A connection that has not sent a Logon within this time is closed. @default 10 s
    pub logon_timeout: Duration,
    /// How often timers are checked on an idle connection. @default 50 ms
    pub poll_interval: Duration,
    /// A write that blocks longer than this (counterparty not reading) closes the connection.
    /// @default 5 s
    pub write_timeout: Duration,
}

impl AcceptorConfig {
    /// Defaults for listening on `bind` with `sessions`.
    pub fn new(bind: SocketAddr, sessions: Vec<SessionSettings>) -> AcceptorConfig {
        AcceptorConfig {
            bind,
            sessions,
            store_dir: None,
            memory_stores: Vec::new(),
            max_message_bytes: 65_536,
            logon_timeout: Duration::from_secs(10),
            poll_interval: Duration::from_millis(50),
            write_timeout: Duration::from_secs(5),
        }
    }
}

type SessionKey = (String, String, String);

struct Ctx {
    cfg: AcceptorConfig,
    slots: HashMap<SessionKey, Arc<SessionSlot>>,
    stopping: AtomicBool,
    clock: Arc<dyn Clock>,
    conns: Mutex<Vec<(TcpStream, JoinHandle<()>)>>,
    committer: Arc<Committer>,
}

/// A running acceptor. Stops (closing every connection) on [`Acceptor::stop`] or drop.
pub struct Acceptor {
    ctx: Arc<Ctx>,
    addr: SocketAddr,
    accept_thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Acceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Acceptor({})", self.addr)
    }
}

impl Acceptor {
    /// Opens the session stores, binds the listener and starts accepting.
    pub fn start(cfg: AcceptorConfig, app: Arc<dyn Application>, clock: Arc<dyn Clock>) -> io::Result<Acceptor> {
        let mut slots = HashMap::new();
        let committer = Committer::start()?;
        let stop_committer = |e: io::Error| {
            committer.stop();
            e
        };
        for (i, s) in cfg.sessions.iter().enumerate() {
            let c = &s.config;
            let id = SessionId {
                begin_string: c.dictionary.begin_string().to_string(),
                sender_comp_id: c.sender_comp_id.clone(),
                target_comp_id: c.target_comp_id.clone(),
            };
            let in_memory = cfg.memory_stores.get(i).copied().unwrap_or(false);
            let store: Box<dyn SessionStore> = match &cfg.store_dir {
                Some(dir) if !in_memory => Box::new(
                    FileStore::open(&dir.join(format!(
                        "{}-{}-{}",
                        id.begin_string, id.sender_comp_id, id.target_comp_id
                    )))
                    .map_err(stop_committer)?,
                ),
                _ => Box::new(MemoryStore::new()),
            };
            let key = (
                id.begin_string.clone(),
                id.sender_comp_id.clone(),
                id.target_comp_id.clone(),
            );
            let session = Session::new(c.clone(), store);
            let slot = SessionSlot::new(
                id,
                s.user.clone(),
                session,
                Arc::clone(&app),
                Arc::clone(&clock),
                Arc::clone(&committer),
            );
            if slots.insert(key, Arc::new(slot)).is_some() {
                return Err(stop_committer(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "session {} {}->{} is configured twice",
                        c.dictionary.begin_string(),
                        c.sender_comp_id,
                        c.target_comp_id
                    ),
                )));
            }
        }
        let listener = TcpListener::bind(cfg.bind).map_err(stop_committer)?;
        let addr = listener.local_addr().map_err(stop_committer)?;
        let ctx = Arc::new(Ctx {
            cfg,
            slots,
            stopping: AtomicBool::new(false),
            clock,
            conns: Mutex::new(Vec::new()),
            committer: Arc::clone(&committer),
        });
        let accept_ctx = Arc::clone(&ctx);
        let accept_thread = std::thread::Builder::new()
            .name("fix-accept".into())
            .spawn(move || accept_loop(listener, accept_ctx))
            .map_err(stop_committer)?;
        Ok(Acceptor {
            ctx,
            addr,
            accept_thread: Some(accept_thread),
        })
    }

    /// The address the acceptor listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// A handle to a configured session (`begin_string`, our CompID, their CompID).
    pub fn session(&self, begin_string: &str, sender_comp_id: &str, target_comp_id: &str) -> Option<SessionHandle> {
        let key = (
            begin_string.to_string(),
            sender_comp_id.to_string(),
            target_comp_id.to_string(),
        );
        self.ctx
            .slots
            .get(&key)
            .map(|slot| SessionHandle { slot: Arc::clone(slot) })
    }

    /// Handles on every configured session, in configuration order.
    pub fn sessions(&self) -> Vec<SessionHandle> {
        self.ctx
            .cfg
            .sessions
            .iter()
            .filter_map(|s| {
                let c = &s.config;
                self.session(c.dictionary.begin_string(), &c.sender_comp_id, &c.target_comp_id)
            })
            .collect()
    }

    /// Stops accepting, closes every connection and waits for their threads.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.ctx.stopping.store(true, Ordering::Release);
        // wake the blocking accept
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
        let conns = std::mem::take(&mut *self.ctx.conns.lock().unwrap_or_else(|p| p.into_inner()));
        for (stream, _) in &conns {
            let _ = stream.shutdown(Shutdown::Both);
        }
        for (_, t) in conns {
            let _ = t.join();
        }
        self.ctx.committer.stop();
        for slot in self.ctx.slots.values() {
            // nothing to report it to while stopping: the next start reads what was written
            let _ = slot.sync_store();
        }
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        if self.accept_thread.is_some() {
            self.shutdown();
        }
    }
}

fn accept_loop(listener: TcpListener, ctx: Arc<Ctx>) {
    for stream in listener.incoming() {
        if ctx.stopping.load(Ordering::Acquire) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let Ok(keep) = stream.try_clone() else { continue };
        let conn_ctx = Arc::clone(&ctx);
        let spawned = std::thread::Builder::new()
            .name("fix-conn".into())
            .spawn(move || serve(stream, &conn_ctx));
        if let Ok(t) = spawned {
            let mut conns = ctx.conns.lock().unwrap_or_else(|p| p.into_inner());
            conns.retain(|(_, t)| !t.is_finished());
            conns.push((keep, t));
        }
    }
}

/// The session a connection's first message (a Logon) names, if configured.
fn logon_slot(ctx: &Ctx, parser: &mut Parser, frame: &[u8]) -> Option<Arc<SessionSlot>> {
    let msg = parser.parse(frame).ok()?;
    if msg.msg_type() != b"A" {
        return None;
    }
    let key = (
        String::from_utf8_lossy(msg.begin_string()).into_owned(),
        String::from_utf8_lossy(msg.get(tag::TARGET_COMP_ID)?).into_owned(),
        String::from_utf8_lossy(msg.get(tag::SENDER_COMP_ID)?).into_owned(),
    );
    ctx.slots.get(&key).cloned()
}

/// Runs one connection until it closes.
fn serve(stream: TcpStream, ctx: &Ctx) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(ctx.cfg.poll_interval));
    let _ = stream.set_write_timeout(Some(ctx.cfg.write_timeout));
    let Ok(mut reader) = stream.try_clone() else { return };
    let mut framer = Framer::new(ctx.cfg.max_message_bytes);
    let mut parser = Parser::new();
    let started = ctx.clock.now().mono_ms;
    let mut bound: Option<(Arc<SessionSlot>, u64)> = None;
    'conn: while !ctx.stopping.load(Ordering::Acquire) {
        match framer.read_from(&mut reader) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => break,
        }
        // until the Logon binds the connection to its session, one message at a time
        while bound.is_none() {
            let Some(frame) = framer.next_frame() else { break };
            let Frame::Message(range) = frame else {
                // garbled data before the Logon ends the connection
                break 'conn;
            };
            let bytes = &framer.bytes()[range];
            let Some(slot) = logon_slot(ctx, &mut parser, bytes) else {
                break 'conn;
            };
            let Ok(conn) = stream.try_clone() else { break 'conn };
            let (taken, _) = slot.with_session(|sh, app, now| sh.bind(conn, app, now));
            let Some(id) = taken else {
                // the session already has a connection: refuse this one, leave that one alone
                break 'conn;
            };
            slot.note_received();
            let (stale, close) = slot.with_session(|sh, app, now| {
                if sh.conn_id != id {
                    return true;
                }
                sh.session.on_frame(bytes, now, app);
                false
            });
            bound = Some((slot, id));
            if stale || close {
                break 'conn;
            }
        }
        // then everything this read brought, in one batch
        if let Some((slot, id)) = &bound {
            if framer.pending() > 0 && slot.on_frames(&mut framer, *id) {
                break 'conn;
            }
        }
        match &bound {
            Some((slot, id)) => {
                let (stale, close) = slot.with_session(|sh, _, now| {
                    if sh.conn_id != *id {
                        return true;
                    }
                    sh.session.on_timer(now);
                    false
                });
                if stale || close {
                    break;
                }
            }
            None if ctx.clock.now().mono_ms.saturating_sub(started) >= ctx.cfg.logon_timeout.as_millis() as u64 => {
                break
            }
            None => {}
        }
    }
    if let Some((slot, id)) = bound {
        slot.with_session(|sh, app, _| sh.unbind(id, app));
    }
    let _ = stream.shutdown(Shutdown::Both);
}
