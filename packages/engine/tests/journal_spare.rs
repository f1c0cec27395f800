//! Spare segments: rotation into zero-filled spares keeps the sequence gap-free across segments;
//! recovery removes unused spares, renames a spare in use whose rename was lost, drops a torn switch
//! into a spare and refuses a damaged spare header in front of synced records; replay reads a spare
//! in use under its spare name.

#[path = "journal_util/mod.rs"]
mod util;

use std::path::Path;
use std::time::{Duration, Instant};
use tidewire_engine::journal::{Journal, JournalError, JournalOptions, HEADER_LEN};
use util::{body, reopen_all, segments, spares, TempDir};

/// 64 KiB segments started in spares of 64 KiB.
fn spare_options(dir: &Path) -> JournalOptions {
    let mut o = util::prealloc_options(dir, 64 * 1024);
    o.segment_bytes = 64 * 1024;
    o
}

/// Appends bodies from `next` in groups of 64 (the last of each waited for) until `spares` spares
/// were taken; bounded in count and time. Returns the last seq.
fn append_until_spares(j: &Journal, mut next: u64, spares: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut groups = 0;
    while j.stats().spares_used < spares && groups < 10_000 && Instant::now() < deadline {
        groups += 1;
        for _ in 0..63 {
            j.append(body(next), |r| assert!(r.is_ok())).unwrap();
            next += 1;
        }
        assert_eq!(j.append_wait(body(next)).unwrap(), next);
        next += 1;
    }
    assert!(
        j.stats().spares_used >= spares,
        "{spares} spares taken within {groups} groups"
    );
    next - 1
}

fn seqs(j: &Journal) -> Vec<u64> {
    j.replay_from(1).unwrap().map(|e| e.unwrap().seq).collect()
}

#[test]
fn rotation_into_spares_keeps_the_sequence_gap_free_across_segments() {
    let dir = TempDir::new("spare-rotate");
    let (j, _) = Journal::open(spare_options(dir.path())).unwrap();
    let last = append_until_spares(&j, 1, 3);
    let stats = j.stats();
    assert!(stats.segments_created >= 3);
    assert_eq!(seqs(&j), (1..=last).collect::<Vec<_>>(), "replay while open");
    j.close().unwrap();
    let segs = segments(dir.path());
    assert_eq!(
        segs.len() as u64,
        stats.segments_created + 1,
        "every segment got its name: {segs:?}"
    );
    // Segments started in spares keep the spare's length; none grew past the segment size.
    let whole = segs
        .iter()
        .filter(|p| std::fs::metadata(p).unwrap().len() == 64 * 1024)
        .count();
    assert!(
        whole as u64 >= stats.spares_used.min(segs.len() as u64 - 1),
        "{whole} whole spares"
    );
    let (j, report) = Journal::open(spare_options(dir.path())).unwrap();
    assert_eq!((report.first_seq, report.last_seq, report.bytes_dropped), (1, last, 0));
    assert!(spares(dir.path()).iter().all(|p| {
        // Only a fresh spare (made after this open) may exist: all zeros.
        std::fs::read(p).map(|b| b.iter().all(|x| *x == 0)).unwrap_or(true)
    }));
    let more = append_until_spares(&j, last + 1, j.stats().spares_used + 1);
    j.close().unwrap();
    let (all, _) = reopen_all(dir.path());
    assert_eq!(
        all.iter().map(|e| e.0).collect::<Vec<_>>(),
        (1..=more).collect::<Vec<_>>()
    );
    assert!(all.iter().all(|(s, b)| *b == body(*s)));
}

