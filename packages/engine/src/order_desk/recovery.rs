//! Start-up: open the journal (a torn tail is cut and reported; a broken chain refused, or cut back
//! when the config asks for it), replay it into the live and the
//! durable book, then re-create every trade record and blotter (newest first) in the store. Orders
//! whose accept was durable but whose acknowledgement was not are acknowledged now; working orders
//! are indexed for the simulator. The journal seq and the order ids continue without gaps.

use std::collections::HashMap;

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::{privacy, records, OrderDesk, OrderLog, OrdersShared, Post};
use crate::config::OrdersConfig;
use crate::error::EngineError;
use crate::hub::{Command, ContainerOp, Hub};
use crate::journal::{Journal, JournalOptions};
use crate::order_book::{ExecutionSimulator, OrderBook, OrderEvent, OrderLimits, OrderStatus};

/// What the replay at start found (`recovery()` in the napi API).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalRecovery {
    /// Journal entries replayed.
    pub records: u64,
    /// Bytes of torn tail cut off (0 = clean).
    pub bytes_dropped: u64,
    /// Last journal seq (0 = empty journal); the next entry gets `last_seq + 1`.
    pub last_seq: u64,
    /// Orders rebuilt.
    pub orders: u64,
    /// Of those, still open.
    pub open_orders: u64,
    /// `journal: dropped N bytes of torn tail after seq S` when a tail was cut, for the server's log.
    pub log_line: Option<String>,
    /// Records dropped by a cut back to the last consistent seq (`journal_truncate_to_consistent`).
    pub records_dropped: u64,
    /// `journal: cut back to seq S (truncate to consistent): <why>; dropped N records: <files>;
    /// saved in <dir>` when the journal was cut, for the server's log.
    pub cut_line: Option<String>,
}

fn startup_error(cfg: &OrdersConfig, what: impl std::fmt::Display) -> EngineError {
    EngineError::Internal {
        message: format!("order journal in '{}' (journalDir): {what}", cfg.journal_dir.display()),
    }
}

impl OrderDesk {
    /// Opens the journal in `cfg.journal_dir` and replays it. `post` sends a journal completion to
    /// the engine thread and its `order.ack` to the worker (on the journal writer thread). Errors
    /// (INTERNAL, naming the directory) on I/O failure, real corruption, or an entry that is not an
    /// order event fitting the state before it.
    pub fn open(cfg: OrdersConfig, post: Post) -> Result<OrderDesk, EngineError> {
        let mut opts = JournalOptions::new(&cfg.journal_dir);
        opts.fsync = cfg.journal_fsync;
        opts.truncate_to_consistent = cfg.journal_truncate_to_consistent;
        opts.commit_window = cfg.journal_commit_window;
        opts.clock = Arc::clone(&cfg.clock);
        opts.sync_hook = cfg.sync_hook.clone();
        opts.write_fault = cfg.journal_write_fault.clone();
        let sink = Arc::clone(&post);
        // The stats are made below, after the replay; no group completes before then.
        let counted: Arc<OnceLock<Arc<OrdersShared>>> = Arc::default();
        let count = Arc::clone(&counted);
        opts.group_hook = Some(Arc::new(move || {
            sink.group_done(&|seq| {
                if let Some(shared) = count.get() {
                    shared.note_durable(seq);
                }
            })
        }));
        let (journal, report) = Journal::open(opts).map_err(|e| startup_error(&cfg, e))?;
        let limits = OrderLimits {
            max_quantity: cfg.max_quantity,
            default_tick: cfg.default_tick,
            max_price_ticks: cfg.max_price_ticks,
            ..OrderLimits::default()
        };
        let mut book = OrderBook::new(limits);
        let mut durable = OrderBook::applying(limits);
        let mut last_seq_of: Vec<u64> = Vec::new();
        let replay = journal.replay_from(1).map_err(|e| startup_error(&cfg, e))?;
        let mut records_replayed = 0u64;
        for entry in replay {
            let entry = entry.map_err(|e| startup_error(&cfg, e))?;
            let mut ev = OrderEvent::decode(&entry.body)
                .map_err(|e| startup_error(&cfg, format!("journal seq {}: {e}", entry.seq)))?;
            book.apply(&ev)
                .map_err(|e| startup_error(&cfg, format!("journal seq {}: {e}", entry.seq)))?;
            // Last use of the event's strings: moved into the durable book's order.
            durable
                .apply_taking(&mut ev)
                .map_err(|e| startup_error(&cfg, format!("journal seq {}: {e}", entry.seq)))?;
            let idx = ev.order_id() as usize - 1;
            if last_seq_of.len() <= idx {
                last_seq_of.resize(idx + 1, 0);
            }
            last_seq_of[idx] = entry.seq;
            records_replayed += 1;
        }
        book.set_risk(cfg.risk.clone());
        let open = book.open_orders().count() as u64;
        let recovery = JournalRecovery {
            records: records_replayed,
            bytes_dropped: report.bytes_dropped,
            last_seq: journal.durable_seq(),
            orders: book.len() as u64,
            open_orders: open,
            log_line: report.log_line(),
            records_dropped: report.cut.as_ref().map_or(0, |c| c.dropped_records),
            cut_line: report.cut_line(),
        };
        let shared = Arc::new(OrdersShared {
            recovery,
            ..OrdersShared::default()
        });
        shared.open.store(open, std::sync::atomic::Ordering::Relaxed);
        shared
            .durable_seq
            .store(journal.durable_seq(), std::sync::atomic::Ordering::Relaxed);
        let _ = counted.set(Arc::clone(&shared)); // set once, here
        Ok(OrderDesk {
            book,
            durable,
            log: OrderLog::Journal(journal),
            sim: ExecutionSimulator::new(cfg.simulator),
            cfg,
            post,
            shared,
            failed: None,
            working: FxHashMap::default(),
            ticked: FxHashSet::default(),
            fresh: Vec::new(),
            pending: Vec::new(),
            pending_rows: Vec::new(),
            next_pass: None,
            scratch: Vec::with_capacity(256),
            restore_seqs: last_seq_of,
            next_end_of_day: None,
            gateway: None,
        })
    }

