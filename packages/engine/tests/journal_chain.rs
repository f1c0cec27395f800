//! The journal knows its own segment chain: one owner per directory (lock), a missing segment
//! (first, middle, newest / live), a short sealed segment or one whose seqs differ from the manifest
//! is refused with the file and seqs and nothing is changed; a journal from before manifests still
//! opens (chain checked by continuity); the explicit cut back to the last consistent seq keeps the
//! consistent prefix, saves and reports what it drops.

#[path = "journal_util/mod.rs"]
mod util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tidewire_engine::journal::{Journal, JournalError, JournalOptions, LOCK_FILE, MANIFEST_FILE};
use util::{body, segments, TempDir};

/// 4 KiB segments without preallocation: about 65 records each, rotated on the commit path.
fn chain_options(dir: &Path) -> JournalOptions {
    let mut o = util::options(dir);
    o.segment_bytes = 4096;
    o
}

/// Writes seqs 1..=`n` (one group each); returns the segments, oldest first, with their seq ranges.
fn write_chain(dir: &Path, n: u64) -> Vec<(PathBuf, u64, u64)> {
    let (j, _) = Journal::open(chain_options(dir)).unwrap();
    for i in 1..=n {
        assert_eq!(j.append_wait(body(i)).unwrap(), i);
    }
    j.close().unwrap();
    let segs = segments(dir);
    assert!(segs.len() >= 4, "{segs:?}");
    segs.iter()
        .map(|p| {
            let recs = records(p);
            (p.clone(), recs[0].0, recs.last().unwrap().0)
        })
        .collect()
}

/// (seq, byte offset, byte length) of every record of a segment file.
fn records(path: &Path) -> Vec<(u64, u64, u64)> {
    let b = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut at = 32;
    while at + 24 <= b.len() {
        let len = u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        if len < 16 || at + 8 + len > b.len() {
            break;
        }
        let seq = u64::from_le_bytes(b[at + 8..at + 16].try_into().unwrap());
        out.push((seq, at as u64, 8 + len as u64));
        at += 8 + len;
    }
    out
}

/// Every file of `dir` (recursively) with its bytes, the lock file left out (its owner line changes).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(snapshot(&p));
        } else if p.file_name().unwrap() != LOCK_FILE {
            out.insert(p.clone(), std::fs::read(&p).unwrap());
        }
    }
    out
}

