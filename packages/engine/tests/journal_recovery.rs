//! Journal recovery: torn tails (every byte offset), corrupt tail CRC, mid-file corruption, torn
//! groups, torn segment creation.

#[path = "journal_util/mod.rs"]
mod util;

use proptest::prelude::*;
use std::sync::Arc;
use std::time::Duration;
use tidewire_engine::journal::{Journal, JournalError, HEADER_LEN};
use util::{body, only_segment, options, reopen_all, write_n, TempDir};

/// Byte offset where record `seq` starts in a single-segment journal written by `write_n`.
fn record_offset(seq: u64) -> usize {
    HEADER_LEN + (1..seq).map(|i| 8 + 16 + body(i).len()).sum::<usize>()
}

fn check_cut_inside_last_record(cut: usize) {
    let dir = TempDir::new("torn");
    write_n(dir.path(), 10);
    let seg = only_segment(dir.path());
    let start = record_offset(10);
    let full = std::fs::metadata(&seg).unwrap().len() as usize;
    assert_eq!(full, record_offset(11));
    let at = start + cut;
    assert!(at < full);
    // Trailing zero bytes are indistinguishable from preallocated free space: the torn bytes
    // counted (and cut) are those up to the last non-zero one.
    let torn = nonzero_span(&std::fs::read(&seg).unwrap()[start..at]);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&seg)
        .unwrap()
        .set_len(at as u64)
        .unwrap();
    let (all, report) = reopen_all(dir.path());
    assert_eq!(report.last_seq, 9);
    assert_eq!(report.bytes_dropped, torn as u64);
    if torn > 0 {
        assert_eq!(
            report.log_line().unwrap(),
            format!("journal: dropped {torn} bytes of torn tail after seq 9")
        );
    }
    assert_eq!(all.iter().map(|e| e.0).collect::<Vec<_>>(), (1..=9).collect::<Vec<_>>());
    let want_len = if torn > 0 { start } else { at };
    assert_eq!(
        std::fs::metadata(&seg).unwrap().len() as usize,
        want_len,
        "file cut at the last good record"
    );
}

/// Length of `b` up to and including its last non-zero byte.
fn nonzero_span(b: &[u8]) -> usize {
    b.iter().rposition(|x| *x != 0).map_or(0, |i| i + 1)
}

