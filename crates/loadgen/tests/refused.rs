//! A kernel that refuses io_uring, made real on this machine: a seccomp
//! filter on one thread (inherited by the generator threads it starts) makes
//! `io_uring_setup` fail with EPERM, as Docker's default profile and
//! `kernel.io_uring_disabled=2` do. `auto` must then run on epoll with the
//! same books, and an explicit `io_uring` must be a setup error naming the
//! way out. A second filter refuses only rings bigger than the probe's, so
//! the probe passes and each generator thread's own ring is refused: `auto`
//! falls back thread by thread.
#![cfg(target_arch = "x86_64")]

mod common;

use common::{open, run, server};
use iolab_loadgen::{attack, io_uring_available, AttackError, Hooks};
use iolab_model::attack::Engine;

const IO_URING_SETUP: u32 = 425;
const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;

/// Install, on the calling thread only, a filter making `io_uring_setup`
/// fail with EPERM when it asks for more than `max_entries` entries.
fn refuse_io_uring_above(max_entries: u32) {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x05 | 0x10;
    const JGT_K: u16 = 0x05 | 0x20;
    const RET_K: u16 = 0x06;
    const ALLOW: u32 = 0x7fff_0000;
    const ERRNO: u32 = 0x0005_0000;
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let prog = [
        op(LD_W_ABS, 0, 0, 4), // arch
        op(JEQ_K, 0, 5, AUDIT_ARCH_X86_64),
        op(LD_W_ABS, 0, 0, 0), // syscall number
        op(JEQ_K, 0, 3, IO_URING_SETUP),
        op(LD_W_ABS, 0, 0, 16), // entries (low half of args[0])
        op(JGT_K, 0, 1, max_entries),
        op(RET_K, 0, 0, ERRNO | libc::EPERM as u32),
        op(RET_K, 0, 0, ALLOW),
    ];
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: plain prctl calls; the kernel copies the program before return.
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        let rc = libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &fprog as *const libc::sock_fprog,
        );
        assert_eq!(rc, 0, "seccomp: {}", std::io::Error::last_os_error());
    }
}

/// Run `f` on a fresh thread that carries the filter (the test harness's
/// other threads keep io_uring).
fn refused<T: Send + 'static>(max_entries: u32, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(move || {
        refuse_io_uring_above(max_entries);
        f()
    })
    .join()
    .expect("the filtered thread ran")
}

#[test]
fn refused_io_uring_means_epoll_under_auto_and_a_clear_error_when_asked_for() {
    let srv = server::spawn(0);
    let url = srv.url("/");
    refused(0, move || {
        let why = io_uring_available()
            .expect_err("io_uring is refused")
            .to_string();
        assert!(why.contains("Operation not permitted"), "{why}");

        let mut plan = open(&url, 100.0, 0.5);
        let r = run(&plan).result;
        assert_eq!(r.generator.engine, "epoll");
        assert_eq!((r.requests.planned, r.requests.ok), (50, 50));

        plan.engine = Engine::IoUring;
        match attack(&plan, &Hooks::default()) {
            Err(AttackError::Setup(m)) => assert!(m.contains("use --engine epoll"), "{m}"),
            other => panic!("expected a setup error, got {:?}", other.map(|r| r.result)),
        }
    });
}

#[test]
fn a_ring_refused_after_the_probe_falls_back_per_thread_under_auto() {
    if let Err(why) = io_uring_available() {
        eprintln!("skipped: io_uring is not available here at all: {why}");
        return;
    }
    let srv = server::spawn(0);
    let url = srv.url("/");
    // The probe's ring (8 entries) passes; a generator thread's (>= 64) not.
    refused(8, move || {
        assert!(io_uring_available().is_ok());
        let mut plan = open(&url, 100.0, 0.5);
        let r = run(&plan).result;
        assert_eq!(r.generator.engine, "epoll");
        assert_eq!((r.requests.planned, r.requests.ok), (50, 50));

        plan.engine = Engine::IoUring;
        match attack(&plan, &Hooks::default()) {
            Err(e @ AttackError::Thread(_)) => {
                let m = e.to_string();
                assert!(
                    m.contains("cannot set up io_uring") && m.contains("--engine epoll"),
                    "{m}"
                )
            }
            other => panic!("expected a setup error, got {:?}", other.map(|r| r.result)),
        }
    });
}
