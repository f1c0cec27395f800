//! The blotter shape through the hub (engine thread only: no napi, no sockets): the issue-4
//! `run blotter` load. `users` sessions, each with its own container `/BENCH/BLOTTER/<u>` of
//! `trades` trade records `/BENCH/TRADE/<u>/<n>` (newest first) and one view `Status < 10`, natural
//! order, window 20. A feed of `rate` updates/s walks every trade in turn, trade-major (consecutive
//! updates hit different users), as `loadgen`'s blotter feed does: `Status + 1` while below 10,
//! else only the `updated` stamp; each user also gets a new trade (Status 1, inserted at the top)
//! every 10 s. Updates go in one source frame per `TICK_MS`, each frame followed by `run_due` (one
//! engine pass: apply, view flush, delivery).
//!
//! Prints, over the measured seconds (after 1 s of warm-up), the engine thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`) per record update, split into the publish + view flush
//! (`Hub::handle`) and delivery (`Hub::run_due`), and the distribution of a pass's CPU time: a
//! publish applied at the start of a pass waits at most that long before its frames are drained
//! (so the pass time bounds the engine's share of publish-applied -> frame-drained latency).

use std::time::{Duration, Instant};

use super::under_load::{num, publish, text, PassCpu, Rng};
use tidewire_engine::config::EngineConfig;
use tidewire_engine::hub::{Command, ContainerOp, FrameSink, Hub};
use tidewire_engine::wire::Publish;

/// Counts delivered frames, bytes and row items (outside the timed calls).
#[derive(Default)]
struct Counter {
    frames: usize,
    bytes: usize,
}

impl FrameSink for Counter {
    fn frame(&mut self, _: u32, _: u32, parts: &[&[u8]], _: u16) {
        self.frames += 1;
        self.bytes += parts.iter().map(|p| p.len()).sum::<usize>();
    }
}

/// Status of a done trade (the view shows `Status < 10`).
const DONE: u8 = 10;
/// Milliseconds between two source frames.
const TICK_MS: f64 = 5.0;
/// Seconds between two new trades of one user.
const NEW_TRADE_S: f64 = 10.0;

fn trade(u: usize, n: usize, status: u8, ts: f64, image: bool) -> Publish {
    let mut fields = vec![num("Status", f64::from(status)), num("updated", ts.round())];
    if image {
        fields.extend([
            num("tradeId", n as f64),
            text("instrument", format!("I{}", (u * 7 + n) % 50)),
            text("side", if (u + n).is_multiple_of(2) { "buy" } else { "sell" }.into()),
            num("quantity", (1_000 * (1 + (u + 3 * n) % 20)) as f64),
            num("price", 100.0 + ((u * 13 + n * 7) % 1000) as f64 / 100.0),
        ]);
    }
    Publish {
        subject: format!("/BENCH/TRADE/{u}/{n}"),
        ts: Some(ts),
        image,
        fields,
    }
}

