//! The migration report, one file per format: the diff and a readable proof ([`text`]), or
//! SPEC §6's JSON ([`json`]).

pub mod json;
pub mod text;
