//! `--cpus 0-1`: pin the whole process to some cores, so a target and its load
//! generator do not share a core (sched_setaffinity).

/// Pin every thread of the process (present and future) to `cpus` (a list
/// `iolab_model::limits::parse_cpu_list` read and bounded).
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
    /// The parser's bound is the one `sched_setaffinity` takes.
    #[test]
    fn the_parsers_cpu_bound_is_libcs() {
        assert_eq!(iolab_model::limits::CPU_SETSIZE, libc::CPU_SETSIZE as usize);
        let last = iolab_model::limits::CPU_SETSIZE - 1;
        assert!(iolab_model::limits::parse_cpu_list(&last.to_string()).is_ok());
        assert!(iolab_model::limits::parse_cpu_list(&(last + 1).to_string()).is_err());
    }
}
