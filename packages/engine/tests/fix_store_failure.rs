//! A FIX session store on a real full disk (a 1 MiB tmpfs filled up): a record the disk took
//! only in part is cut off, so the records after it (once there is room again) read back, also
//! after a restart. Needs root for the mount (skipped otherwise).

#[path = "journal_util/mod.rs"]
mod journal_util;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use journal_util::TempDir;
use tidewire_engine::fix::session::{FileStore, SessionStore};

/// A tmpfs of `size` mounted on a directory; unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).expect("create the mount point");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }

    /// Writes a file until the tmpfs is full; returns its path.
    fn fill(&self) -> PathBuf {
        let path = self.0.join("filler");
        let mut f = std::fs::File::create(&path).expect("create the filler");
        let chunk = vec![0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_record_a_full_disk_took_in_part_is_cut_off_before_the_next() {
    let dir = TempDir::new("fixstore-torn");
    let path = dir.path().join("store");
    let Some(disk) = Tmpfs::mount(&path, "1m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let mut store = FileStore::open(&path).expect("store");
    store.save_sent(1, b"first").expect("stored");
    store.sync().expect("synced");
    let filler = disk.fill();
    // larger than what is left of the file's last page: a part of it reaches the file
    let big = vec![b'x'; 64 * 1024];
    assert!(store.save_sent(2, &big).is_err(), "the disk is full");
    std::fs::remove_file(filler).expect("free the disk");
    store.save_sent(2, b"second").expect("stored");
    store.sync().expect("synced");
    let read = |s: &FileStore| {
        let mut got = Vec::new();
        s.sent(1, 10, &mut |seq, m| {
            got.push((seq, String::from_utf8_lossy(m).into_owned()))
        })
        .expect("read");
        got
    };
    let want = vec![(1, "first".to_owned()), (2, "second".to_owned())];
    assert_eq!(read(&store), want);
    drop(store);
    assert_eq!(read(&FileStore::open(&path).expect("reopens")), want, "after a restart");
}