#[test]
fn an_unused_spare_is_removed_at_open_and_the_journal_continues() {
    let dir = TempDir::new("spare-unused");
    let (j, _) = Journal::open(spare_options(dir.path())).unwrap();
    let last = append_until_spares(&j, 1, 1);
    // The helper makes the next spare once one is taken: wait for it to be whole on disk.
    let deadline = Instant::now() + Duration::from_secs(30);
    // (The taken spare keeps its spare name until its rename: a whole unused one is all zeros.)
    let whole =
        |p: &std::path::PathBuf| std::fs::read(p).is_ok_and(|b| b.len() == 64 * 1024 && b.iter().all(|x| *x == 0));
    while !spares(dir.path()).iter().any(whole) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    j.close().unwrap();
    let left = spares(dir.path());
    assert_eq!(left.len(), 1, "one spare ready, not taken: {left:?}");
    assert!(std::fs::read(&left[0]).unwrap().iter().all(|b| *b == 0));
    let (j, report) = Journal::open(spare_options(dir.path())).unwrap();
    assert_eq!((report.last_seq, report.bytes_dropped), (last, 0));
    assert!(!left[0].exists(), "the unused spare was removed");
    assert_eq!(j.append_wait(body(last + 1)).unwrap(), last + 1);
    j.close().unwrap();
}

#[test]
fn a_spare_in_use_whose_rename_was_lost_is_read_as_its_segment() {
    let dir = TempDir::new("spare-rename");
    let (j, _) = Journal::open(spare_options(dir.path())).unwrap();
    let last = append_until_spares(&j, 1, 2);
    // The helper renames the taken spare after the switch: wait until the tail has its name.
    let deadline = Instant::now() + Duration::from_secs(30);
    let named = |p: &Path| p.file_name().unwrap().to_str().unwrap().starts_with("journal-");
    while !named(&util::live_segment(dir.path())) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    // While open: the tail under a spare name (as between the switch and the rename).
    let tail = util::live_segment(dir.path());
    assert!(named(&tail), "the tail was renamed within 30 s: {tail:?}");
    let as_spare = dir.path().join("spare-00000000000000009999.twj");
    std::fs::rename(&tail, &as_spare).unwrap();
    assert_eq!(
        seqs(&j),
        (1..=last).collect::<Vec<_>>(),
        "replay reads the spare in use"
    );
    assert_eq!(j.append_wait(body(last + 1)).unwrap(), last + 1);
    j.close().unwrap();
    let (j, report) = Journal::open(spare_options(dir.path())).unwrap();
    assert_eq!((report.last_seq, report.bytes_dropped), (last + 1, 0));
    assert!(
        tail.exists() && !as_spare.exists(),
        "renamed to its segment name at open"
    );
    assert_eq!(seqs(&j), (1..=last + 1).collect::<Vec<_>>());
    j.close().unwrap();
}

/// Closes a journal grown over 3 or more segments and opens it again (no rotation pending).
fn three_segments(dir: &Path) -> (Journal, u64) {
    let (j, _) = Journal::open(spare_options(dir)).unwrap();
    let last = append_until_spares(&j, 1, 2);
    j.close().unwrap();
    let (j, report) = Journal::open(spare_options(dir)).unwrap();
    assert_eq!(report.last_seq, last);
    assert!(segments(dir).len() >= 3, "{:?}", segments(dir));
    (j, last)
}

/// Renames the newest segment out of the journal's names; returns (its name, where it is now).
fn move_tail_aside(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let tail = segments(dir).pop().unwrap();
    let away = dir.join("moved-aside");
    std::fs::rename(&tail, &away).unwrap();
    (tail, away)
}

#[test]
fn a_segment_the_replay_listing_missed_is_read_when_its_seq_comes() {
    // A directory listing does not promise to return an entry renamed while it runs (a spare
    // renamed to its segment name): the replay lists again when the next segment is not listed.
    let dir = TempDir::new("spare-relist");
    let (j, last) = three_segments(dir.path());
    let (tail, away) = move_tail_aside(dir.path());
    let replay = j.replay_from(1).unwrap();
    std::fs::rename(&away, &tail).unwrap();
    let seen: Vec<u64> = replay.map(|e| e.unwrap().seq).collect();
    assert_eq!(seen, (1..=last).collect::<Vec<_>>());
    j.close().unwrap();
}