#[test]
fn torn_tail_at_every_byte_offset_of_the_last_record() {
    let len = record_offset(11) - record_offset(10);
    for cut in 0..len {
        check_cut_inside_last_record(cut);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    /// Torn tail with garbage (not just a cut): the last record's bytes from a random offset are
    /// replaced by random bytes; recovery keeps 1..=9 and the journal continues at 10.
    #[test]
    fn torn_tail_with_garbage_is_cut_and_sequence_continues(cut in 0usize..40, junk in proptest::collection::vec(any::<u8>(), 1..64)) {
        let dir = TempDir::new("garbage");
        write_n(dir.path(), 10);
        let seg = only_segment(dir.path());
        let mut bytes = std::fs::read(&seg).unwrap();
        let start = record_offset(10);
        let at = (start + cut).min(bytes.len() - 1);
        bytes.truncate(at);
        bytes.extend_from_slice(&junk);
        std::fs::write(&seg, &bytes).unwrap();
        let (j, report) = Journal::open(options(dir.path())).unwrap();
        prop_assert_eq!(report.last_seq, 9);
        prop_assert_eq!(report.bytes_dropped as usize, nonzero_span(&bytes[start..]));
        prop_assert_eq!(j.append_wait(body(10)).unwrap(), 10);
        j.close().unwrap();
        let (all, _) = reopen_all(dir.path());
        prop_assert_eq!(all.len(), 10);
        prop_assert!(all.iter().all(|(s, b)| *b == body(*s)));
    }
}

#[test]
fn corrupt_crc_in_the_tail_is_cut() {
    let dir = TempDir::new("tailcrc");
    write_n(dir.path(), 10);
    let seg = only_segment(dir.path());
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = record_offset(10) + 8 + 16 + 3; // inside record 10's body
    bytes[at] ^= 0xff;
    std::fs::write(&seg, &bytes).unwrap();
    let (all, report) = reopen_all(dir.path());
    assert_eq!(
        (report.last_seq, report.bytes_dropped as usize),
        (9, bytes.len() - record_offset(10))
    );
    assert_eq!(all.len(), 9);
}

#[test]
fn corruption_mid_file_is_an_error_and_nothing_is_truncated() {
    let dir = TempDir::new("mid");
    write_n(dir.path(), 10);
    let seg = only_segment(dir.path());
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[record_offset(5) + 8 + 16] ^= 0x01;
    std::fs::write(&seg, &bytes).unwrap();
    match Journal::open(options(dir.path())) {
        Err(JournalError::Corrupt { offset, after_seq, .. }) => {
            assert_eq!((offset as usize, after_seq), (record_offset(5), 4));
        }
        other => panic!("expected Corrupt, got {:?}", other.map(|(_, r)| r)),
    }
    assert_eq!(std::fs::read(&seg).unwrap(), bytes, "file untouched");
}

#[test]
fn damage_inside_the_final_commit_group_is_a_torn_tail() {
    // Seqs 1..=3 one group each, then 4..=8 as one group (writer held while they queue).
    let dir = TempDir::new("group");
    let (gate_tx, gate_rx) = crossbeam_channel::unbounded::<()>();
    let (in_tx, in_rx) = crossbeam_channel::unbounded::<()>();
    let mut o = options(dir.path());
    o.sync_hook = Some(Arc::new(move |seq| {
        if seq == 3 {
            in_tx.send(()).unwrap();
            let _ = gate_rx.recv_timeout(Duration::from_secs(10));
        }
    }));
    let (j, _) = Journal::open(o).unwrap();
    for i in 1..=2 {
        j.append_wait(body(i)).unwrap();
    }
    let (done_tx, done_rx) = crossbeam_channel::unbounded();
    for i in 3..=8 {
        let d = done_tx.clone();
        j.append(body(i), move |r| d.send(r.unwrap()).unwrap()).unwrap();
        if i == 3 {
            in_rx
                .recv_timeout(Duration::from_secs(10))
                .expect("writer synced seq 3");
        }
    }
    gate_tx.send(()).unwrap();
    let acked: Vec<u64> = (0..6)
        .map(|_| done_rx.recv_timeout(Duration::from_secs(10)).unwrap())
        .collect();
    assert_eq!(acked, vec![3, 4, 5, 6, 7, 8]);
    assert_eq!(j.stats().groups, 4, "groups {{1}} {{2}} {{3}} {{4..=8}}");
    j.close().unwrap();
    let seg = only_segment(dir.path());
    let mut bytes = std::fs::read(&seg).unwrap();
    // Zero record 5 (a page of the final group never reached the disk); 6..=8 stay valid.
    let (a, b) = (record_offset(5), record_offset(6));
    bytes[a..b].fill(0);
    std::fs::write(&seg, &bytes).unwrap();
    let (all, report) = reopen_all(dir.path());
    assert_eq!(report.last_seq, 4);
    assert_eq!(report.bytes_dropped as usize, bytes.len() - a);
    assert_eq!(all.len(), 4);

    // The same damage to record 2 (an earlier, synced group) is corruption.
    let dir2 = TempDir::new("group2");
    write_n(dir2.path(), 8);
    let seg2 = only_segment(dir2.path());
    let mut bytes2 = std::fs::read(&seg2).unwrap();
    bytes2[record_offset(7)..record_offset(8)].fill(0);
    std::fs::write(&seg2, &bytes2).unwrap();
    assert!(matches!(
        Journal::open(options(dir2.path())),
        Err(JournalError::Corrupt { after_seq: 6, .. })
    ));
}

#[test]
fn corruption_in_a_sealed_segment_is_an_error() {
    let dir = TempDir::new("sealed");
    let mut o = options(dir.path());
    o.segment_bytes = 4096;
    let (j, _) = Journal::open(o.clone()).unwrap();
    for i in 1..=300 {
        j.append_wait(body(i)).unwrap();
    }
    j.close().unwrap();
    let segs = util::segments(dir.path());
    let first = &segs[0];
    let len = std::fs::metadata(first).unwrap().len();
    // Cut the first segment's last record: a "torn tail" in a sealed segment is corruption.
    std::fs::OpenOptions::new()
        .write(true)
        .open(first)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    assert!(matches!(Journal::open(o), Err(JournalError::Corrupt { .. })));
}

#[test]
fn torn_segment_creation_is_removed() {
    let dir = TempDir::new("torncreate");
    write_n(dir.path(), 3);
    // A crash while creating segment 4: only part of its header reached the disk.
    let stray = dir.path().join(format!("journal-{:020}.twj", 4));
    std::fs::write(&stray, [b'T', b'W', 0, 0, 0]).unwrap();
    let (all, report) = reopen_all(dir.path());
    assert_eq!((report.last_seq, report.bytes_dropped, all.len()), (3, 5, 3));
    assert!(!stray.exists());
}

#[test]
fn empty_and_header_only_journals_reopen() {
    let dir = TempDir::new("empty");
    let (j, r) = Journal::open(options(dir.path())).unwrap();
    assert!(r.created);
    assert_eq!((j.durable_seq(), j.first_seq()), (0, 1));
    assert_eq!(j.replay_from(1).unwrap().count(), 0);
    j.close().unwrap();
    let (j, r) = Journal::open(options(dir.path())).unwrap();
    assert!(!r.created);
    assert_eq!((r.records, r.last_seq, r.bytes_dropped), (0, 0, 0));
    assert_eq!(j.append_wait(b"x".to_vec()).unwrap(), 1);
    j.close().unwrap();
}

#[test]
fn spare_backed_free_space_is_not_damage_and_a_torn_record_inside_it_is_cut() {
    let dir = TempDir::new("prealloc");
    let mut o = util::prealloc_options(dir.path(), 64 * 1024);
    o.segment_bytes = 64 * 1024;
    let (j, _) = Journal::open(o.clone()).unwrap();
    // Append until the tail is a segment started in a zero-filled spare (bounded in count and time).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    while j.stats().spares_used == 0 && n < 20_000 && std::time::Instant::now() < deadline {
        n += 1;
        assert_eq!(j.append_wait(body(n)).unwrap(), n);
    }
    assert!(j.stats().spares_used > 0, "a spare was taken within {n} appends");
    j.close().unwrap();
    let segs = util::segments(dir.path());
    let last = segs.last().unwrap().clone();
    let len = std::fs::metadata(&last).unwrap().len();
    let data = nonzero_span(&std::fs::read(&last).unwrap());
    assert_eq!(len, 64 * 1024, "the tail is a whole spare");
    assert!(data < 32 * 1024, "zero-filled space ahead of the data: {data} of {len}");
    let (j, report) = Journal::open(o.clone()).unwrap();
    assert_eq!(
        (report.last_seq, report.bytes_dropped),
        (n, 0),
        "zeros are not a torn tail"
    );
    assert_eq!(
        j.replay_from(1).unwrap().map(|e| e.unwrap().seq).collect::<Vec<_>>(),
        (1..=n).collect::<Vec<_>>()
    );
    assert_eq!(j.append_wait(body(n + 1)).unwrap(), n + 1);
    j.close().unwrap();
    // A torn record n + 2 inside the zeros: 11 bytes of it reached the disk.
    let bytes = std::fs::read(&last).unwrap();
    let end = nonzero_span(&bytes);
    let mut rec = Vec::new();
    rec.extend_from_slice(&((16 + body(n + 2).len()) as u32).to_le_bytes());
    rec.extend_from_slice(&[0xAB; 4]);
    rec.extend_from_slice(&(n + 2).to_le_bytes());
    let torn = &rec[..11];
    let f = std::fs::OpenOptions::new().write(true).open(&last).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, torn, end as u64).unwrap();
    drop(f);
    let (j, report) = Journal::open(o).unwrap();
    assert_eq!(
        (report.last_seq, report.bytes_dropped as usize),
        (n + 1, nonzero_span(torn))
    );
    assert_eq!(j.append_wait(body(n + 2)).unwrap(), n + 2);
    j.close().unwrap();
    let (all, _) = reopen_all(dir.path());
    assert_eq!(all.len() as u64, n + 2);
    assert!(all.iter().all(|(s, b)| *b == body(*s)));
}
