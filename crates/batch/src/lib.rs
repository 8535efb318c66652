//! In-process batch experiments: master/worker (E1) and futures over a blocking service (E3).
