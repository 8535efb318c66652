//! `sleep:MS`: the embedded timer, a blocking sleep or an async timer. It
//! needs no address and nothing started, and keeps no counter of its own.

use std::time::Duration;

use bytes::Bytes;
use iolab_model::steps::{BackendKind, IoCall};

use crate::backend::{micros, Backend, CallFuture, Clients, Pool};
use crate::{AddressError, BackendError, CountError, Service};

/// The embedded timer as a [`Backend`].
pub struct Sleep;

/// The one instance.
pub static SLEEP: Sleep = Sleep;

impl Backend for Sleep {
    fn kind(&self) -> BackendKind {
        BackendKind::Sleep
    }

    fn check_address(&self, _address: &str) -> Result<(), AddressError> {
        Ok(())
    }

    fn clients(&self, _address: &str, _pool: Pool) -> Result<Box<dyn Clients>, BackendError> {
        Ok(Box::new(Timer))
    }

    fn count(&self, _address: &str) -> Result<u64, CountError> {
        Err(CountError::NoCounter)
    }

    fn service(&self) -> Option<&'static dyn Service> {
        None
    }
}

/// Both clients: a thread sleep and a tokio timer.
#[derive(Debug)]
struct Timer;

impl Clients for Timer {
    fn blocking(&self, call: &IoCall) -> Result<Option<Bytes>, BackendError> {
        std::thread::sleep(Duration::from_micros(micros(call)));
        Ok(None)
    }

    fn nonblocking<'a>(&'a self, call: &'a IoCall) -> CallFuture<'a> {
        let wait = Duration::from_micros(micros(call));
        Box::pin(async move {
            tokio::time::sleep(wait).await;
            Ok(None)
        })
    }
}