    /// Re-creates every trade record and blotter (newest first) in `hub`'s store, acknowledges
    /// orders left New (accept durable, acknowledgement not), and indexes working orders. Call once,
    /// before the hub serves sessions.
    pub fn restore(&mut self, hub: &mut Hub, now: Instant) {
        let seqs = std::mem::take(&mut self.restore_seqs);
        let mut blotters: HashMap<String, Vec<String>> = HashMap::new();
        let mut batch = Vec::with_capacity(1024);
        let received_ms = self.now_ms() as f64;
        for o in self.durable.orders().iter().rev() {
            if o.status == OrderStatus::New {
                continue; // shown once its acknowledgement (journaled below) is durable
            }
            let seq = seqs.get(o.order_id as usize - 1).copied().unwrap_or(0);
            batch.push(records::image(o, seq));
            let subject = privacy::trade_subject(&o.user, o.order_id);
            blotters.entry(o.user.clone()).or_default().push(subject);
            if batch.len() == 1024 {
                let batch = std::mem::take(&mut batch);
                hub.handle(Command::Publish { batch, received_ms }, now);
            }
        }
        if !batch.is_empty() {
            hub.handle(Command::Publish { batch, received_ms }, now);
        }
        for (user, subjects) in blotters {
            // Newest first: orders were visited from the highest id down.
            let ops = vec![ContainerOp::Add(subjects)];
            hub.handle(
                Command::ContainerPublish {
                    subject: privacy::blotter_subject(&user),
                    ops,
                },
                now,
            );
        }
        self.resume_open(hub, now);
    }

    /// Acknowledges the live book's orders left New (accept durable, acknowledgement not) and
    /// indexes its working orders for the simulator (at start, or when this node starts deciding).
    pub(super) fn resume_open(&mut self, hub: &mut Hub, now: Instant) {
        let ids: Vec<(u64, OrderStatus)> = self.book.open_orders().map(|o| (o.order_id, o.status)).collect();
        for (id, status) in ids {
            if status == OrderStatus::New {
                self.acknowledge(hub, id, now);
            } else {
                self.start_working(id, now);
            }
        }
    }
}
