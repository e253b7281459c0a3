//! Readiness (SPEC §3): when a released resource counts as ready, failed or still in progress.
//!
//! One engine serves lint (which validates expressions with [`expr::parse`]) and `apply`
//! (which evaluates the very same parsed [`expr::Expression`]s): the kubectl `JSONPath` dialect
//! in [`jsonpath`], HIP-0025 expressions in [`expr`]. No I/O happens here.

pub mod expr;
mod gofmt;
pub mod jsonpath;
