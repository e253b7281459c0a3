//! chartseq: static analysis, planning and deployment for Helm resource sequencing (HIP-0025).
//!
//! Data flows one way: [`source`] (files, `# Source:` mapping, spans) → [`parse`] (YAML trees
//! with byte spans) → [`model`] (charts, resources, typed annotations) → [`plan`] (pure install
//! order) → output. The binary in `src/main.rs` only parses arguments and dispatches to
//! [`cli`].

#[cfg(feature = "apply")]
pub mod apply;
pub mod cli;
pub mod commands;
pub mod diff;
pub mod duration;
pub mod error;
pub mod lint;
#[cfg(feature = "lsp")]
pub mod lsp;
pub mod migrate;
pub mod model;
pub mod parse;
pub mod plan;
pub mod readiness;
pub mod report;
pub mod rules;
pub mod safe;
pub mod source;
