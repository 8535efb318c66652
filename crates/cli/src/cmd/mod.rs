//! One module per subcommand: flags (`Args`), their translation into a typed
//! plan, and a call into the library crate that does the work.

pub mod attack;
pub mod backend;
pub mod batch;
pub mod capacity;
pub mod flags;
pub mod k8s;
pub mod live;
pub mod merge;
pub mod predict;
pub mod presets;
pub mod report;
pub mod run;
pub mod serve;
pub mod shard;
pub mod verify;
pub mod whatif;
