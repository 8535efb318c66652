//! Request deadlines of one generator thread: a list of slots ordered by
//! deadline, linked through the slots' indices, so that adding, removing
//! (when an answer comes) and finding the soonest are O(1) in the usual case.
//!
//! Deadlines are the intended send time plus one fixed timeout, and requests
//! start in nearly schedule order, so a new deadline belongs at (or very near)
//! the tail: insertion walks back from the tail. A heap would do the same
//! with a push per request and stale entries left behind by every answer.

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Link {
    deadline: u64,
    prev: u32,
    next: u32,
    linked: bool,
}

/// Slots ordered by deadline, soonest first.
#[derive(Debug)]
pub struct Deadlines {
    links: Vec<Link>,
    head: u32,
    tail: u32,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            links: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }
}

impl Deadlines {
    /// Make room for slot indices below `n`.
    pub fn grow(&mut self, n: usize) {
        self.links.resize(
            n,
            Link {
                deadline: 0,
                prev: NIL,
                next: NIL,
                linked: false,
            },
        );
    }

    /// Give `slot` a deadline (it must not have one).
    pub fn insert(&mut self, slot: u32, deadline: u64) {
        let mut after = self.tail;
        while after != NIL && self.links[after as usize].deadline > deadline {
            after = self.links[after as usize].prev;
        }
        let next = if after == NIL {
            self.head
        } else {
            self.links[after as usize].next
        };
        self.links[slot as usize] = Link {
            deadline,
            prev: after,
            next,
            linked: true,
        };
        match after {
            NIL => self.head = slot,
            a => self.links[a as usize].next = slot,
        }
        match next {
            NIL => self.tail = slot,
            n => self.links[n as usize].prev = slot,
        }
    }

    /// Drop `slot`'s deadline, if it has one.
    pub fn remove(&mut self, slot: u32) {
        let l = self.links[slot as usize];
        if !l.linked {
            return;
        }
        match l.prev {
            NIL => self.head = l.next,
            p => self.links[p as usize].next = l.next,
        }
        match l.next {
            NIL => self.tail = l.prev,
            n => self.links[n as usize].prev = l.prev,
        }
        self.links[slot as usize].linked = false;
    }

    /// The slot with the soonest deadline, and that deadline.
    pub fn first(&self) -> Option<(u32, u64)> {
        (self.head != NIL).then(|| (self.head, self.links[self.head as usize].deadline))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(d: &Deadlines) -> Vec<u32> {
        let mut out = Vec::new();
        let mut d2 = Deadlines {
            links: d.links.clone(),
            head: d.head,
            tail: d.tail,
        };
        while let Some((s, _)) = d2.first() {
            out.push(s);
            d2.remove(s);
        }
        out
    }

    #[test]
    fn keeps_slots_in_deadline_order_whatever_the_insertion_order() {
        let mut d = Deadlines::default();
        d.grow(6);
        for (slot, at) in [(0, 50), (1, 10), (2, 70), (3, 10), (4, 60), (5, 5)] {
            d.insert(slot, at);
        }
        assert_eq!(order(&d), [5, 1, 3, 0, 4, 2]);
        d.remove(0);
        d.remove(5);
        d.remove(5);
        assert_eq!(order(&d), [1, 3, 4, 2]);
        assert_eq!(d.first(), Some((1, 10)));
        for s in [1, 3, 4, 2] {
            d.remove(s);
        }
        assert_eq!(d.first(), None);
        d.insert(2, 1);
        assert_eq!(order(&d), [2]);
    }
}
