//! A target's threads and sockets from `/proc`, without its help: each
//! thread's state and kernel wait channel (`task/TID/stat`, `wchan`), its
//! CPU time and run-queue delay (`schedstat`), the CPUs the target may run
//! on; and which of the kernel's TCP sockets it owns (`fd/*` links against
//! the inodes of `/proc/net/tcp{,6}`): its listening sockets' accept queues,
//! the connections to its listening ports, and the ones it opened to
//! others (its downstreams), by endpoint.

use std::collections::{BTreeMap, HashMap, HashSet};

use iolab_model::capacity::ThreadState;

/// One thread, read once.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Thread id.
    pub tid: u32,
    /// Its name (`comm`).
    pub name: String,
    /// Where it was.
    pub state: ThreadState,
    /// utime + stime, clock ticks.
    pub cpu_ticks: u64,
    /// Time spent on a CPU, ns (`schedstat` field 1: finer than ticks).
    pub on_cpu_ns: Option<u64>,
    /// Time spent waiting on a run queue, ns (`schedstat` field 2).
    pub run_delay_ns: Option<u64>,
}

/// Every thread of `pids`.
pub fn tasks(pids: &[u32]) -> Vec<Task> {
    let mut out = Vec::new();
    for pid in pids {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for e in dir.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            if let Some(t) = task(*pid, tid) {
                out.push(t);
            }
        }
    }
    out
}

fn task(pid: u32, tid: u32) -> Option<Task> {
    let base = format!("/proc/{pid}/task/{tid}");
    let stat = std::fs::read_to_string(format!("{base}/stat")).ok()?;
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let f: Vec<&str> = stat.get(close + 2..)?.split_whitespace().collect();
    let letter = f.first()?.chars().next()?;
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let wchan = std::fs::read_to_string(format!("{base}/wchan")).unwrap_or_default();
    let schedstat = std::fs::read_to_string(format!("{base}/schedstat")).unwrap_or_default();
    let field = |i: usize| schedstat.split_whitespace().nth(i)?.parse().ok();
    let (on_cpu_ns, run_delay_ns) = (field(0), field(1));
    Some(Task {
        tid,
        name,
        state: ThreadState::of(letter, wchan.trim()),
        cpu_ticks: ticks(11) + ticks(12),
        on_cpu_ns,
        run_delay_ns,
    })
}

/// How many CPUs `pid` may run on (`Cpus_allowed_list` of its status).
pub fn cores_allowed(pid: u32) -> Option<u32> {
    cpus_allowed(pid).map(|c| c.len() as u32)
}

/// The CPUs `pid` may run on, in order (`Cpus_allowed_list` of its status,
/// e.g. `0-1,4`): a target started with `taskset -c 0` is pinned to `[0]`.
pub fn cpus_allowed(pid: u32) -> Option<Vec<usize>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    cpu_list(list)
}

/// A kernel CPU list (`0-1,4`) as its CPUs; `None` when malformed.
fn cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().ok()?..=b.parse::<usize>().ok()?),
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// What the kernel's socket tables say about a set of processes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sockets {
    /// Connections waiting in their listening sockets' accept queues.
    pub accept_queue: u64,
    /// Connections established to their listening ports.
    pub inbound: u64,
    /// Connections they opened to others, by `host:port`.
    pub outbound: BTreeMap<String, u64>,
}

/// Socket inodes held open by `pids`.
fn socket_inodes(pids: &[u32]) -> HashSet<u64> {
    let mut out = HashSet::new();
    for pid in pids {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for e in dir.flatten() {
            if let Ok(link) = std::fs::read_link(e.path()) {
                let l = link.to_string_lossy();
                if let Some(i) = l
                    .strip_prefix("socket:[")
                    .and_then(|r| r.strip_suffix(']'))
                    .and_then(|r| r.parse().ok())
                {
                    out.insert(i);
                }
            }
        }
    }
    out
}

/// One row of `/proc/net/tcp{,6}`.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    local: (String, u16),
    remote: (String, u16),
    state: u8,
    rx_queue: u64,
    inode: u64,
}

const ESTABLISHED: u8 = 0x01;
const LISTEN: u8 = 0x0A;

/// `0100007F:1F90` (IPv4, little-endian words) or the 32-digit IPv6 form.
fn endpoint(hex: &str) -> Option<(String, u16)> {
    let (addr, port) = hex.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let bytes: Vec<u8> = (0..addr.len() / 2)
        .map(|i| u8::from_str_radix(&addr[2 * i..2 * i + 2], 16))
        .collect::<Result<_, _>>()
        .ok()?;
    // Each 32-bit word is in host (little-endian) order.
    let mut b = Vec::with_capacity(bytes.len());
    for w in bytes.chunks(4) {
        b.extend(w.iter().rev());
    }
    let ip = match b.len() {
        4 => std::net::IpAddr::from([b[0], b[1], b[2], b[3]]),
        16 => {
            let a: [u8; 16] = b.try_into().ok()?;
            let v6 = std::net::Ipv6Addr::from(a);
            v6.to_ipv4_mapped().map_or(v6.into(), Into::into)
        }
        _ => return None,
    };
    Some((ip.to_string(), port))
}

