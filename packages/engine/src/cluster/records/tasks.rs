//! The NATS side of record replication, on the link's runtime: the outbound task publishes what
//! the engine thread hands over (batches, snapshot chunks, requests) and a heartbeat every
//! interval; the inbound task reads the other nodes' messages, decodes them off the engine
//! thread, reassembles snapshot chunks and hands the results to the engine.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::codec::{self, Entry, Header, Reader};
use super::replica::{Inbound, Out};
use super::{add, EngineSink, RecordsConfig, RecordsStats};
use crate::cluster::{ClusterError, Link};

pub(super) struct TaskArgs {
    pub(super) cfg: RecordsConfig,
    pub(super) incarnation: u64,
    pub(super) stats: Arc<RecordsStats>,
    pub(super) queued: Arc<AtomicU64>,
    pub(super) dropped: Arc<AtomicU64>,
    pub(super) out_rx: UnboundedReceiver<Out>,
    pub(super) out_tx: UnboundedSender<Out>,
    pub(super) sink: EngineSink,
}

/// Subscribes (waiting for NATS to confirm), says hello, and spawns both tasks.
pub(super) fn spawn(link: &Arc<Link>, a: TaskArgs) -> Result<Vec<tokio::task::JoinHandle<()>>, ClusterError> {
    let client = link.client().clone();
    let cc = link.config().clone();
    let me: Arc<str> = Arc::from(cc.node.as_str());
    let subscribed = link.handle().block_on(async {
        let recs = client.subscribe(cc.subject("rec.*")).await?;
        let reqs = client.subscribe(cc.subject(&format!("img.{}", cc.node))).await?;
        let hellos = client.subscribe(cc.subject("hello")).await?;
        Ok::<_, async_nats::SubscribeError>((recs, reqs, hellos))
    });
    let (recs, reqs, hellos) =
        subscribed.map_err(|e| ClusterError::Runtime(format!("cannot subscribe to the record subjects: {e}")))?;

    let outbound = Outbound {
        client: client.clone(),
        rec_subject: cc.subject(&format!("rec.{}", cc.node)),
        img_prefix: cc.subject("img."),
        incarnation: a.incarnation,
        stats: Arc::clone(&a.stats),
        queued: a.queued,
        dropped: a.dropped,
        last_seq: 0,
    };
    let out = link
        .handle()
        .spawn(outbound.run(a.out_rx, a.cfg.heartbeat, cc.subject("hello"), Arc::clone(&me)));
    let inbound = Receiving {
        me,
        stats: a.stats,
        sink: a.sink,
        out_tx: a.out_tx,
        names: HashMap::new(),
        partial: HashMap::new(),
    };
    let inb = link.handle().spawn(inbound.run(recs, reqs, hellos, a.cfg.heartbeat));
    Ok(vec![out, inb])
}

struct Outbound {
    client: async_nats::Client,
    rec_subject: String,
    img_prefix: String,
    incarnation: u64,
    stats: Arc<RecordsStats>,
    queued: Arc<AtomicU64>,
    dropped: Arc<AtomicU64>,
    /// The last batch seq published.
    last_seq: u64,
}

impl Outbound {
    async fn run(mut self, mut rx: UnboundedReceiver<Out>, every: std::time::Duration, hello: String, me: Arc<str>) {
        // After the subscriptions (same connection, so the server has them): the others answer
        // with a heartbeat, which tells this node what it missed.
        self.publish(hello, me.as_bytes().to_vec()).await;
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                o = rx.recv() => match o {
                    None => break,
                    Some(Out::Rec { payload, batch_seq }) => {
                        let n = payload.len() as u64;
                        self.publish(self.rec_subject.clone(), payload).await;
                        self.queued.fetch_sub(n, Ordering::Relaxed);
                        if batch_seq > 0 {
                            self.last_seq = batch_seq;
                        }
                    }
                    Some(Out::Request { owner, payload }) => {
                        let n = payload.len() as u64;
                        let subject = format!("{}{owner}", self.img_prefix);
                        self.publish(subject, payload).await;
                        self.queued.fetch_sub(n, Ordering::Relaxed);
                    }
                    Some(Out::Heartbeat) => self.heartbeat().await,
                },
                _ = tick.tick() => self.heartbeat().await,
            }
        }
    }

    async fn heartbeat(&mut self) {
        let seq = self.last_seq.max(self.dropped.load(Ordering::Relaxed));
        let mut msg = Vec::with_capacity(codec::HEADER_BYTES);
        codec::header(&mut msg, codec::KIND_HEARTBEAT, self.incarnation, seq);
        self.publish(self.rec_subject.clone(), msg).await;
    }

    async fn publish(&self, subject: String, payload: Vec<u8>) {
        let n = payload.len() as u64;
        // An error means the client is closed (the engine is stopping): nothing to retry.
        if self.client.publish(subject, payload.into()).await.is_ok() {
            add(&self.stats.bytes_sent, n);
        }
    }
}

