//! Commands that draw progress, run in a real pseudo-terminal against the real control plane:
//! they end, at any width, with and without colour, and what they print there still says what
//! happened.

use std::time::Duration;

use super::Ns;
use crate::fixture;
use crate::pty::{Screen, run_in_terminal};

/// A run that never ends is the failure this file is about: two minutes is far beyond the
/// couple of seconds these commands take, even on a loaded machine.
const BOUND: Duration = Duration::from_secs(120);

fn in_terminal(ns: &Ns, args: &[&str], columns: u16, no_color: bool) -> Screen {
    let mut cmd = ns.command(args);
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let screen = run_in_terminal(&mut cmd, columns, BOUND);
    assert!(
        screen.code.is_some(),
        "`chartseq {}` did not end within {BOUND:?} in a {columns}-column terminal; the screen showed:\n{}",
        args.join(" "),
        screen.bytes
    );
    screen
}

/// Install, upgrade, rollback and uninstall, each at a terminal, in the widths and colour
/// settings people have.
#[test]
fn apply_rollback_and_uninstall_end_in_a_terminal() {
    let shop = fixture("apply/shop.yaml");
    let shop = shop.to_str().expect("a UTF-8 path");
    let shop_v2 = fixture("apply/shop-v2.yaml");
    let shop_v2 = shop_v2.to_str().expect("a UTF-8 path");
    for (columns, no_color) in [(80, false), (20, false), (80, true)] {
        let Some(env) = Ns::new("terminal") else {
            return;
        };
        let install = ["apply", shop, "--release", "shop"];
        let screen = in_terminal(&env, &install, columns, no_color);
        assert_eq!(screen.code, Some(0), "{}", screen.bytes);
        assert!(
            screen.bytes.contains("revision 1") && screen.bytes.contains("deployed"),
            "{}",
            screen.bytes
        );
        if no_color {
            assert!(!screen.bytes.contains("\u{1b}[3"), "{}", screen.bytes);
        }
        let upgrade = ["apply", shop_v2, "--release", "shop"];
        let screen = in_terminal(&env, &upgrade, columns, no_color);
        assert_eq!(screen.code, Some(0), "{}", screen.bytes);
        let rollback = ["rollback", "shop", "1"];
        let screen = in_terminal(&env, &rollback, columns, no_color);
        assert_eq!(screen.code, Some(0), "{}", screen.bytes);
        let uninstall = ["uninstall", "shop"];
        let screen = in_terminal(&env, &uninstall, columns, no_color);
        assert_eq!(screen.code, Some(0), "{}", screen.bytes);
        assert!(
            env.get("deployment", "app").is_none(),
            "uninstall at a terminal left the release's objects"
        );
    }
}
