//! Journal: acknowledgement only after fdatasync, replay, rotation, reopen continuity, backpressure.

#[path = "journal_util/mod.rs"]
mod util;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tidewire_engine::journal::{Journal, JournalError, JournalOptions, Resume};
use util::{body, options, reopen_all, write_n, TempDir};

#[test]
fn every_ack_comes_after_the_fsync_that_covers_it() {
    let dir = TempDir::new("ack");
    let synced = Arc::new(AtomicU64::new(0));
    let mut o = options(dir.path());
    let s = synced.clone();
    o.sync_hook = Some(Arc::new(move |last| s.store(last, Ordering::SeqCst)));
    let (j, report) = Journal::open(o).unwrap();
    assert!(report.created);
    let violations = Arc::new(Mutex::new(Vec::new()));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = crossbeam_channel::unbounded();
    for i in 1..=2_000u64 {
        let (synced, violations, acked, tx) = (synced.clone(), violations.clone(), acked.clone(), tx.clone());
        j.append(body(i), move |r| {
            let seq = r.unwrap();
            if synced.load(Ordering::SeqCst) < seq {
                violations.lock().unwrap().push(seq);
            }
            acked.lock().unwrap().push(seq);
            tx.send(()).unwrap();
        })
        .unwrap();
    }
    for _ in 0..2_000 {
        rx.recv_timeout(Duration::from_secs(10)).expect("ack within 10 s");
    }
    assert!(
        violations.lock().unwrap().is_empty(),
        "acked before fsync: {:?}",
        violations.lock().unwrap()
    );
    let acked = acked.lock().unwrap().clone();
    assert_eq!(acked, (1..=2_000).collect::<Vec<_>>(), "acks in seq order, gap-free");
    let stats = j.stats();
    assert_eq!(stats.durable_seq, 2_000);
    assert!(stats.groups >= 1 && stats.groups <= 2_000);
    j.close().unwrap();
}

