//! The target-contract gate run before any measurement (iolab verify).
