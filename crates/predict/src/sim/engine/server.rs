//! The server side of the simulation: admission, a request's steps on threads, CPU servers, offload pools and the PostgreSQL pool.

use super::*;

impl Engine<'_> {
    pub(super) fn admit(&mut self, slot: u32) {
        match self.shape.admission {
            Admission::Open => self.exec(slot),
            Admission::Limited {
                max_connections,
                backlog,
            } => {
                if !self.reqs[slot as usize].new_conn {
                    self.reqs[slot as usize].accepted = true;
                    self.exec(slot);
                } else if self.conns < max_connections {
                    self.conns += 1;
                    self.reqs[slot as usize].accepted = true;
                    self.exec(slot);
                } else if self.backlog.len() < backlog as usize {
                    self.backlog.push_back(slot);
                } else {
                    self.answer(slot, Some("reset"));
                    self.maybe_free(slot);
                }
            }
        }
    }

    pub(super) fn exec(&mut self, slot: u32) {
        if let Some(tokio) = self.tokio.as_mut() {
            tokio.arrive(slot, self.reqs[slot as usize].new_conn);
            self.tokio_start();
            return;
        }
        match (self.shape.request_threads, self.threads.as_mut()) {
            (Some(rt), Some(threads)) => {
                if rt.reject_when_full && !threads.free() {
                    self.answer(slot, Some("rejected"));
                    self.maybe_free(slot);
                } else if threads.acquire(Waiter {
                    slot,
                    node: 0,
                    then: Then::Start,
                }) {
                    if let Some(t) = self.trace.as_deref_mut() {
                        t.thread_taken(slot, self.now);
                    }
                    self.reqs[slot as usize].holds_thread = true;
                    self.start_node(slot, 0);
                }
            }
            _ => self.start_node(slot, 0),
        }
    }

    /// Start what tokio's free workers take next ([`super::super::tokio`]).
    pub(super) fn tokio_start(&mut self) {
        let now = self.now;
        while let Some((w, slot)) = self.tokio.as_mut().and_then(|t| t.next_start(now)) {
            if let Some(threads) = self.threads.as_mut() {
                // a worker is free, so this never waits
                let _ = threads.acquire(Waiter {
                    slot,
                    node: 0,
                    then: Then::Start,
                });
            }
            if let Some(t) = self.trace.as_deref_mut() {
                t.thread_taken(slot, now);
            }
            let r = &mut self.reqs[slot as usize];
            r.holds_thread = true;
            r.worker = w;
            self.start_node(slot, 0);
        }
    }

    pub(super) fn start_node(&mut self, slot: u32, node: u32) {
        match self.prog.nodes[node as usize].op {
            Op::Cpu { ns } => {
                self.reqs[slot as usize].pending += 1;
                if self.cpu.acquire(Waiter {
                    slot,
                    node,
                    then: Then::Cpu,
                }) {
                    self.leaf_at(slot, node, ns);
                }
            }
            Op::Io { .. } => {
                self.reqs[slot as usize].pending += 1;
                if let Some(t) = self.trace.as_deref_mut() {
                    t.io_asked(slot, node, self.now);
                }
                let go = match self.offload.as_mut() {
                    Some(off) => off.acquire(Waiter {
                        slot,
                        node,
                        then: Then::Io,
                    }),
                    None => true,
                };
                if go {
                    self.io_begin(slot, node);
                }
            }
            Op::Seq { first, .. } => {
                self.reqs[slot as usize].counters[node as usize] = 0;
                let c = self.prog.child(first, 0);
                self.start_node(slot, c);
            }
            Op::Par { first, len } => {
                self.reqs[slot as usize].counters[node as usize] = len;
                for i in 0..len {
                    let c = self.prog.child(first, i);
                    self.start_node(slot, c);
                }
            }
        }
    }

    pub(super) fn io_begin(&mut self, slot: u32, node: u32) {
        let Op::Io { ns, pg } = self.prog.nodes[node as usize].op else {
            unreachable!("io_begin on a non-IO node")
        };
        if let Some(t) = self.trace.as_deref_mut() {
            t.io_begin(slot, node, self.now, self.offload.is_some());
        }
        if pg {
            let id = self.next_pg_id;
            self.next_pg_id += 1;
            if !self.pg.acquire(Waiter {
                slot,
                node,
                then: Then::Pg { id },
            }) {
                self.pg_waiting.insert(id);
                self.q.push(
                    self.pg_wait_lane,
                    self.now + PG_WAIT_NS,
                    Event::PgWaitOver { id, slot },
                );
                return;
            }
        }
        self.leaf_at(slot, node, ns);
    }

    /// Schedule the end of leaf `node` of `slot`, `ns` from now.
    pub(super) fn leaf_at(&mut self, slot: u32, node: u32, ns: u64) {
        let done = Event::LeafDone { slot, node };
        if let Some(end) = self.leaf_end(node, ns) {
            self.q.push_loose(end, done);
            return;
        }
        let lane = self.node_lane[node as usize];
        self.q.push(lane, self.now + ns, done);
    }

    pub(super) fn leaf_done(&mut self, slot: u32, node: u32) {
        match self.prog.nodes[node as usize].op {
            Op::Cpu { .. } => {
                if let Some(w) = self.cpu.release() {
                    let Op::Cpu { ns } = self.prog.nodes[w.node as usize].op else {
                        unreachable!()
                    };
                    self.leaf_at(w.slot, w.node, ns);
                }
            }
            Op::Io { pg, .. } => {
                if let Some(t) = self.trace.as_deref_mut() {
                    t.io_end(slot, node, self.now);
                }
                if pg {
                    self.release_pg();
                }
                self.release_offload();
            }
            _ => unreachable!("only leaves finish"),
        }
        self.reqs[slot as usize].pending -= 1;
        if self.reqs[slot as usize].answered {
            self.maybe_free(slot);
            return;
        }
        self.node_done(slot, node);
    }

    pub(super) fn release_pg(&mut self) {
        while let Some(w) = self.pg.release() {
            let Then::Pg { id } = w.then else {
                unreachable!()
            };
            if self.pg_waiting.remove(&id) {
                let Op::Io { ns, .. } = self.prog.nodes[w.node as usize].op else {
                    unreachable!()
                };
                self.leaf_at(w.slot, w.node, ns);
                return;
            }
            // that waiter gave up already: hand the connection on
        }
    }

    pub(super) fn release_offload(&mut self) {
        if let Some(off) = self.offload.as_mut() {
            if let Some(w) = off.release() {
                self.io_begin(w.slot, w.node);
            }
        }
    }

    pub(super) fn node_done(&mut self, slot: u32, mut node: u32) {
        loop {
            let parent = self.prog.nodes[node as usize].parent;
            if parent == NO_PARENT {
                self.answer(slot, None);
                self.maybe_free(slot);
                return;
            }
            let counter = &mut self.reqs[slot as usize].counters[parent as usize];
            match self.prog.nodes[parent as usize].op {
                Op::Seq { first, len } => {
                    *counter += 1;
                    if *counter < len {
                        let c = self.prog.child(first, *counter);
                        self.start_node(slot, c);
                        return;
                    }
                }
                Op::Par { .. } => {
                    *counter -= 1;
                    if *counter > 0 {
                        return;
                    }
                }
                _ => unreachable!("leaves have no children"),
            }
            node = parent;
        }
    }
}
