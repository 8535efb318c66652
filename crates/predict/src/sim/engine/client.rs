//! The client side of the simulation: sends on schedule (open loop) or as clients free up (closed loop), answers, timeouts and connections.

use super::*;

impl Engine<'_> {
    pub(super) fn send(&mut self) {
        self.sent += 1;
        let c = &mut self.client;
        let new_conn = if c.keep_alive && c.idle > 0 && !self.shape.closes_connections {
            c.idle -= 1;
            false
        } else if c.open < c.max {
            c.open += 1;
            true
        } else {
            self.count_error("client-connections");
            self.client_free_again(true);
            return;
        };
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.reqs.push(Req::default());
                (self.reqs.len() - 1) as u32
            }
        };
        let n = self.prog.nodes.len();
        let r = &mut self.reqs[slot as usize];
        r.sent = self.now;
        r.new_conn = new_conn;
        r.waiting = true;
        r.answered = false;
        r.accepted = false;
        r.holds_thread = false;
        r.pending = 0;
        r.counters.resize(n, 0);
        self.deadlines
            .push_back((self.now + self.timeout_ns, slot, r.gen));
        self.in_server += 1;
        if let Some(t) = self.trace.as_deref_mut() {
            t.sent(slot, self.now);
        }
        self.admit(slot);
        // after admission, so a refused request never counts as in the server
        self.peak_in_server = self.peak_in_server.max(self.in_server);
    }
    /// The server answers request `slot`: success, or the failure named.
    pub(super) fn answer(&mut self, slot: u32, failure: Option<&'static str>) {
        let now = self.now;
        let r = &mut self.reqs[slot as usize];
        r.answered = true;
        let held = std::mem::take(&mut r.holds_thread);
        let (waiting, accepted, sent) = (r.waiting, r.accepted, r.sent);
        r.waiting = false;
        if let Some(t) = self.trace.as_deref_mut() {
            t.answered(slot, now, failure, waiting);
        }
        self.in_server -= 1;
        if failure.is_none() {
            self.completed += 1;
            if now <= self.window_ns {
                self.completed_in_window += 1;
            }
        }
        let close_conn = if waiting {
            self.last_answer = self.last_answer.max(now);
            match failure {
                None => {
                    self.ok += 1;
                    self.latency.record((now - sent) / 1_000);
                }
                Some(kind) => self.count_error(kind),
            }
            let reset = failure == Some("reset");
            let reuse = self.client.keep_alive && !self.shape.closes_connections;
            if reuse && !reset {
                self.client.idle += 1;
            } else {
                self.client.open -= 1;
            }
            accepted && !reuse
        } else {
            accepted
        };
        if held && self.tokio.is_some() {
            let worker = self.reqs[slot as usize].worker;
            let _ = self.threads.as_mut().and_then(Resource::release);
            if let Some(tokio) = self.tokio.as_mut() {
                tokio.release(worker);
            }
            self.tokio_start();
        } else if held {
            if let Some(w) = self.threads.as_mut().and_then(Resource::release) {
                if let Some(t) = self.trace.as_deref_mut() {
                    t.thread_taken(w.slot, now);
                }
                self.reqs[w.slot as usize].holds_thread = true;
                self.start_node(w.slot, 0);
            }
        }
        if close_conn {
            self.close_conn();
        }
        if waiting {
            self.client_free_again(failure.is_some() && now == sent);
        }
    }

    pub(super) fn close_conn(&mut self) {
        self.conns -= 1;
        if let Some(s) = self.backlog.pop_front() {
            self.conns += 1;
            self.reqs[s as usize].accepted = true;
            self.exec(s);
        }
    }

    /// A closed-loop client got its answer (or gave up): send the next one.
    pub(super) fn client_free_again(&mut self, failed_at_once: bool) {
        if let Source::Closed { .. } = self.source {
            if failed_at_once {
                self.q
                    .push(self.retry_lane, self.now + RETRY_NS, Event::Send);
            } else if self.may_send() {
                self.send();
            }
        }
    }

    pub(super) fn deadline(&mut self, slot: u32, gen: u32) {
        let r = &mut self.reqs[slot as usize];
        if r.gen != gen || !r.waiting {
            return;
        }
        r.waiting = false;
        let sent = r.sent;
        if let Some(t) = self.trace.as_deref_mut() {
            t.client_done(slot, self.now, iolab_model::spans::ClientOutcome::Timeout);
        }
        self.count_error("timeout");
        self.first_timeout_sent.get_or_insert(sent);
        // the client closes its connection; the server keeps the request
        self.client.open -= 1;
        self.maybe_free(slot);
        self.client_free_again(false);
    }

    pub(super) fn maybe_free(&mut self, slot: u32) {
        let r = &mut self.reqs[slot as usize];
        if !r.waiting && r.answered && r.pending == 0 {
            r.gen = r.gen.wrapping_add(1);
            r.answered = false;
            self.free.push(slot);
        }
    }
}
