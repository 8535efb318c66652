//! The reader, the writer and folder claims against real devices, FIFOs,
//! symlinks and racing threads. Tests named `r30_NN_*` reproduce findings
//! of issue 30.

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use iolab_files::{check_writable, claim, claim_new, read, write, write_with};

fn mkfifo(p: &Path) {
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Finding 3: `/dev/zero` as a body or targets file read 2.4 GB.
#[test]
fn r30_03_devices_are_refused_in_one_line_without_reading() {
    let t = Instant::now();
    let e = read(Path::new("/dev/zero"), 1 << 20).unwrap_err();
    assert_eq!(
        e.to_string(),
        "is a character device, not a file: give a regular file"
    );
    assert!(t.elapsed() < Duration::from_secs(1));
    let dir = tempfile::tempdir().unwrap();
    let e = read(dir.path(), 10).unwrap_err();
    assert!(e.to_string().starts_with("is a folder, not a file"), "{e}");
}

#[test]
fn regular_files_are_read_within_their_cap_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.json");
    std::fs::write(&p, b"12345").unwrap();
    assert_eq!(read(&p, 5).unwrap(), b"12345");
    assert_eq!(
        read(&p, 4).unwrap_err().to_string(),
        "larger than the 4 bytes cap"
    );
    std::fs::write(&p, b"\xff").unwrap();
    assert!(iolab_files::read_text(&p, 5).is_err());
}

/// Finding 3: a FIFO as `--body-file` blocked forever.
#[test]
fn r30_03_a_fifo_is_read_when_written_and_refused_past_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("body.fifo");
    mkfifo(&p);
    let writer = {
        let p = p.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            f.write_all(b"from a pipe").unwrap();
        })
    };
    let got = iolab_files::read::read_within(&p, 100, Duration::from_secs(5)).unwrap();
    writer.join().unwrap();
    assert_eq!(got, b"from a pipe");

    // No writer: refused at the deadline, not hung.
    let t = Instant::now();
    let e = iolab_files::read::read_within(&p, 100, Duration::from_millis(300)).unwrap_err();
    assert!(e.to_string().contains("is a FIFO that did not end"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(3));

    // An endless writer: cut at the cap.
    let p2 = dir.path().join("endless.fifo");
    mkfifo(&p2);
    let writer = {
        let p2 = p2.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(&p2).unwrap();
            let block = [b'x'; 4096];
            while f.write_all(&block).is_ok() {}
        })
    };
    let e = iolab_files::read::read_within(&p2, 10_000, Duration::from_secs(5)).unwrap_err();
    assert_eq!(e.to_string(), "larger than the 9.8 KiB cap");
    writer.join().unwrap();
}

/// Finding 2: `-o /dev/null` as root replaced the system's /dev/null with
/// a regular file; a symlink was replaced by a file.
#[test]
fn r30_02_devices_are_written_through_and_symlinks_kept() {
    write(Path::new("/dev/null"), b"gone").unwrap();
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_char_device(
        &meta.file_type()
    ));

    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("real.csv");
    std::fs::write(&target, b"old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink("real.csv", &link).unwrap();
    write(&link, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"new");
    let mode = std::fs::metadata(&target).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640, "the replaced file keeps its mode");
    assert_eq!(names(dir.path()), ["link.csv", "real.csv"]);

    // A dangling link: the file it names is made, the link stays.
    let dangling = dir.path().join("d.hdr");
    std::os::unix::fs::symlink("made.hdr", &dangling).unwrap();
    write(&dangling, b"h").unwrap();
    assert_eq!(std::fs::read(dir.path().join("made.hdr")).unwrap(), b"h");
    assert!(std::fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// Finding 2 and 11: a write to `/dev/full` must fail, not vanish.
#[test]
fn r30_11_a_full_device_is_an_error() {
    let e = write(Path::new("/dev/full"), b"x").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
    check_writable(Path::new("/dev/full")).unwrap();
}

#[test]
fn a_fifo_without_reader_is_refused_and_one_with_a_reader_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.fifo");
    mkfifo(&p);
    let e = write(&p, b"x").unwrap_err();
    assert_eq!(e.to_string(), "is a FIFO with no reader");
    let reader = {
        let p = p.clone();
        std::thread::spawn(move || std::fs::read(&p).unwrap())
    };
    // The reader opens in its own time: retry until it is there.
    let t = Instant::now();
    while write(&p, b"through").is_err() {
        assert!(t.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(reader.join().unwrap(), b"through");
}

#[test]
fn a_failed_fill_keeps_the_old_file_and_no_temp() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.csv");
    write(&p, b"old").unwrap();
    let e = write_with(&p, |w| {
        w.write_all(b"half")?;
        Err(std::io::Error::other("disk full"))
    });
    assert_eq!(e.unwrap_err().to_string(), "disk full");
    assert_eq!(std::fs::read(&p).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["a.csv"]);
    let e = write(dir.path(), b"x").unwrap_err();
    assert_eq!(e.to_string(), "is a folder, not a file: give a file path");
    let e = check_writable(&dir.path().join("no/such/x.hdr")).unwrap_err();
    assert!(e.to_string().contains("cannot create a file in"), "{e}");
    assert_eq!(names(dir.path()), ["a.csv"]);
}

/// Finding 12: two runs with the same `--out` (or the same second) shared
/// one folder and one result survived.
#[test]
fn r30_12_one_folder_one_run_even_when_racing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results/same");
    let wins: usize = (0..8)
        .map(|_| {
            let out = out.clone();
            std::thread::spawn(move || claim(&out, "runs.json").is_ok())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap() as usize)
        .sum();
    assert_eq!(wins, 1);
    let e = claim(&out, "runs.json").unwrap_err();
    assert!(e.to_string().contains("choose another --out"), "{e}");

    // A folder the user made beforehand is claimed once, by a marker.
    let made = dir.path().join("made");
    std::fs::create_dir(&made).unwrap();
    claim(&made, "runs.json").unwrap();
    assert!(claim(&made, "runs.json").is_err());
    let old = dir.path().join("old");
    std::fs::create_dir(&old).unwrap();
    std::fs::write(old.join("runs.json"), b"{}").unwrap();
    assert!(claim(&old, "runs.json").is_err());

    let base = dir.path().join("results/e1-20261124-120000");
    let mut got: Vec<_> = (0..4)
        .map(|_| {
            let base = base.clone();
            std::thread::spawn(move || claim_new(&base).unwrap())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    got.sort();
    got.dedup();
    assert_eq!(got.len(), 4, "{got:?}");
}