/// Opens and expects an error; checks the directory was left as it was.
fn refused(dir: &Path) -> JournalError {
    let before = snapshot(dir);
    let err = match Journal::open(chain_options(dir)) {
        Err(e) => e,
        Ok((_, r)) => panic!("expected a refusal, opened: {r:?}"),
    };
    assert_eq!(snapshot(dir), before, "a refusal changes nothing ({err})");
    err
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn seqs(j: &Journal) -> Vec<u64> {
    j.replay_from(1).unwrap().map(|e| e.unwrap().seq).collect()
}

#[test]
fn a_second_open_of_the_directory_is_refused_naming_the_holder() {
    let dir = TempDir::new("lock");
    let (first, _) = Journal::open(util::options(dir.path())).unwrap();
    assert_eq!(first.append_wait(body(1)).unwrap(), 1);
    let err = match Journal::open(util::options(dir.path())) {
        Err(e) => e,
        Ok(_) => panic!("a second open of a held directory succeeded"),
    };
    let pid = std::process::id();
    match &err {
        JournalError::Locked { dir: d, pid: p, holder } => {
            assert_eq!((d.as_path(), *p), (dir.path(), Some(pid)));
            assert!(holder.starts_with(&format!("pid {pid} (host ")), "{holder}");
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains(&format!("{} is in use by pid {pid}", dir.path().display()))
            && text.ends_with("; one server per journal directory"),
        "{text}"
    );
    // The holder goes on; once it closes, the directory opens again.
    assert_eq!(first.append_wait(body(2)).unwrap(), 2);
    first.close().unwrap();
    let (again, report) = Journal::open(util::options(dir.path())).unwrap();
    assert_eq!(report.last_seq, 2);
    again.close().unwrap();
}

#[test]
fn a_lock_file_left_by_a_dead_process_does_not_block() {
    let dir = TempDir::new("stale-lock");
    util::write_n(dir.path(), 3);
    std::fs::write(
        dir.path().join(LOCK_FILE),
        "pid=4000000 host=gone started=2020-01-01T00:00:00Z\n",
    )
    .unwrap();
    let (j, report) = Journal::open(util::options(dir.path())).unwrap();
    assert_eq!(report.last_seq, 3);
    let owner = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
    assert!(
        owner.starts_with(&format!("pid={} host=", std::process::id())),
        "{owner}"
    );
    j.close().unwrap();
}

#[test]
fn the_manifest_records_the_chain() {
    let dir = TempDir::new("manifest");
    let segs = write_chain(dir.path(), 300);
    let text = std::fs::read_to_string(dir.path().join(MANIFEST_FILE)).unwrap();
    let mut want = vec!["tidewire journal manifest 1".to_string(), "epoch 77".to_string()];
    for (_, first, last) in &segs[..segs.len() - 1] {
        want.push(format!("sealed {first} {last}"));
    }
    want.push(format!("live {}", segs.last().unwrap().1));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[..lines.len() - 1], want, "{text}");
    assert!(lines.last().unwrap().starts_with("crc "));
}

#[test]
fn a_missing_first_segment_is_refused() {
    let dir = TempDir::new("missing-first");
    let segs = write_chain(dir.path(), 300);
    std::fs::remove_file(&segs[0].0).unwrap();
    match refused(dir.path()) {
        JournalError::MissingSegment {
            path,
            first_seq,
            last_seq,
            detail,
        } => {
            assert_eq!((path, first_seq, last_seq), (segs[0].0.clone(), 1, Some(segs[0].2)));
            assert!(
                detail.contains(&format!("the next segment present is {}", name(&segs[1].0))),
                "{detail}"
            );
        }
        other => panic!("expected MissingSegment, got {other:?}"),
    }
}

#[test]
fn a_missing_middle_segment_is_refused() {
    let dir = TempDir::new("missing-middle");
    let segs = write_chain(dir.path(), 300);
    std::fs::remove_file(&segs[2].0).unwrap();
    let err = refused(dir.path());
    assert_eq!(
        err.to_string(),
        format!(
            "journal: segment {} is missing: the manifest lists it as sealed with seqs {}..={}; the next segment present is {}",
            segs[2].0.display(),
            segs[2].1,
            segs[2].2,
            name(&segs[3].0)
        )
    );
}

#[test]
fn a_missing_newest_segment_is_refused() {
    let dir = TempDir::new("missing-newest");
    let segs = write_chain(dir.path(), 300);
    let (live, live_first, _) = segs.last().unwrap().clone();
    std::fs::remove_file(&live).unwrap();
    match refused(dir.path()) {
        JournalError::MissingSegment {
            path,
            first_seq,
            last_seq,
            detail,
        } => {
            assert_eq!((path, first_seq, last_seq), (live, live_first, None));
            assert_eq!(
                detail,
                format!(
                    "the manifest lists it as the live segment, from seq {live_first}; the segments present end at seq {}",
                    live_first - 1
                )
            );
        }
        other => panic!("expected MissingSegment, got {other:?}"),
    }
}

#[test]
fn every_segment_gone_while_the_manifest_says_they_existed_is_refused() {
    let dir = TempDir::new("missing-all");
    let segs = write_chain(dir.path(), 300);
    for (p, _, _) in &segs {
        std::fs::remove_file(p).unwrap();
    }
    match refused(dir.path()) {
        JournalError::MissingSegment {
            first_seq: 1, detail, ..
        } => assert!(detail.ends_with("no segment is present"), "{detail}"),
        other => panic!("expected MissingSegment, got {other:?}"),
    }
}

#[test]
fn a_short_sealed_segment_is_refused() {
    let dir = TempDir::new("short");
    let segs = write_chain(dir.path(), 300);
    // Its last two records cut off exactly at a record boundary (no torn bytes to notice).
    let (seg, first, last) = segs[1].clone();
    let recs = records(&seg);
    let cut_at = recs[recs.len() - 2].1;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&seg)
        .unwrap()
        .set_len(cut_at)
        .unwrap();
    let err = refused(dir.path());
    assert_eq!(
        err,
        JournalError::SegmentMismatch {
            path: seg.clone(),
            first_seq: first,
            expected_last: last,
            found_last: last - 2,
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "journal: sealed segment {} ends at seq {}, the manifest says it holds seqs {first}..={last} (2 records short)",
            seg.display(),
            last - 2
        )
    );
}

/// A manifest of `firsts` (the last one live) for epoch 77, with its CRC.
fn manifest_text(firsts: &[u64]) -> String {
    let mut s = "tidewire journal manifest 1\nepoch 77\n".to_string();
    for w in firsts.windows(2) {
        s.push_str(&format!("sealed {} {}\n", w[0], w[1] - 1));
    }
    s.push_str(&format!("live {}\n", firsts.last().unwrap()));
    let crc = crc32fast::hash(s.as_bytes());
    s + &format!("crc {crc:08x}\n")
}