#[test]
fn the_group_hook_runs_once_per_group_after_all_its_completions() {
    let dir = TempDir::new("group-hook");
    let completed = Arc::new(AtomicU64::new(0));
    // completed count seen at each hook call
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut o = options(dir.path());
    let (c, s) = (completed.clone(), seen.clone());
    o.group_hook = Some(Arc::new(move || s.lock().unwrap().push(c.load(Ordering::SeqCst))));
    let (j, _) = Journal::open(o).unwrap();
    for i in 1..=2_000u64 {
        let c = completed.clone();
        j.append(body(i), move |r| {
            assert_eq!(r.unwrap(), i);
            c.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while completed.load(Ordering::SeqCst) < 2_000 {
        assert!(
            std::time::Instant::now() < deadline,
            "appends not completed within 10 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    // every group was committed (counted before its completions ran); close joins the writer
    let groups = j.stats().groups;
    j.close().unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len() as u64, groups, "one hook call per group");
    assert_eq!(seen.last(), Some(&2_000), "the last call came after every completion");
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "each call after its group's completions: {seen:?}"
    );
}

#[test]
fn ack_waits_for_a_blocked_fsync_and_queue_applies_backpressure() {
    let dir = TempDir::new("block");
    let (gate_tx, gate_rx) = crossbeam_channel::bounded::<()>(0);
    let mut o = options(dir.path());
    o.queue_capacity = 2;
    o.max_group_records = 1;
    let (inside_tx, inside_rx) = crossbeam_channel::unbounded::<u64>();
    o.sync_hook = Some(Arc::new(move |seq| {
        let _ = inside_tx.send(seq);
        let _ = gate_rx.recv_timeout(Duration::from_secs(10));
    }));
    let (j, _) = Journal::open(o).unwrap();
    let acked = Arc::new(AtomicU64::new(0));
    let a = acked.clone();
    j.append(body(1), move |r| a.store(r.unwrap(), Ordering::SeqCst))
        .unwrap();
    // Wait until the writer is inside the hook (after fdatasync, before the ack): no ack yet, and
    // append 1 has left the queue.
    assert_eq!(inside_rx.recv_timeout(Duration::from_secs(10)), Ok(1));
    assert_eq!(
        acked.load(Ordering::SeqCst),
        0,
        "acknowledged before the sync step finished"
    );
    // Queue capacity 2: two more fit, the third is refused.
    j.try_append(body(2), |_| {}).unwrap();
    j.try_append(body(3), |_| {}).unwrap();
    assert_eq!(
        j.try_append(body(4), |_| {}),
        Err(JournalError::QueueFull { capacity: 2 })
    );
    for _ in 0..3 {
        gate_tx.send_timeout((), Duration::from_secs(10)).unwrap();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while acked.load(Ordering::SeqCst) != 1 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert_eq!(acked.load(Ordering::SeqCst), 1);
    drop(gate_tx); // hook returns at once from now on
    j.close().unwrap();
    let (all, _) = reopen_all(dir.path());
    assert_eq!(all.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 2, 3]);
}

#[test]
fn replay_from_any_seq_returns_exactly_the_tail() {
    let dir = TempDir::new("replay");
    write_n(dir.path(), 50);
    let (j, report) = Journal::open(options(dir.path())).unwrap();
    assert_eq!(
        (report.records, report.first_seq, report.last_seq, report.bytes_dropped),
        (50, 1, 50, 0)
    );
    for from in [0u64, 1, 2, 25, 50, 51, 1000] {
        let got: Vec<_> = j.replay_from(from).unwrap().map(|e| e.unwrap()).collect();
        let want: Vec<u64> = (from.max(1)..=50).collect();
        assert_eq!(got.iter().map(|e| e.seq).collect::<Vec<_>>(), want, "from {from}");
        assert!(got.iter().all(|e| e.body == body(e.seq)));
    }
    j.close().unwrap();
}

#[test]
fn sequence_and_epoch_continue_across_reopen() {
    let dir = TempDir::new("reopen");
    write_n(dir.path(), 10);
    let (j, report) = Journal::open(JournalOptions {
        epoch: Some(999),
        ..options(dir.path())
    })
    .unwrap();
    assert!(!report.created);
    assert_eq!(j.epoch(), 77, "epoch read from the segments, not the option");
    assert_eq!(j.append_wait(body(11)).unwrap(), 11);
    assert_eq!(j.resume(77, 5), Resume::Replay { from: 6 });
    assert_eq!(j.resume(77, 11), Resume::Replay { from: 12 });
    assert_eq!(j.resume(77, 12), Resume::Resnapshot, "seq from the future");
    assert_eq!(j.resume(78, 5), Resume::Resnapshot, "other epoch");
    j.close().unwrap();
    let (all, _) = reopen_all(dir.path());
    assert_eq!(all.len(), 11);
    assert!(all
        .iter()
        .enumerate()
        .all(|(i, (seq, b))| *seq == i as u64 + 1 && *b == body(*seq)));
}

#[test]
fn rotation_splits_segments_and_replay_crosses_them() {
    let dir = TempDir::new("rotate");
    let mut o = options(dir.path());
    o.segment_bytes = 4096;
    let (j, _) = Journal::open(o.clone()).unwrap();
    for i in 1..=400u64 {
        assert_eq!(j.append_wait(body(i)).unwrap(), i);
    }
    assert!(j.stats().segments_created >= 3);
    j.close().unwrap();
    let files = util::segments(dir.path());
    assert!(files.len() >= 4);
    assert!(files.iter().all(|f| f.metadata().unwrap().len() <= 4096));
    let (j, report) = Journal::open(o).unwrap();
    assert_eq!(
        (report.records, report.last_seq, report.segments),
        (400, 400, files.len())
    );
    let got: Vec<_> = j.replay_from(237).unwrap().map(|e| e.unwrap().seq).collect();
    assert_eq!(got, (237..=400).collect::<Vec<_>>());
    assert_eq!(j.append_wait(body(401)).unwrap(), 401);
    j.close().unwrap();
}

#[test]
fn bad_input_gets_typed_errors() {
    let dir = TempDir::new("bad");
    let mut o = options(dir.path());
    o.max_record_bytes = 100;
    let (j, _) = Journal::open(o).unwrap();
    assert_eq!(
        j.append_wait(vec![0; 101]),
        Err(JournalError::RecordTooLarge { len: 101, limit: 100 })
    );
    assert_eq!(j.append_wait(vec![]).unwrap(), 1, "empty body is fine");
    j.close().unwrap();
    let mut o = options(dir.path());
    o.segment_bytes = 10;
    assert!(matches!(
        Journal::open(o),
        Err(JournalError::InvalidOption {
            name: "segment_bytes",
            ..
        })
    ));
    let mut o = options(dir.path());
    o.queue_capacity = 0;
    assert!(matches!(
        Journal::open(o),
        Err(JournalError::InvalidOption {
            name: "queue_capacity",
            ..
        })
    ));
}

#[test]
fn segments_of_another_epoch_are_refused() {
    let a = TempDir::new("epoch-a");
    let b = TempDir::new("epoch-b");
    let mut oa = options(a.path());
    oa.segment_bytes = 4096;
    let (j, _) = Journal::open(oa).unwrap();
    for i in 1..=100 {
        j.append_wait(body(i)).unwrap();
    }
    j.close().unwrap();
    write_n(b.path(), 1);
    // Move journal b's first segment over journal a's second one (same name, other epoch).
    let segs = util::segments(a.path());
    let other = util::only_segment(b.path());
    let mut bytes = std::fs::read(&other).unwrap();
    // Re-stamp b's header with a different epoch but a's second segment's first seq.
    let first = std::fs::read(&segs[1]).unwrap()[16..24].to_vec();
    bytes[8..16].copy_from_slice(&5u64.to_le_bytes());
    bytes[16..24].copy_from_slice(&first);
    let crc = crc32fast::hash(&bytes[0..28]);
    bytes[28..32].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&segs[1], &bytes).unwrap();
    assert!(matches!(
        Journal::open(options(a.path())),
        Err(JournalError::EpochMismatch {
            expected: 77,
            found: 5,
            ..
        })
    ));
}

#[test]
fn fsync_timing_and_default_epoch_come_from_the_injected_clock() {
    struct Steps(AtomicU64);
    impl tidewire_engine::journal::Clock for Steps {
        fn now_nanos(&self) -> u64 {
            self.0.fetch_add(1_000, Ordering::SeqCst)
        }
    }
    let dir = TempDir::new("clock");
    let mut o = JournalOptions::new(dir.path());
    o.clock = Arc::new(Steps(AtomicU64::new(5_000)));
    let (j, _) = Journal::open(o).unwrap();
    assert_eq!(j.epoch(), 5_000, "new journal's epoch = the clock's first reading");
    for i in 1..=3 {
        j.append_wait(body(i)).unwrap();
    }
    let s = j.stats();
    assert_eq!((s.syncs, s.sync_nanos_total, s.sync_nanos_max), (3, 3_000, 1_000));
    j.close().unwrap();
}

/// Appends bodies `from..from + n` and waits for their acks.
fn append_and_wait(j: &Journal, from: u64, n: u64) {
    let (tx, rx) = crossbeam_channel::unbounded();
    for i in from..from + n {
        let tx = tx.clone();
        j.append(body(i), move |r| tx.send(r.map(|_| ())).unwrap()).unwrap();
    }
    for _ in 0..n {
        rx.recv_timeout(Duration::from_secs(10))
            .expect("ack within 10 s")
            .unwrap();
    }
}

#[test]
fn a_commit_window_gathers_appends_that_follow_a_group_closely() {
    let dir = TempDir::new("window");
    let mut o = options(dir.path());
    // Long enough that the appends below arrive inside it on a busy machine too.
    o.commit_window = Duration::from_secs(2);
    let (j, _) = Journal::open(o).unwrap();
    // The first group: within the window of the writer's start, so it waits for the window.
    append_and_wait(&j, 1, 1);
    assert_eq!(j.stats().groups, 1);
    // Right behind it: the next appends all wait for the window and share one group (with no
    // window the idle writer would take the first of them on its own).
    let (tx, rx) = crossbeam_channel::unbounded();
    for i in 2..=4u64 {
        let tx = tx.clone();
        j.append(body(i), move |r| tx.send(r.unwrap()).unwrap()).unwrap();
    }
    let seqs: Vec<u64> = (0..3)
        .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
        .collect();
    assert_eq!(seqs, [2, 3, 4], "acks in seq order");
    assert_eq!(j.stats().groups, 2, "one group for the three");
    j.close().unwrap();

    // No window: the same three appends 50 ms apart are three groups.
    let dir = TempDir::new("no-window");
    let (j, _) = Journal::open(options(dir.path())).unwrap();
    for i in 1..=3u64 {
        append_and_wait(&j, i, 1);
    }
    assert_eq!(j.stats().groups, 3, "each append waited for alone: one group each");
    j.close().unwrap();
}

#[test]
fn a_full_group_ends_the_commit_window_early_and_close_ends_it_too() {
    let dir = TempDir::new("window-full");
    let mut o = options(dir.path());
    // A window no test waits out: only a full group (or the close) ends it.
    o.commit_window = Duration::from_secs(600);
    o.max_group_records = 3;
    let (j, _) = Journal::open(o).unwrap();
    let (tx, rx) = crossbeam_channel::unbounded();
    for i in 1..=3u64 {
        let tx = tx.clone();
        j.append(body(i), move |r| tx.send(r.unwrap()).unwrap()).unwrap();
    }
    let seqs: Vec<u64> = (0..3)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(60))
                .expect("a full group is committed without waiting for the window")
        })
        .collect();
    assert_eq!(seqs, [1, 2, 3], "acks in seq order");
    assert_eq!(j.stats().groups, 1, "one group for the three");
    // One more: it waits in the window; closing commits it (durable before close returns).
    let (tx, rx) = crossbeam_channel::unbounded();
    j.append(body(4), move |r| tx.send(r).unwrap()).unwrap();
    j.close().unwrap();
    assert_eq!(rx.try_recv().expect("completed before close returned").unwrap(), 4);
}

