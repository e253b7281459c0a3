//! Durations as Helm's flags take them (Go's `time.ParseDuration`) and as Go prints them:
//! the one parser behind every `--timeout` and `--readiness-timeout`.
//!
//! Syntax: one or more `<number><unit>` terms (`1h2m3.5s`, `300ms`, `.5h`), units `ns`, `us`
//! (`µs`, `μs`), `ms`, `s`, `m`, `h`; `0` alone; a leading `+` is allowed. A timeout is never
//! negative, so a leading `-` is refused. Go's `time.Duration` is a signed 64-bit count of
//! nanoseconds: anything above [`MAX`] (about 2562047h) is refused, as Go refuses it, instead
//! of overflowing. One convenience beyond Go: a bare whole number (`45`) is seconds, as
//! `chartseq lint` has always read it (Go would ask for a unit; nothing else could be meant).

use std::time::Duration;

/// Go's largest duration: `math.MaxInt64` nanoseconds (2562047h47m16.854775807s).
pub const MAX: Duration = Duration::new(9_223_372_036, 854_775_807);

const MAX_NANOS: u128 = 9_223_372_036_854_775_807;

/// Parses a duration (see the module documentation); the message says what is wrong and what
/// a valid value looks like (clap prefixes it with the flag's name).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = |why: &str| {
        format!(
            "invalid duration {text:?}: {why} (use a number and a unit: h, m, s, ms, us or ns, e.g. 5m, 90s or 1m30s)"
        )
    };
    let mut rest = text.trim();
    if let Some(r) = rest.strip_prefix('+') {
        rest = r;
    } else if rest.starts_with('-') {
        return Err(bad("a timeout cannot be negative"));
    }
    if rest.is_empty() {
        return Err(bad("empty"));
    }
    if rest.bytes().all(|b| b.is_ascii_digit()) {
        // A bare whole number: seconds (`0` is zero in Go too).
        return rest
            .parse::<u64>()
            .ok()
            .map(Duration::from_secs)
            .filter(|d| *d <= MAX)
            .ok_or_else(|| bad(&too_large()));
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let whole_len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (whole, after) = rest.split_at(whole_len);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(f) => {
                let len = f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len());
                f.split_at(len)
            }
            None => ("", after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(bad("expected a number"));
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let nanos_per: u128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(bad("missing unit")),
            other => return Err(bad(&format!("unknown unit {other:?}"))),
        };
        // Whole part, exactly; refused as soon as it passes Go's limit.
        let mut value: u128 = 0;
        for d in whole.bytes() {
            value = value * 10 + u128::from(d - b'0');
            if value * nanos_per > MAX_NANOS {
                return Err(bad(&too_large()));
            }
        }
        total += value * nanos_per;
        // Fraction, truncated to the nanosecond as Go truncates it; digits beyond 18 cannot
        // change a nanosecond count.
        let digits = &fraction[..fraction.len().min(18)];
        if !digits.is_empty() {
            let scale = 10u128.pow(u32::try_from(digits.len()).unwrap_or(18));
            let f: u128 = digits.parse().unwrap_or(0);
            total += f * nanos_per / scale;
        }
        if total > MAX_NANOS {
            return Err(bad(&too_large()));
        }
        rest = after;
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| bad(&too_large()))?;
    let nanos = u32::try_from(total % 1_000_000_000).unwrap_or(0);
    Ok(Duration::new(secs, nanos))
}

fn too_large() -> String {
    format!("more than the largest duration, {}", go_duration(MAX))
}

/// A duration as Go prints it (`5m0s`, `1m0s`, `30s`, `1h0m0s`, `1.5s`), to the millisecond.
#[must_use]
pub fn go_duration(d: Duration) -> String {
    let s = d.as_secs();
    let ms = d.subsec_millis();
    let frac = if ms == 0 {
        String::new()
    } else {
        format!(".{ms:03}").trim_end_matches('0').to_owned()
    };
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, sec) => format!("{sec}{frac}s"),
        (0, m, sec) => format!("{m}m{sec}{frac}s"),
        (h, m, sec) => format!("{h}h{m}m{sec}{frac}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Duration {
        parse_duration(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn go_syntax_parses_as_go_parses_it() {
        assert_eq!(ok("5m"), Duration::from_secs(300));
        assert_eq!(ok("1m30s"), Duration::from_secs(90));
        assert_eq!(ok("2h"), Duration::from_secs(7200));
        assert_eq!(ok("250ms"), Duration::from_millis(250));
        assert_eq!(ok("1h2m3.5s"), Duration::from_millis(3_723_500));
        assert_eq!(ok(".5h"), Duration::from_secs(1800));
        assert_eq!(ok("1.s"), Duration::from_secs(1));
        assert_eq!(ok("+90s"), Duration::from_secs(90));
        assert_eq!(ok("1.0000000009s"), Duration::new(1, 0));
        assert_eq!(ok("10us"), Duration::from_micros(10));
        assert_eq!(ok("10\u{b5}s"), Duration::from_micros(10));
        assert_eq!(ok("10\u{3bc}s"), Duration::from_micros(10));
        assert_eq!(ok("7ns"), Duration::from_nanos(7));
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("0s"), Duration::ZERO);
    }

    /// What helm's `--timeout` takes, read the same by every duration flag of every command.
    #[test]
    fn every_form_helm_takes_reads_the_same_for_every_flag() {
        for (text, expected) in [
            ("300ms", Duration::from_millis(300)),
            ("5m", Duration::from_secs(300)),
            ("1h2m3s", Duration::from_secs(3723)),
            ("1.5s", Duration::from_millis(1500)),
            ("0", Duration::ZERO),
            ("45", Duration::from_secs(45)),
            ("90s", Duration::from_secs(90)),
            ("2h45m", Duration::from_secs(9900)),
        ] {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn a_bare_number_is_seconds_as_lint_always_read_it() {
        assert_eq!(ok("45"), Duration::from_secs(45));
        assert_eq!(ok("5"), Duration::from_secs(5));
    }

    #[test]
    fn malformed_values_are_refused_with_the_reason() {
        for (text, why) in [
            ("", "empty"),
            ("soon", "expected a number"),
            ("5x", "unknown unit"),
            ("5m3", "missing unit"),
            (".s", "expected a number"),
            ("1.5", "missing unit"),
            ("-5m", "negative"),
            ("5 m", "unknown unit"),
        ] {
            let e = parse_duration(text).expect_err(text);
            assert!(e.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn values_beyond_gos_largest_duration_are_refused_not_overflowed() {
        assert_eq!(ok("2562047h47m16.854775807s"), MAX);
        assert_eq!(ok("9223372036854775807ns"), MAX);
        for text in [
            "99999999999999999999h",
            "2562048h",
            "2562047h47m16.854775808s",
            "9223372036854775808ns",
            "99999999999999999999999999999999999999999s",
            "9223372036854775808",
            "2562047h2562047h",
        ] {
            let e = parse_duration(text).expect_err(text);
            assert!(e.contains("largest duration"), "{text}: {e}");
        }
    }

    #[test]
    fn durations_print_as_go_prints_them() {
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::from_secs(60)), "1m0s");
        assert_eq!(go_duration(Duration::from_secs(3600)), "1h0m0s");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(go_duration(MAX), "2562047h47m16.854s");
    }
}
