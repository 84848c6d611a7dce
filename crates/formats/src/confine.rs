//! Reading files only from inside a root folder (a server's `--root`), without a window between
//! the check and the read.
//!
//! A server that checks a requested path against its root and then opens it by name leaves a
//! window (time of check to time of use): a file swapped for a symbolic link to `/etc/passwd`
//! after the check is opened all the same, and a line of it may be quoted back in an error. While
//! [`within_root`] runs its closure, every file this crate opens on that thread (a model, its
//! `.lab`, `.srew`, `.trew`, `.sta` companions, and the lines read again for an error's excerpt)
//! goes through [`open`]: the file is opened first, then the opened file itself is compared with
//! what its path resolves to inside the root (device and inode on Unix), so what is read is a
//! file that was inside the root. A file outside it is a `PermissionDenied` error; an excerpt
//! that cannot be read again this way is left out.

use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

thread_local! {
    static ROOT: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// Runs `f` with every file opened by this crate on this thread confined to `root` (which must
/// exist). The previous confinement (if any) is restored afterwards, also when `f` panics.
pub fn within_root<T>(root: &Path, f: impl FnOnce() -> T) -> io::Result<T> {
    let root = root.canonicalize()?;
    Ok(within(Some(root), f))
}

/// Runs `f` with the files opened by this crate on this thread confined to `root` (already
/// canonical, as [`current_root`] gives it), or to nothing: a second thread reading for the
/// first keeps its confinement.
pub(crate) fn within<T>(root: Option<PathBuf>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<PathBuf>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            ROOT.with(|r| *r.borrow_mut() = previous);
        }
    }
    let _restore = Restore(ROOT.with(|r| std::mem::replace(&mut *r.borrow_mut(), root)));
    f()
}

/// The root files are confined to on this thread, if any.
pub fn current_root() -> Option<PathBuf> {
    ROOT.with(|r| r.borrow().clone())
}

/// Opens `path` for reading; under [`within_root`], only if the opened file is inside the root.
pub fn open(path: &Path) -> io::Result<File> {
    let file = File::open(path)?;
    match current_root() {
        None => Ok(file),
        Some(root) => verify(file, path, &root),
    }
}

/// Whether `path` names a file that [`open`] could read (a missing file is `false`).
pub fn is_file(path: &Path) -> bool {
    open(path)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.is_file())
}

fn outside(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{} is not a file inside the root", path.display()),
    )
}

/// The opened `file` is the file `path` resolves to now, and that is inside `root`.
fn verify(file: File, path: &Path, root: &Path) -> io::Result<File> {
    let real = path.canonicalize().map_err(|_| outside(path))?;
    if !real.starts_with(root) {
        return Err(outside(path));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let opened = file.metadata()?;
        let named = std::fs::metadata(&real).map_err(|_| outside(path))?;
        if (opened.dev(), opened.ino()) != (named.dev(), named.ino()) {
            return Err(outside(path));
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unconfined_opens_anything_and_confined_only_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let inside = root.join("a.tra");
        let secret = dir.path().join("secret.txt");
        std::fs::write(&inside, "1 1\n0 0 1\n").unwrap();
        std::fs::write(&secret, "root:x:0:0\n").unwrap();
        assert!(open(&secret).is_ok());
        within_root(&root, || {
            assert!(open(&inside).is_ok());
            let e = open(&secret).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
            assert!(!is_file(&secret));
            assert!(is_file(&inside));
        })
        .unwrap();
        // Restored afterwards.
        assert!(current_root().is_none());
        assert!(open(&secret).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_root_is_refused_even_when_swapped_in_after_a_check() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "root:x:0:0\n").unwrap();
        let lab = root.join("a.lab");
        // A checker that looked before this line saw no file; what is opened is the link.
        std::os::unix::fs::symlink(&secret, &lab).unwrap();
        within_root(&root, || {
            let e = open(&lab).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
            assert!(!e.to_string().contains("root:x"));
        })
        .unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_file_replaced_between_open_and_verification_is_refused() {
        // The opened handle is the outside file; the name now resolves inside the root (the
        // swap back an attacker would race for): the inodes differ, so it is refused.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "root:x:0:0\n").unwrap();
        let name = root.join("a.tra");
        std::fs::write(&name, "1 1\n0 0 1\n").unwrap();
        let root = root.canonicalize().unwrap();
        let handle = File::open(&secret).unwrap();
        let e = verify(handle, &name, &root).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
    }
}