#[test]
fn append_returns_the_seq_its_completion_gets_across_a_reopen() {
    let dir = TempDir::new("append-seq");
    for round in 0..2u64 {
        let (j, _) = Journal::open(options(dir.path())).unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut returned = Vec::new();
        for i in 1..=50u64 {
            let tx = tx.clone();
            let seq = if i % 2 == 0 {
                j.append(body(i), move |r| tx.send(r.unwrap()).unwrap()).unwrap()
            } else {
                j.try_append(body(i), move |r| tx.send(r.unwrap()).unwrap()).unwrap()
            };
            returned.push(seq);
        }
        let completed: Vec<u64> = (0..50)
            .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        assert_eq!(returned, completed, "round {round}");
        assert_eq!(returned[0], round * 50 + 1, "numbering continues after the reopen");
        j.close().unwrap();
    }
}

#[test]
fn a_group_failing_after_a_rotation_completes_what_the_rotation_synced_as_durable() {
    use std::sync::atomic::AtomicBool;
    let dir = TempDir::new("fail-after-rotation");
    let mut o = options(dir.path());
    o.segment_bytes = 4096;
    // once told to, the writer stops after a sync until the test queued a group that rotates
    let hold = Arc::new(AtomicBool::new(false));
    let (inside_tx, inside_rx) = crossbeam_channel::unbounded::<()>();
    let (go_tx, go_rx) = crossbeam_channel::unbounded::<()>();
    let h = hold.clone();
    o.sync_hook = Some(Arc::new(move |_| {
        if h.swap(false, Ordering::SeqCst) {
            inside_tx.send(()).unwrap();
            let _ = go_rx.recv_timeout(Duration::from_secs(10));
        }
    }));
    // the group's last write fails (a full disk); the writes of its rotations before it do not
    const LAST: u64 = 30;
    o.write_fault = Some(Arc::new(|last| {
        (last == LAST).then(|| std::io::Error::from(std::io::ErrorKind::StorageFull))
    }));
    let (j, _) = Journal::open(o).unwrap();
    assert_eq!(j.append_wait(vec![1; 1000]).unwrap(), 1);
    let (tx, rx) = crossbeam_channel::unbounded();
    let done = move |tx: crossbeam_channel::Sender<_>, i: u64| {
        move |r: Result<u64, JournalError>| tx.send((i, r.is_ok())).unwrap()
    };
    hold.store(true, Ordering::SeqCst);
    j.append(vec![2; 1000], done(tx.clone(), 2)).unwrap();
    inside_rx.recv_timeout(Duration::from_secs(10)).expect("seq 2 synced");
    for i in 3..=LAST {
        j.append(vec![i as u8; 1000], done(tx.clone(), i)).unwrap();
    }
    go_tx.send(()).unwrap();
    let mut completed: Vec<(u64, bool)> = (2..=LAST)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(10))
                .expect("every append completes")
        })
        .collect();
    completed.sort_unstable();
    let durable = j.failed_at().expect("the writer failed");
    assert!(
        durable > 2 && durable < LAST,
        "the group rotated before it failed: {durable}"
    );
    let ok: Vec<u64> = completed.iter().filter(|c| c.1).map(|c| c.0).collect();
    assert_eq!(ok, (2..=durable).collect::<Vec<_>>(), "durable ones complete as such");
    assert!(j.close().is_err());
    let (all, _) = reopen_all(dir.path());
    let seqs: Vec<u64> = all.iter().map(|e| e.0).collect();
    assert_eq!(
        seqs,
        (1..=durable).collect::<Vec<_>>(),
        "exactly what was completed as durable"
    );
}
