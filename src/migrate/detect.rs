//! `--from auto`: which tool's ordering annotations a chart carries.
//!
//! The shared detection of `--dialect auto` ([`crate::plan::detect`]) decides; HIP-0025's own
//! keys are left out, since HIP-0025 is what the chart is migrated to (a migrated chart
//! carries them beside the old tool's).

use crate::error::{Error, Result};
use crate::model::Model;
use crate::plan::Dialect;

/// The one tool whose ordering annotations the chart carries; `None` when it carries none.
/// Several tools at once is an error: the user must pick one with `--from`.
pub fn detect(model: &Model) -> Result<Option<Dialect>> {
    let mut found: Vec<Dialect> = Vec::new();
    for d in crate::plan::detect::detect(model) {
        if d.dialect != Dialect::Hip && !found.contains(&d.dialect) {
            found.push(d.dialect);
        }
    }
    match found.as_slice() {
        [] => Ok(None),
        [d] => Ok(Some(*d)),
        several => Err(Error::usage(format!(
            "the chart carries ordering annotations of several tools ({}): pick one with --from",
            several
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
