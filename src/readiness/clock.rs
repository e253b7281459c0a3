//! Timestamps for the one kstatus rule that reads the clock (SPEC §3: a Pending Pod that
//! cannot be scheduled fails 15 s after its `creationTimestamp`).
//!
//! Kubernetes writes times as RFC 3339 (`metav1.Time`); they are read here the way Go's
//! `time.Parse(time.RFC3339, …)` reads them: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of a
//! second, then `Z` or a `±HH:MM` offset. The engine never asks the system for the time: the
//! commands pass "now" in, so a judgement is a pure function of the object and that instant.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses an RFC 3339 timestamp; `None` when it is not one (Go's parse error).
#[must_use]
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    let hour = digits(&b[11..13])?;
    let minute = digits(&b[14..16])?;
    let second = digits(&b[17..19])?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut rest = &b[19..];
    let mut nanos = 0u32;
    if let Some((b'.' | b',', fraction)) = rest.split_first() {
        let len = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if len == 0 {
            return None;
        }
        // Digits past the ninth are below a nanosecond: Go drops them too.
        for (i, &c) in fraction[..len].iter().enumerate().take(9) {
            nanos += u32::from(c - b'0') * 10u32.pow(8 - i as u32);
        }
        rest = &fraction[len..];
    }
    let offset = match rest {
        [b'Z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (h, m) = (digits(&[*h1, *h2])?, digits(&[*m1, *m2])?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = h * 60 + m;
            if *sign == b'-' { -minutes } else { minutes }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset * 60;
    let whole = Duration::from_secs(seconds.unsigned_abs());
    if seconds >= 0 {
        UNIX_EPOCH.checked_add(whole + Duration::from_nanos(u64::from(nanos)))
    } else {
        UNIX_EPOCH
            .checked_sub(whole)?
            .checked_add(Duration::from_nanos(u64::from(nanos)))
    }
}

fn digits(bytes: &[u8]) -> Option<i64> {
    bytes.iter().try_fold(0i64, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
    })
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(text: &str) -> Option<i64> {
        parse_rfc3339(text).map(|t| match t.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
        })
    }

    #[test]
    fn reads_what_kubernetes_writes() {
        assert_eq!(secs("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(secs("2024-02-29T12:00:00Z"), Some(1_709_208_000));
        assert_eq!(secs("2024-02-29T13:30:00+01:30"), Some(1_709_208_000));
        assert_eq!(secs("2024-02-29T10:00:00-02:00"), Some(1_709_208_000));
        assert_eq!(secs("1969-12-31T23:59:59Z"), Some(-1));
        let fraction = parse_rfc3339("1970-01-01T00:00:01.250Z")
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok());
        assert_eq!(fraction, Some(Duration::from_millis(1250)));
    }

    #[test]
    fn refuses_what_go_refuses() {
        for bad in [
            "",
            "2024-02-30T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:60:00Z",
            "2024-01-01 00:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00z",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00+0100",
            "24-01-01T00:00:00Z",
            "2024-01-01T00:00:00Zjunk",
        ] {
            assert_eq!(secs(bad), None, "{bad}");
        }
    }
}