#[test]
fn a_sealed_segment_whose_seqs_differ_from_the_manifest_is_refused() {
    let dir = TempDir::new("mismatch");
    let segs = write_chain(dir.path(), 300);
    // The manifest says the first segment ends one record later (and the second starts there).
    let mut firsts: Vec<u64> = segs.iter().map(|s| s.1).collect();
    firsts[1] += 1;
    std::fs::write(dir.path().join(MANIFEST_FILE), manifest_text(&firsts)).unwrap();
    assert_eq!(
        refused(dir.path()),
        JournalError::SegmentMismatch {
            path: segs[0].0.clone(),
            first_seq: 1,
            expected_last: segs[0].2 + 1,
            found_last: segs[0].2,
        }
    );
}

#[test]
fn a_damaged_manifest_is_refused() {
    let dir = TempDir::new("bad-manifest");
    write_chain(dir.path(), 300);
    let path = dir.path().join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("sealed 1 ", "sealed 2 ");
    std::fs::write(&path, text).unwrap();
    match refused(dir.path()) {
        JournalError::BadManifest { path: p, reason } => assert_eq!((p, reason.as_str()), (path, "crc mismatch")),
        other => panic!("expected BadManifest, got {other:?}"),
    }
}

#[test]
fn a_journal_without_a_manifest_opens_and_gets_one_and_continuity_still_guards_it() {
    let dir = TempDir::new("migrate");
    let segs = write_chain(dir.path(), 300);
    let manifest = dir.path().join(MANIFEST_FILE);
    let written = std::fs::read_to_string(&manifest).unwrap();
    std::fs::remove_file(&manifest).unwrap();
    let (j, report) = Journal::open(chain_options(dir.path())).unwrap();
    assert_eq!(
        (report.last_seq, report.records, report.segments),
        (300, 300, segs.len())
    );
    j.close().unwrap();
    assert_eq!(
        std::fs::read_to_string(&manifest).unwrap(),
        written,
        "derived from the segments"
    );

    // Without a manifest a missing segment shows as a break in the seqs: the first must start at 1...
    std::fs::remove_file(&manifest).unwrap();
    std::fs::rename(&segs[0].0, dir.path().join("aside")).unwrap();
    match refused(dir.path()) {
        JournalError::MissingSegment {
            first_seq: 1, detail, ..
        } => {
            assert!(
                detail.starts_with("the journal starts at seq 1 (no manifest yet)"),
                "{detail}"
            )
        }
        other => panic!("expected MissingSegment, got {other:?}"),
    }
    std::fs::rename(dir.path().join("aside"), &segs[0].0).unwrap();
    // ...and each segment must start where the one before it ends.
    std::fs::remove_file(&segs[1].0).unwrap();
    assert_eq!(
        refused(dir.path()),
        JournalError::SequenceGap {
            path: segs[2].0.clone(),
            expected: segs[1].1,
            found: segs[2].1,
        }
    );
}

#[test]
fn segments_past_a_lagging_manifest_are_accepted_when_they_continue_the_chain() {
    let dir = TempDir::new("lag");
    let segs = write_chain(dir.path(), 300);
    // A crash right after a rotation, before its manifest: the manifest ends two segments early.
    let firsts: Vec<u64> = segs.iter().map(|s| s.1).collect();
    let manifest = dir.path().join(MANIFEST_FILE);
    std::fs::write(&manifest, manifest_text(&firsts[..firsts.len() - 2])).unwrap();
    let (j, report) = Journal::open(chain_options(dir.path())).unwrap();
    assert_eq!((report.last_seq, report.segments), (300, segs.len()));
    j.close().unwrap();
    assert_eq!(
        std::fs::read_to_string(&manifest).unwrap(),
        manifest_text(&firsts),
        "caught up"
    );
}

fn cut_options(dir: &Path) -> JournalOptions {
    let mut o = chain_options(dir);
    o.truncate_to_consistent = true;
    o
}

