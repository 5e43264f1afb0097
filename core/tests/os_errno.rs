//! The operating system's error number survives to the host (`Error::os_errno`),
//! whether the error came from a system call of the core or through libgit2, so
//! that a host can tell a full disk from a permission problem. The tests run as
//! root, so the errors are made with a file where a directory must be (ENOTDIR)
//! and a name too long for the file system (ENAMETOOLONG).

use serde_json::json;
use sessionkit::{CreateOptions, Durability, ErrorKind, Store, StoreOptions};

fn options(home: &std::path::Path) -> StoreOptions {
    StoreOptions {
        home: Some(home.to_path_buf()),
        durability: Durability::Never,
        ..StoreOptions::default()
    }
}

#[test]
fn a_system_call_error_keeps_its_number() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let e = Store::open(project.path(), options(&file.join("home"))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert_eq!(e.os_errno(), Some(libc::ENOTDIR), "{e}");
    assert!(e.to_string().contains("a-file"), "{e}");

    let long = tmp.path().join("n".repeat(300));
    let e = Store::open(project.path(), options(&long)).unwrap_err();
    assert_eq!(e.os_errno(), Some(libc::ENAMETOOLONG), "{e}");
}

#[test]
fn an_error_of_libgit2_keeps_its_number() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = Store::open(project.path(), options(home.path())).unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    std::fs::write(project.path().join("a.txt"), "one\n").unwrap();
    s.user_input(json!({"role": "user", "content": "hi"}))
        .unwrap();
    s.before_edit(&["a.txt"]).unwrap();
    // libgit2 writes the next snapshot's pack into objects/pack: make it a file.
    let pack = store.dir().join("file-history/.git/objects/pack");
    std::fs::remove_dir_all(&pack).unwrap();
    std::fs::write(&pack, "not a directory").unwrap();
    std::fs::write(project.path().join("a.txt"), "two\n").unwrap();
    let e = s.after_edit(&["a.txt"]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert_eq!(e.os_errno(), Some(libc::ENOTDIR), "{e}");
    assert!(e.to_string().contains("file history"), "{e}");
}

#[test]
fn errors_not_from_the_system_have_no_number() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = Store::open(project.path(), options(home.path())).unwrap();
    let e = store.open_session("../x").unwrap_err();
    assert_eq!((e.kind(), e.os_errno()), (ErrorKind::InvalidInput, None));
}
