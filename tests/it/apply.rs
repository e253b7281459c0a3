//! `chartseq apply` and its test API server: the server's faithfulness to a real one (driven
//! by real kubectl), and the deployer run end to end against it.

#[path = "../../examples/apiserver/server.rs"]
#[expect(dead_code, reason = "not every helper is used by every test")]
mod apiserver;

mod deploy;
mod dialects;
mod e2e;
mod kubectl;
mod support;
