//! Recorded times read by hand: a HAR's ISO 8601 `startedDateTime` and a
//! log's `[10/Oct/2000:13:55:36 -0700]`, both to Unix milliseconds. Small
//! fixed formats: a date crate would be a dependency for two parsers.

/// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn num(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

/// Unix ms of a civil time and a `+hhmm` / `+hh:mm` / `Z` offset.
fn unix_ms(date: (i64, i64, i64), hms: (i64, i64, i64), frac_ms: i64, offset: &str) -> Option<u64> {
    let (y, mo, d) = date;
    let (h, mi, s) = hms;
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let off_s = match offset {
        "Z" | "" => 0,
        o => {
            let sign = match o.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let digits: String = o[1..].chars().filter(|c| *c != ':').collect();
            if digits.len() != 4 {
                return None;
            }
            sign * (num(&digits[..2])? * 3600 + num(&digits[2..])? * 60)
        }
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - off_s;
    u64::try_from(secs * 1000 + frac_ms).ok()
}

/// `2026-11-28T20:14:08.123Z` or `...+01:00`.
pub fn iso8601_ms(s: &str) -> Option<u64> {
    let (date, time) = s.split_once('T')?;
    let mut d = date.split('-');
    let date = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    let split = time.find(['Z', '+', '-']).unwrap_or(time.len());
    let (clock, offset) = time.split_at(split);
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut t = hms.split(':');
    let hms = (num(t.next()?)?, num(t.next()?)?, num(t.next()?)?);
    let frac_ms = num(&format!("{:0<3}", &frac[..frac.len().min(3)]))?;
    unix_ms(date, hms, frac_ms, offset)
}

/// `10/Oct/2000:13:55:36 -0700` (an access log's `$time_local`).
pub fn clf_ms(s: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (stamp, offset) = s.split_once(' ')?;
    let mut p = stamp.splitn(4, [':', '/']);
    let (d, mo, y) = (p.next()?, p.next()?, p.next()?);
    let mo = MONTHS.iter().position(|m| *m == mo)? as i64 + 1;
    let mut t = p.next()?.split(':');
    let hms = (num(t.next()?)?, num(t.next()?)?, num(t.next()?)?);
    unix_ms((num(y)?, mo, num(d)?), hms, 0, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_read_to_the_same_instant() {
        let iso = iso8601_ms("2000-10-10T20:55:36.250Z").unwrap();
        assert_eq!(iso, 971_211_336_250);
        assert_eq!(
            clf_ms("10/Oct/2000:13:55:36 -0700").unwrap(),
            971_211_336_000
        );
        assert_eq!(iso8601_ms("2000-10-10T22:55:36.25+02:00").unwrap(), iso);
        assert!(clf_ms("10/Foo/2000:13:55:36 -0700").is_none());
        assert!(iso8601_ms("yesterday").is_none());
    }
}
