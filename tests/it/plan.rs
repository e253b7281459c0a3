//! Plan and template end to end.
