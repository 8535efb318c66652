//! The `iolab` binary: parse flags, hand them to the library, map the exit code.

fn main() -> std::process::ExitCode {
    iolab::main_with_args(std::env::args_os())
}
