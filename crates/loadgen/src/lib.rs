//! Open- and closed-loop HTTP load generator with honest accounting (iolab attack).
