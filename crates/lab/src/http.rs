//! Reading a target's `/health` and `/metrics`: iolab's one blocking GET
//! (`iolab_verify::client`, bounded in connect time, total time and body
//! size), and the port a target announces on its first stdout line.

pub use iolab_verify::client::get;

/// `http://HOST:PORT[/...]` -> port.
pub fn port_of(url: &str) -> Option<u16> {
    let rest = url.strip_prefix("http://")?;
    let hostport = rest.split('/').next()?;
    let (_, port) = hostport.rsplit_once(':')?;
    port.parse().ok().filter(|p| *p != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_from_urls() {
        assert_eq!(port_of("http://127.0.0.1:8080"), Some(8080));
        assert_eq!(port_of("http://127.0.0.1:8080/work"), Some(8080));
        assert_eq!(port_of("listening on 8080"), None);
        assert_eq!(port_of("http://127.0.0.1:0"), None);
    }
}
