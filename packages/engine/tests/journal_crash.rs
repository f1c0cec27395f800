//! Crash simulation: a child process appends in a loop and prints each acknowledged seq; the parent
//! SIGKILLs it mid-stream, reopens the journal and checks every acknowledged seq is there, gap-free,
//! with its body. Three kill/reopen rounds on the same directory.

#[path = "journal_util/mod.rs"]
mod util;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tidewire_engine::journal::Journal;
use util::{body, options, TempDir};

const DIR_VAR: &str = "TIDEWIRE_JOURNAL_CRASH_DIR";

/// The child: runs only when spawned by `sigkill_mid_append_loses_no_acknowledged_record`.
#[test]
#[ignore = "helper process for the crash test"]
fn crash_child_append_loop() {
    let Some(dir) = std::env::var_os(DIR_VAR) else { return };
    // Rotate now and then during the run; preallocated (zero-filled) space ahead of the writes.
    let mut o = util::prealloc_options(std::path::Path::new(&dir), 32 * 1024);
    o.segment_bytes = 64 * 1024;
    let (j, _) = Journal::open(o).unwrap();
    let start = j.durable_seq();
    let deadline = Instant::now() + Duration::from_secs(30);
    for k in 1..=2_000_000u64 {
        if Instant::now() > deadline {
            break;
        }
        j.append(body(start + k), |r| {
            if let Ok(seq) = r {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "acked {seq}");
                let _ = out.flush();
            }
        })
        .unwrap();
    }
}

#[test]
fn sigkill_mid_append_loses_no_acknowledged_record() {
    let dir = TempDir::new("crash");
    let exe = std::env::current_exe().unwrap();
    let mut max_acked_total = 0;
    for round in 0..3 {
        let mut child = Command::new(&exe)
            .args([
                "crash_child_append_loop",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DIR_VAR, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(seq) = line.strip_prefix("acked ").and_then(|s| s.parse::<u64>().ok()) {
                    let _ = tx.send(seq);
                }
            }
        });
        // Kill after this round's child acknowledged 3,000 more records (or 20 s, then fail).
        let deadline = Instant::now() + Duration::from_secs(20);
        let (mut seen, mut round_max) = (0u64, 0u64);
        while seen < 3_000 {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(seq) => {
                    seen += 1;
                    round_max = round_max.max(seq);
                }
                Err(_) => panic!("round {round}: child acknowledged only {seen} records in 20 s"),
            }
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        reader.join().unwrap();
        let acked: Vec<u64> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        let max_acked = acked.into_iter().max().unwrap_or(0).max(round_max).max(max_acked_total);
        let (j, report) = Journal::open(options(dir.path())).unwrap();
        assert!(
            report.last_seq >= max_acked,
            "round {round}: acked up to {max_acked}, journal holds up to {}",
            report.last_seq
        );
        let mut expect = 1u64;
        for e in j.replay_from(1).unwrap() {
            let e = e.unwrap();
            assert_eq!(e.seq, expect, "gap-free");
            assert_eq!(e.body, body(e.seq), "body of seq {}", e.seq);
            expect += 1;
        }
        assert_eq!(expect - 1, report.last_seq);
        j.close().unwrap();
        max_acked_total = max_acked;
        if let Some(line) = report.log_line() {
            eprintln!("round {round}: {line}");
        }
    }
    assert!(max_acked_total >= 9_000);
}