#[test]
fn the_cut_keeps_the_chain_before_a_missing_middle_segment_and_saves_what_it_drops() {
    let dir = TempDir::new("cut-middle");
    let segs = write_chain(dir.path(), 300);
    std::fs::remove_file(&segs[2].0).unwrap();
    let kept_last = segs[1].2;
    let (j, report) = Journal::open(cut_options(dir.path())).unwrap();
    let cut = report.cut.clone().expect("a cut");
    assert_eq!(
        (report.last_seq, report.records, report.segments),
        (kept_last, kept_last, 2)
    );
    assert_eq!(cut.kept_last_seq, kept_last);
    assert!(
        cut.reason
            .contains(&format!("segment {} is missing", segs[2].0.display())),
        "{}",
        cut.reason
    );
    let save = cut.saved_to.clone().expect("dropped files saved");
    assert_eq!(save.parent(), Some(dir.path()));
    let dropped: Vec<_> = cut
        .dropped
        .iter()
        .map(|d| (d.path.clone(), d.from_byte, d.records, d.seqs))
        .collect();
    let want: Vec<_> = segs[3..]
        .iter()
        .map(|(p, a, b)| (p.clone(), 0, b - a + 1, Some((*a, *b))))
        .collect();
    assert_eq!(dropped, want);
    assert_eq!(cut.dropped_records, 300 - segs[2].2);
    for d in &cut.dropped {
        assert!(!d.path.exists() && d.saved_as.exists() && d.saved_as.starts_with(&save));
    }
    let line = report.cut_line().unwrap();
    assert!(
        line.starts_with(&format!(
            "journal: cut back to seq {kept_last} (truncate to consistent): journal: segment "
        )) && line.contains(&format!(
            "; dropped {} records: {} seqs {}..={} (",
            cut.dropped_records,
            name(&segs[3].0),
            segs[3].1,
            segs[3].2
        )) && line.ends_with(&format!("; saved in {}", save.display())),
        "{line}"
    );
    assert_eq!(seqs(&j), (1..=kept_last).collect::<Vec<_>>());
    assert_eq!(
        j.append_wait(body(1)).unwrap(),
        kept_last + 1,
        "seqs continue after the cut"
    );
    j.close().unwrap();
    // Consistent now: opens without the flag, nothing cut again.
    let (j, report) = Journal::open(chain_options(dir.path())).unwrap();
    assert_eq!((report.last_seq, report.cut), (kept_last + 1, None));
    j.close().unwrap();
}

#[test]
fn the_cut_after_a_missing_live_segment_drops_no_file() {
    let dir = TempDir::new("cut-live");
    let segs = write_chain(dir.path(), 300);
    let (live, live_first, _) = segs.last().unwrap().clone();
    std::fs::remove_file(&live).unwrap();
    let (j, report) = Journal::open(cut_options(dir.path())).unwrap();
    let cut = report.cut.clone().unwrap();
    assert_eq!(
        (cut.kept_last_seq, cut.dropped_records, cut.saved_to.as_ref()),
        (live_first - 1, 0, None)
    );
    assert!(cut.dropped.is_empty());
    assert!(report.cut_line().unwrap().ends_with("; no file dropped"));
    assert_eq!(j.append_wait(body(1)).unwrap(), live_first);
    j.close().unwrap();
}

#[test]
fn the_cut_at_a_bad_record_in_a_sealed_segment_keeps_the_records_before_it() {
    let dir = TempDir::new("cut-corrupt");
    let segs = write_chain(dir.path(), 300);
    let (seg, first, last) = segs[1].clone();
    let recs = records(&seg);
    let (bad_seq, bad_at, _) = recs[5];
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[bad_at as usize + 30] ^= 0x01;
    std::fs::write(&seg, &bytes).unwrap();
    match refused(dir.path()) {
        JournalError::Corrupt {
            path,
            offset,
            after_seq,
            ..
        } => assert_eq!((path, offset, after_seq), (seg.clone(), bad_at, bad_seq - 1)),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    let (j, report) = Journal::open(cut_options(dir.path())).unwrap();
    let cut = report.cut.clone().unwrap();
    assert_eq!((cut.kept_last_seq, report.last_seq), (bad_seq - 1, bad_seq - 1));
    let first_drop = &cut.dropped[0];
    // The damaged record does not verify; the ones after it in the same segment do.
    assert_eq!(
        (
            first_drop.path.clone(),
            first_drop.from_byte,
            first_drop.records,
            first_drop.seqs
        ),
        (seg.clone(), bad_at, last - bad_seq, Some((bad_seq + 1, last)))
    );
    assert_eq!(
        std::fs::read(&first_drop.saved_as).unwrap(),
        bytes,
        "saved whole before the cut"
    );
    assert_eq!(std::fs::metadata(&seg).unwrap().len(), bad_at);
    assert_eq!(cut.dropped.len(), 1 + segs.len() - 2);
    assert_eq!(cut.dropped_records, 300 - bad_seq);
    assert_eq!(seqs(&j), (1..bad_seq).collect::<Vec<_>>());
    assert!(first < bad_seq);
    j.close().unwrap();
}

#[test]
fn the_flag_changes_nothing_on_a_consistent_journal() {
    let dir = TempDir::new("cut-none");
    write_chain(dir.path(), 300);
    let (j, report) = Journal::open(cut_options(dir.path())).unwrap();
    assert_eq!(
        (report.last_seq, report.cut.clone(), report.cut_line()),
        (300, None, None)
    );
    j.close().unwrap();
}
