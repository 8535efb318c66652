use super::*;

const NGINX: &str = r#"127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] "GET /api/orders/42?x=1 HTTP/1.1" 200 612 "-" "curl/8.5.0" 0.004"#;

#[test]
fn a_combined_line_with_request_time() {
    let l = parse(NGINX).unwrap();
    assert_eq!(
        (l.method.as_str(), l.target.as_str(), l.status),
        ("GET", "/api/orders/42?x=1", 200)
    );
    assert_eq!(l.request_time_s, Some(0.004));
    assert_eq!(l.at_ms % 1000, 0);
}

#[test]
fn apache_lines_with_escapes_and_the_common_format() {
    let apache = r#"10.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a\"b HTTP/1.0" 200 2326 "http://x/\"q\"" "Mozilla/4.08 [en]""#;
    let l = parse(apache).unwrap();
    assert_eq!(l.target, "/a\"b");
    assert_eq!(l.request_time_s, None);
    let common = r#"10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "POST /b HTTP/1.0" 201 -"#;
    assert_eq!(parse(common).unwrap().method, "POST");
    let proxy = r#"10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET http://h:1/c?d HTTP/1.1" 200 1"#;
    assert_eq!(parse(proxy).unwrap().target, "/c?d");
}

#[test]
fn lines_of_another_format_and_lines_without_a_request() {
    for bad in [
        "2026-11-28 20:14:08 GET /a 200",
        r#"127.0.0.1 - - 28/Nov/2026:20:14:08 "GET / HTTP/1.1" 200 1"#,
        r#"127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] "GET / HTTP/1.1" abc 1"#,
        r#"127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] "GET / HTTP/1.1"#,
    ] {
        assert!(matches!(parse(bad), Err(Fault::Format(_))), "{bad}");
    }
    let no_request = r#"127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] "-" 400 0 "-" "-""#;
    assert_eq!(parse(no_request), Err(Fault::NoRequest));
    let tls =
        r#"127.0.0.1 - - [28/Nov/2026:20:14:08 +0000] "\x16\x03\x01\x02\x00\x01" 400 157 "-" "-""#;
    assert_eq!(parse(tls), Err(Fault::NoRequest));
}
