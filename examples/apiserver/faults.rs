//! Faults a scenario injects (`faults:`): a share of non-watch requests answered with 500,
//! 503 or 429 and no effect, latency on every response; watch drops live in [`super::watch`].
//! The generator is seeded, so a run is repeatable.

use std::time::Duration;

use hyper::Response;
use serde_json::json;

use super::codec::status_error;
use super::{Body, Server, State};

/// Counts the request, then either answers it with an injected error or delays it as the
/// scenario asks; `None` lets it through.
pub(super) async fn before(server: &Server, watching: bool) -> Option<Response<Body>> {
    {
        let mut st = server.lock();
        st.counters.requests += 1;
        let rate = server.scenario.faults.error_rate;
        if !watching && rate > 0.0 {
            let roll = random(&mut st);
            if roll < rate {
                st.counters.injected_faults += 1;
                let pick = (roll / rate * 3.0) as u32;
                drop(st);
                let (code, reason) = match pick {
                    0 => (500, "InternalError"),
                    1 => (503, "ServiceUnavailable"),
                    _ => (429, "TooManyRequests"),
                };
                return Some(status_error(
                    code,
                    reason,
                    "injected fault",
                    json!({"retryAfterSeconds": 0}),
                ));
            }
        }
    }
    let slow = server.scenario.faults.slow_ms;
    if slow > 0 {
        tokio::time::sleep(Duration::from_millis(slow)).await;
    }
    None
}

/// xorshift64*: deterministic per seed, no dependency.
fn random(st: &mut State) -> f64 {
    let mut x = st.rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    st.rng = x;
    (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
}
