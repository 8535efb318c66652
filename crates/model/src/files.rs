//! Files iolab writes and reads back, under the names the crates used
//! before `iolab-files` existed: each is that crate's one reader or writer
//! (capped, regular-file-checked reads; writes that never rename over a
//! device or a symlink, checked to the last byte). Callers move to
//! `iolab_files` directly; these names go when none is left.

pub use iolab_files::{
    check_writable, read as read_capped, write as write_atomic, write_with as write_atomic_with,
};
