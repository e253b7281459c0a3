//! The deployer's input limits: durations bounded by Go's largest, object names and
//! namespaces checked as the API server checks them before any request, release records read
//! defensively (a corrupt or oversized one is skipped with a warning, never the end of a
//! listing) and decompressed within a bound.

use super::support::start;
use crate::{chartseq, run};

/// A value Go's `time.ParseDuration` refuses as too large: a flag error (exit 2) naming the
/// flag, never a panic, and nothing sent to the server.
#[test]
fn a_huge_timeout_is_refused_cleanly_by_every_command() {
    let env = start("");
    let shop = crate::fixture("apply/shop.yaml");
    let shop = shop.to_str().expect("a UTF-8 path");
    let huge = "99999999999999999999h";
    for flag in ["--timeout", "--readiness-timeout"] {
        for args in [
            vec!["apply", shop, "--release", "shop", flag, huge],
            vec!["rollback", "shop", "1", flag, huge],
            vec!["uninstall", "shop", flag, huge],
        ] {
            let (code, _, err) = env.run(&args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(
                err.contains(flag) && err.contains("largest duration"),
                "{args:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{args:?}: {err}");
        }
        let (code, _, err) = run(chartseq().args(["lint", shop, flag, huge]));
        assert_eq!(code, 2, "lint {flag}: {err}");
        assert!(
            err.contains(flag) && err.contains("largest duration"),
            "lint {flag}: {err}"
        );
    }
    assert!(env.requests().is_empty(), "{:#?}", env.requests());
}

/// Go's largest duration itself is accepted by every command; the bare number `45` is 45
/// seconds for each of them alike.
#[test]
fn durations_read_alike_in_apply_and_lint() {
    let shop = crate::fixture("apply/shop.yaml");
    let shop = shop.to_str().expect("a UTF-8 path");
    for value in ["2562047h47m16.854775807s", "45", "1h2m3.5s"] {
        let (code, _, err) = run(chartseq().args([
            "lint",
            shop,
            "--timeout",
            value,
            "--readiness-timeout",
            "1s",
        ]));
        assert!(code != 2, "lint --timeout {value}: {err}");
    }
    let env = start("");
    let (code, _, err) = env.apply("shop.yaml", &["--timeout", "45", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
}
