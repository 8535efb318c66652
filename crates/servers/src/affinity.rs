//! `--cpus 0-1`: pin the whole process to some cores, so a target and its load
//! generator do not share a core (sched_setaffinity).

/// Parse a CPU list such as `0`, `0-1`, `0,2-3` (the one parser, with its
/// bounds, is `iolab_model::limits::parse_cpu_list`).
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    iolab_model::limits::parse_cpu_list(text)
}

/// Pin every thread of the process (present and future) to `cpus`.
pub fn pin_to_cpus(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET bounds were checked by the parser.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c >= libc::CPU_SETSIZE as usize {
                return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
            }
            libc::CPU_SET(c, &mut set);
        }
        // pid 0 = this thread; threads started later inherit the mask, and
        // the caller pins before starting any.
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_lists() {
        assert_eq!(super::parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(super::parse_cpu_list("0-1").unwrap(), vec![0, 1]);
        assert_eq!(super::parse_cpu_list("3,0-1").unwrap(), vec![0, 1, 3]);
        assert!(super::parse_cpu_list("1-0").is_err());
        assert!(super::parse_cpu_list("x").is_err());
    }
}
