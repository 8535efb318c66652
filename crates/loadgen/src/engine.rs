//! Which engine a run uses: resolving `--engine` against what the kernel
//! offers, and naming what the threads actually ran on.

use iolab_model::attack::Engine;

use crate::error::AttackError;

/// The engine a plan runs on: `auto` takes io_uring where the kernel has
/// it (cheaper per request), else epoll; asking for io_uring where it is
/// missing is a setup error naming the way out. HTTPS runs on epoll: the
/// io_uring engine moves plain bytes and has no TLS session to drive.
pub fn resolve(wanted: Engine, tls: bool) -> Result<Engine, AttackError> {
    match wanted {
        Engine::Epoll => Ok(Engine::Epoll),
        Engine::Auto if tls => Ok(Engine::Epoll),
        Engine::IoUring if tls => Err(AttackError::Setup(
            "--engine io_uring does not speak TLS: use --engine epoll (or auto) for https://"
                .into(),
        )),
        Engine::Auto => Ok(match crate::uring::probe() {
            Ok(()) => Engine::IoUring,
            Err(_) => Engine::Epoll,
        }),
        Engine::IoUring => crate::uring::probe()
            .map(|()| Engine::IoUring)
            .map_err(|why| {
                AttackError::Setup(format!(
                    "--engine io_uring: not available here ({why}); use --engine epoll"
                ))
            }),
    }
}

/// The engine name of a finished run from its threads' engines: one, or
/// a mix when some threads of an `auto` run fell back to epoll.
pub fn ran_on(threads: impl Iterator<Item = Engine>) -> &'static str {
    let (mut uring, mut epoll) = (0, 0);
    for e in threads {
        match e {
            Engine::IoUring => uring += 1,
            _ => epoll += 1,
        }
    }
    match (uring, epoll) {
        (0, _) => Engine::Epoll.as_str(),
        (_, 0) => Engine::IoUring.as_str(),
        _ => "io_uring+epoll",
    }
}
