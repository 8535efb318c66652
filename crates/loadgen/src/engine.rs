//! Which engine a run uses: resolving `--engine` against the protocol
//! table's row (which engine carries the protocol over which transport)
//! and what the kernel offers, and naming what the threads actually ran on.

use iolab_model::attack::Engine;
use iolab_model::protocol::ProtocolKind;

use crate::error::AttackError;

/// The engine a plan runs on: `auto` takes io_uring where the protocol's
/// row lets it carry this transport and the kernel has it (cheaper per
/// request), else epoll; asking for an engine the row refuses, or
/// io_uring where it is missing, is a setup error naming the way out
/// (the refusal is the row's, [`iolab_model::protocol::ProtocolDef::refusal`]).
pub fn resolve(wanted: Engine, tls: bool, protocol: ProtocolKind) -> Result<Engine, AttackError> {
    let row = protocol.def();
    if let Some(refused) = row.refusal(wanted, tls) {
        return Err(AttackError::Setup(refused));
    }
    match wanted {
        Engine::Epoll => Ok(Engine::Epoll),
        Engine::Auto if !row.io_uring.carries(tls) => Ok(Engine::Epoll),
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