fn rows(text: &str) -> Vec<Row> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            Some(Row {
                local: endpoint(f.get(1)?)?,
                remote: endpoint(f.get(2)?)?,
                state: u8::from_str_radix(f.get(3)?, 16).ok()?,
                rx_queue: f
                    .get(4)?
                    .split_once(':')
                    .and_then(|(_, rx)| u64::from_str_radix(rx, 16).ok())?,
                inode: f.get(9)?.parse().ok()?,
            })
        })
        .collect()
}

/// The sockets `pids` own, read from the kernel's tables.
pub fn sockets(pids: &[u32]) -> Option<Sockets> {
    let mine = socket_inodes(pids);
    let mut all = Vec::new();
    let mut read = false;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            read = true;
            all.extend(rows(&text));
        }
    }
    read.then(|| classify(&all, &mine))
}

fn classify(all: &[Row], mine: &HashSet<u64>) -> Sockets {
    let own: Vec<&Row> = all.iter().filter(|r| mine.contains(&r.inode)).collect();
    let listening: HashSet<u16> = own
        .iter()
        .filter(|r| r.state == LISTEN)
        .map(|r| r.local.1)
        .collect();
    let mut s = Sockets::default();
    for r in &own {
        match r.state {
            LISTEN => s.accept_queue += r.rx_queue,
            ESTABLISHED if listening.contains(&r.local.1) => {}
            ESTABLISHED => {
                *s.outbound
                    .entry(format!("{}:{}", r.remote.0, r.remote.1))
                    .or_insert(0) += 1
            }
            _ => {}
        }
    }
    // Connections to its ports: accepted (owned) or still queued (not yet).
    s.inbound = all
        .iter()
        .filter(|r| r.state == ESTABLISHED && listening.contains(&r.local.1))
        .count() as u64;
    s
}

/// Per-thread CPU between two reads, seconds, by tid (threads in both).
pub fn cpu_by_thread(before: &[Task], after: &[Task], hz: f64) -> HashMap<u32, (String, f64)> {
    let first: HashMap<u32, u64> = before.iter().map(|t| (t.tid, t.cpu_ticks)).collect();
    after
        .iter()
        .filter_map(|t| {
            let t0 = first.get(&t.tid)?;
            Some((
                t.tid,
                (t.name.clone(), t.cpu_ticks.saturating_sub(*t0) as f64 / hz),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_cpu_list_reads_as_its_cpus() {
        assert_eq!(cpu_list("0-1,4\n"), Some(vec![0, 1, 4]));
        assert_eq!(cpu_list("3"), Some(vec![3]));
        assert_eq!(cpu_list("0-x"), None);
        let mine = cpus_allowed(std::process::id()).expect("this process's status");
        assert_eq!(cores_allowed(std::process::id()), Some(mine.len() as u32));
    }

    #[test]
    fn reads_ipv4_and_ipv6_endpoints() {
        assert_eq!(endpoint("0100007F:1F90"), Some(("127.0.0.1".into(), 8080)));
        assert_eq!(
            endpoint("0000000000000000FFFF00000100007F:1538"),
            Some(("127.0.0.1".into(), 5432))
        );
        assert_eq!(
            endpoint("00000000000000000000000001000000:0050"),
            Some(("::1".into(), 80))
        );
    }

    #[test]
    fn sorts_its_sockets_into_listening_inbound_and_outbound() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000002 00:00000000 00000000     0        0 11 1\n\
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 12 1\n\
   2: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 13 1\n\
   3: 0100007F:D000 0100007F:1538 01 00000000:00000000 00:00000000 00000000     0        0 14 1\n\
   4: 0100007F:D001 0100007F:1538 01 00000000:00000000 00:00000000 00000000     0        0 15 1\n\
   5: 0100007F:1538 0100007F:D000 01 00000000:00000000 00:00000000 00000000     0        0 16 1\n";
        let mine: HashSet<u64> = [11, 12, 14, 15].into();
        let s = classify(&rows(text), &mine);
        assert_eq!(s.accept_queue, 2);
        assert_eq!(s.inbound, 1);
        assert_eq!(s.outbound.get("127.0.0.1:5432"), Some(&2));
        assert_eq!(s.outbound.len(), 1, "{s:?}");
    }

    #[test]
    fn reads_its_own_threads_and_a_real_downstream() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let _c: Vec<_> = (0..3)
            .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        let me = std::process::id();
        let s = sockets(&[me]).unwrap();
        // Both ends are this process: three queued to its listener, three
        // of its own connections out to that port.
        assert_eq!(s.accept_queue, 3, "{s:?}");
        assert_eq!(s.inbound, 3, "{s:?}");
        assert_eq!(
            s.outbound.get(&format!("127.0.0.1:{port}")),
            Some(&3),
            "{s:?}"
        );
        let t = tasks(&[me]);
        assert!(t.iter().any(|t| t.tid == me), "{t:?}");
        assert!(cores_allowed(me).is_some_and(|n| n >= 1));
    }
}
