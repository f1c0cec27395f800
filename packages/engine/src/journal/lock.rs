//! One owner per journal directory: an exclusive `flock` on `LOCK` in the directory, held for as
//! long as the [`Journal`](super::Journal) is open.
//!
//! Two writers on one directory would hand out the same seqs and order ids and overwrite each
//! other's records. The lock is taken before recovery touches anything. The owner writes
//! `pid=<pid> host=<host> started=<ISO time>` into the file so a refused opener can name it. The
//! OS releases the lock when its holder closes the file or dies (also on SIGKILL), so a `LOCK` file
//! left by a dead process does not block: only a held lock counts. The lock is per open file
//! description, so a second `Journal::open` in the same process is refused too.

use super::error::JournalError;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::Path;

/// File name of the lock file inside the journal directory.
pub const LOCK_FILE: &str = "LOCK";

/// The held lock; released when dropped (the file is closed).
#[derive(Debug)]
pub(crate) struct DirLock {
    _file: File,
}

impl DirLock {
    /// Takes the lock of `dir` (which must exist) without waiting; `started_ms` (Unix ms) goes
    /// into the file with the pid and host. Errors with [`JournalError::Locked`] naming the holder.
    pub fn acquire(dir: &Path, started_ms: u64) -> Result<DirLock, JournalError> {
        let path = dir.join(LOCK_FILE);
        let io = |what: &str, e: std::io::Error| JournalError::io(format!("{what} {}", path.display()), &e);
        // No truncation before the lock is ours: the holder's details stay readable.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io("open", e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let (holder, pid) = describe_holder(&text);
                return Err(JournalError::Locked {
                    dir: dir.to_path_buf(),
                    holder,
                    pid,
                });
            }
            Err(TryLockError::Error(e)) => return Err(io("lock", e)),
        }
        let line = format!(
            "pid={} host={} started={}\n",
            std::process::id(),
            host_name(),
            crate::filter::time::format_iso(started_ms as i64)
        );
        file.set_len(0).map_err(|e| io("truncate", e))?;
        file.write_all(line.as_bytes()).map_err(|e| io("write", e))?;
        Ok(DirLock { _file: file })
    }
}

/// `("pid 1234 (host db1, started 2026-05-01T09:30:00Z)", Some(1234))` from the lock file's text.
fn describe_holder(text: &str) -> (String, Option<u32>) {
    let field = |key: &str| {
        text.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
    };
    let pid = field("pid").and_then(|p| p.parse::<u32>().ok());
    match pid {
        Some(pid) => {
            let host = field("host").unwrap_or("?");
            let started = field("started").unwrap_or("?");
            (format!("pid {pid} (host {host}, started {started})"), Some(pid))
        }
        // Locked but not written yet (the holder is opening right now), or written by something else.
        None if text.trim().is_empty() => ("another process (it has not written its pid yet)".into(), None),
        None => (format!("another process (lock file says {:?})", text.trim()), None),
    }
}

/// This machine's host name (Linux: `/proc/sys/kernel/hostname`), `?` when unknown.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty() && !h.contains(char::is_whitespace))
        .unwrap_or_else(|| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("tidewire-lock-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_until_it_lets_go() {
        let dir = temp("two");
        let first = DirLock::acquire(&dir, 1_893_456_000_250).unwrap();
        match DirLock::acquire(&dir, 0) {
            Err(JournalError::Locked { holder, pid, .. }) => {
                assert_eq!(pid, Some(std::process::id()));
                assert!(
                    holder.starts_with(&format!("pid {} (host ", std::process::id())),
                    "{holder}"
                );
                assert!(holder.ends_with("started 2030-01-01T00:00:00.250Z)"), "{holder}");
            }
            other => panic!("expected Locked, got {other:?}"),
        }
        drop(first);
        let again = DirLock::acquire(&dir, 0).unwrap();
        drop(again);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_stale_lock_file_does_not_block() {
        let dir = temp("stale");
        std::fs::write(
            dir.join(LOCK_FILE),
            "pid=999999 host=gone started=2020-01-01T00:00:00Z\n",
        )
        .unwrap();
        let lock = DirLock::acquire(&dir, 0).unwrap();
        let text = std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
        assert!(text.starts_with(&format!("pid={} ", std::process::id())), "{text}");
        drop(lock);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn holder_descriptions() {
        assert_eq!(
            describe_holder("pid=12 host=a started=2030-01-01T00:00:00Z\n"),
            ("pid 12 (host a, started 2030-01-01T00:00:00Z)".into(), Some(12))
        );
        assert_eq!(describe_holder("").1, None);
        assert!(describe_holder("").0.contains("not written its pid yet"));
        assert!(describe_holder("junk").0.contains("\"junk\""));
    }
}