/// A snapshot being reassembled from its chunks.
struct Partial {
    id: u64,
    next: u32,
    header: Header,
    full: bool,
    entries: Vec<Entry>,
}

struct Receiving {
    me: Arc<str>,
    stats: Arc<RecordsStats>,
    sink: EngineSink,
    out_tx: UnboundedSender<Out>,
    /// Node names seen, shared into every message from them.
    names: HashMap<String, Arc<str>>,
    partial: HashMap<Arc<str>, Partial>,
}

impl Receiving {
    async fn run(
        mut self,
        mut recs: async_nats::Subscriber,
        mut reqs: async_nats::Subscriber,
        mut hellos: async_nats::Subscriber,
        every: std::time::Duration,
    ) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let alive = tokio::select! {
                Some(m) = recs.next() => self.record_message(&m),
                Some(m) = reqs.next() => self.request(&m.payload),
                // Another node started: tell it where this node's batches are.
                Some(m) = hellos.next() => {
                    m.payload[..] == *self.me.as_bytes() || self.out_tx.send(Out::Heartbeat).is_ok()
                }
                _ = tick.tick() => (self.sink)(Inbound::Tick, 0),
                else => false,
            };
            if !alive {
                break;
            }
        }
    }

    fn name(&mut self, node: &str) -> Arc<str> {
        if let Some(n) = self.names.get(node) {
            return Arc::clone(n);
        }
        let n: Arc<str> = Arc::from(node);
        self.names.insert(node.to_owned(), Arc::clone(&n));
        n
    }

    fn request(&mut self, payload: &[u8]) -> bool {
        add(&self.stats.bytes_received, payload.len() as u64);
        match Reader::new(payload).request() {
            Ok((from, subjects)) => {
                let from = self.name(&from);
                (self.sink)(Inbound::Request { from, subjects }, payload.len())
            }
            Err(_) => {
                add(&self.stats.decode_errors, 1);
                true
            }
        }
    }

    /// One message on `<name>.rec.<node>`; false when the engine is gone.
    fn record_message(&mut self, m: &async_nats::Message) -> bool {
        let Some(node) = m.subject.rsplit('.').next() else {
            return true;
        };
        if node == &*self.me {
            return true; // loopback: this node's own messages
        }
        let bytes = m.payload.len();
        add(&self.stats.bytes_received, bytes as u64);
        let node = self.name(node);
        match self.decode(&node, &m.payload) {
            Ok(Some(msg)) => (self.sink)(msg, bytes),
            Ok(None) => true,
            Err(_) => {
                add(&self.stats.decode_errors, 1);
                self.partial.remove(&node);
                true
            }
        }
    }

    fn decode(&mut self, node: &Arc<str>, payload: &[u8]) -> Result<Option<Inbound>, codec::CodecError> {
        let mut r = Reader::new(payload);
        let header = r.header()?;
        match header.kind {
            codec::KIND_BATCH => {
                let mut entries = Vec::new();
                while !r.done() {
                    entries.push(r.entry()?);
                }
                Ok(Some(Inbound::Batch {
                    node: Arc::clone(node),
                    header,
                    entries,
                }))
            }
            codec::KIND_HEARTBEAT => Ok(Some(Inbound::Heartbeat {
                node: Arc::clone(node),
                header,
            })),
            codec::KIND_SNAPSHOT => {
                let head = r.snapshot_head()?;
                if head.for_node != *self.me {
                    return Ok(None); // asked by another node
                }
                let mut entries = Vec::new();
                while !r.done() {
                    entries.push(r.entry()?);
                }
                let p = match self.partial.remove(node) {
                    Some(mut p) if head.chunk > 0 && p.id == head.id && p.next == head.chunk => {
                        p.entries.append(&mut entries);
                        p.next += 1;
                        p
                    }
                    // A chunk went missing: drop it all (the request is made again after a timeout).
                    _ if head.chunk > 0 => return Ok(None),
                    _ => Partial {
                        id: head.id,
                        next: 1,
                        header,
                        full: head.full,
                        entries,
                    },
                };
                if !head.last {
                    self.partial.insert(Arc::clone(node), p);
                    return Ok(None);
                }
                Ok(Some(Inbound::Snapshot {
                    node: Arc::clone(node),
                    header: p.header,
                    full: p.full,
                    entries: p.entries,
                }))
            }
            k => Err(codec::CodecError(format!("unknown message kind {k}"))),
        }
    }
}