#[test]
fn a_replay_whose_segment_is_gone_ends_with_an_error_not_early() {
    let dir = TempDir::new("spare-gone");
    let (j, last) = three_segments(dir.path());
    let (tail, away) = move_tail_aside(dir.path());
    let mut ok = 0u64;
    let mut err = None;
    for e in j.replay_from(1).unwrap() {
        match e {
            Ok(e) => {
                ok += 1;
                assert_eq!(e.seq, ok);
            }
            Err(e) => err = Some(e),
        }
    }
    std::fs::rename(&away, &tail).unwrap();
    assert!(ok < last, "the tail's entries were not read: {ok} of {last}");
    match err {
        Some(JournalError::Corrupt { reason, after_seq, .. }) => {
            assert_eq!(after_seq, ok);
            assert!(reason.contains(&format!("no segment holds seq {}", ok + 1)), "{reason}");
        }
        other => panic!("expected a missing-segment error, got {other:?}"),
    }
    assert_eq!(seqs(&j), (1..=last).collect::<Vec<_>>(), "back in place: read whole");
    j.close().unwrap();
}

#[test]
fn a_torn_switch_into_a_spare_is_dropped_and_the_sequence_continues() {
    let dir = TempDir::new("spare-torn");
    util::write_n(dir.path(), 10);
    // The crash hit the first write into a spare: part of its header reached the disk.
    let mut bytes = vec![0u8; 64 * 1024];
    bytes[..20].copy_from_slice(&[0x5A; 20]);
    let spare = dir.path().join("spare-00000000000000000003.twj");
    std::fs::write(&spare, &bytes).unwrap();
    let (all, report) = reopen_all(dir.path());
    assert_eq!((report.last_seq, report.bytes_dropped), (10, 20));
    assert_eq!(report.truncated_at, Some((spare.clone(), 0)));
    assert!(!spare.exists());
    assert_eq!(all.len(), 10);
    let (j, _) = Journal::open(util::options(dir.path())).unwrap();
    assert_eq!(j.append_wait(body(11)).unwrap(), 11);
    j.close().unwrap();
}

#[test]
fn a_damaged_spare_header_in_front_of_synced_records_is_corruption() {
    let dir = TempDir::new("spare-corrupt");
    util::write_n(dir.path(), 10);
    let seg = util::only_segment(dir.path());
    let mut bytes = std::fs::read(&seg).unwrap();
    std::fs::remove_file(&seg).unwrap();
    bytes[9] ^= 0x40; // the epoch: header CRC no longer matches
    bytes.resize(64 * 1024, 0);
    let spare = dir.path().join("spare-00000000000000000001.twj");
    std::fs::write(&spare, &bytes).unwrap();
    match Journal::open(util::options(dir.path())) {
        Err(JournalError::Corrupt { path, offset, .. }) => assert_eq!((path, offset), (spare.clone(), 0)),
        other => panic!("expected Corrupt, got {:?}", other.map(|(_, r)| r)),
    }
    assert_eq!(std::fs::read(&spare).unwrap().len(), 64 * 1024, "nothing removed");
    assert!(bytes.len() > HEADER_LEN);
}

#[test]
fn the_manifest_follows_rotations_into_spares_and_a_deleted_newest_segment_is_refused() {
    let dir = TempDir::new("spare-manifest");
    let (j, _) = Journal::open(spare_options(dir.path())).unwrap();
    let last = append_until_spares(&j, 1, 3);
    j.close().unwrap();
    // Closing serves the helper's pending renames and their manifests: the manifest is current.
    let segs = segments(dir.path());
    let live = segs.last().unwrap().clone();
    let live_first: u64 = live.file_name().unwrap().to_str().unwrap()[8..28].parse().unwrap();
    let manifest = std::fs::read_to_string(dir.path().join(tidewire_engine::journal::MANIFEST_FILE)).unwrap();
    assert!(manifest.contains(&format!("\nlive {live_first}\n")), "{manifest}");
    assert_eq!(manifest.matches("\nsealed ").count(), segs.len() - 1, "{manifest}");
    std::fs::remove_file(&live).unwrap();
    match Journal::open(spare_options(dir.path())) {
        Err(JournalError::MissingSegment {
            path,
            first_seq,
            last_seq: None,
            ..
        }) => assert_eq!((path, first_seq), (live, live_first)),
        other => panic!("expected MissingSegment, got {:?}", other.map(|(_, r)| r)),
    }
    assert!(last >= live_first);
}
