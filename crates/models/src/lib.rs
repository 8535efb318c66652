//! The concurrency models as real HTTP targets behind one contract (iolab serve).