/// Runs `users` blotters of `trades` trades under `rate` updates/s for `secs` virtual seconds
/// (after 1 s of warm-up) and prints the costs.
pub fn run(users: usize, trades: usize, rate: usize, secs: u64) {
    let t0 = Instant::now();
    let at = |ms: f64| t0 + Duration::from_micros((ms * 1000.0) as u64);
    let mut hub = Hub::new(EngineConfig::default());
    let mut sink = Counter::default();
    let mut rng = Rng(0xb1077e5);
    let cap = trades + ((secs + 2) as f64 / NEW_TRADE_S).ceil() as usize + 1;
    let mut status = vec![DONE; users * cap];
    let mut held = vec![trades; users];
    let setup = Instant::now();
    for u in 0..users {
        let batch: Vec<Publish> = (0..trades)
            .map(|n| {
                // As if one trade had been created every 10 s: all done but the newest few.
                let age = (trades - n) as f64 * NEW_TRADE_S;
                let s = (1.0 + (age / 3.0).floor()).min(f64::from(DONE)) as u8;
                status[u * cap + n] = s;
                trade(u, n, s, 0.0, true)
            })
            .collect();
        let subjects = batch.iter().rev().map(|p| p.subject.clone()).collect();
        hub.handle(
            Command::Publish {
                batch,
                received_ms: 0.0,
            },
            at(0.0),
        );
        hub.handle(
            Command::ContainerPublish {
                subject: format!("/BENCH/BLOTTER/{u}"),
                ops: vec![ContainerOp::Add(subjects)],
            },
            at(0.0),
        );
        let sid = u as u32 + 1;
        hub.handle(
            Command::OpenSession {
                sid,
                worker: 0,
                user: format!("u{u}"),
                tier: String::new(),
            },
            at(0.0),
        );
        hub.handle(
            Command::ViewCreate {
                sid,
                req_id: 1,
                container: format!("/BENCH/BLOTTER/{u}"),
                filter: "Status < 10".into(),
                sort: String::new(),
                offset: 0,
                size: 20,
            },
            at(0.0),
        );
    }
    hub.run_due(at(0.0), &mut sink);
    let rows: usize = hub.views().infos().iter().map(|i| i.rows).sum();
    eprintln!(
        "blotter/{users}_users/{trades}_trades/{rate}_per_s: {} views, {:.1} rows shown per view, set up in {:.1} s",
        hub.views().view_count(),
        rows as f64 / users.max(1) as f64,
        setup.elapsed().as_secs_f64()
    );
    let per_tick = rate as f64 * TICK_MS / 1000.0;
    let new_per_tick = users as f64 * TICK_MS / 1000.0 / NEW_TRADE_S;
    let (mut due, mut new_due) = (0.0f64, 0.0f64);
    let (mut k, mut next_user) = (0usize, 0usize);
    let (mut cpu, mut updates, mut inserts) = (PassCpu::default(), 0usize, 0usize);
    let (mut frames0, mut bytes0) = (0, 0);
    let end = (secs + 1) as f64 * 1000.0;
    let mut tick = TICK_MS;
    while tick <= end {
        let measuring = tick > 1000.0;
        if !measuring {
            (frames0, bytes0) = (sink.frames, sink.bytes);
        }
        due += per_tick;
        new_due += new_per_tick;
        let mut batch: Vec<Publish> = Vec::with_capacity(due as usize + 1);
        while due >= 1.0 {
            due -= 1.0;
            // Trade-major over the users: one user's updates spread over the cycle.
            let u = k % users;
            let n = (k / users) % cap;
            k += 1;
            if n >= held[u] {
                continue;
            }
            let s = &mut status[u * cap + n];
            if *s < DONE {
                *s += 1;
                batch.push(trade(u, n, *s, tick, false));
            } else {
                let mut p = trade(u, n, DONE, tick, false);
                p.fields.remove(0); // only `updated`
                batch.push(p);
            }
        }
        let mut creates: Vec<(String, Publish)> = Vec::new();
        while new_due >= 1.0 {
            new_due -= 1.0;
            let u = next_user;
            next_user = (next_user + 1) % users;
            let n = held[u];
            if n >= cap {
                continue;
            }
            held[u] += 1;
            status[u * cap + n] = 1;
            creates.push((format!("/BENCH/BLOTTER/{u}"), trade(u, n, 1, tick, true)));
        }
        let n_updates = batch.len() + creates.len();
        let _ = rng.next();
        let n_creates = creates.len();
        cpu.pass(&mut hub, at(tick), &mut sink, measuring, |hub| {
            publish(hub, batch, tick, at(tick));
            for (c, p) in creates {
                let subject = p.subject.clone();
                publish(hub, vec![p], tick, at(tick));
                hub.handle(
                    Command::ContainerPublish {
                        subject: c,
                        ops: vec![ContainerOp::InsertAt(0, vec![subject])],
                    },
                    at(tick),
                );
            }
        });
        if measuring {
            updates += n_updates;
            inserts += n_creates;
        }
        tick += TICK_MS;
    }
    eprintln!(
        "  {updates} record updates ({inserts} new trades), {} frames delivered, {:.1} MB",
        sink.frames - frames0,
        (sink.bytes - bytes0) as f64 / 1e6
    );
    eprintln!(
        "  engine CPU: {:.2} us per record update; {}",
        cpu.total_us() / updates.max(1) as f64,
        cpu.split(secs)
    );
    cpu.print_passes(per_tick, TICK_MS);
}
