//! Queueing formulas and a discrete-event simulation of every model (iolab predict).
