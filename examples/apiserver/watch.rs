//! Watches: a stream of events from a resourceVersion (410 Gone when it is too old), the
//! initial events of a streaming list, cut when the scenario drops watches.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Frame;
use hyper::{Response, StatusCode};
use serde_json::json;
use tokio::sync::{broadcast, mpsc};

use super::codec::status_error;
use super::discovery::Target;
use super::selector::Selector;
use super::storage::in_scope;
use super::{Body, Server};

/// A response body fed by a channel: the watch stream.
pub(super) struct ChanBody(mpsc::Receiver<Bytes>);

impl hyper::body::Body for ChanBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b))))
    }
}

pub(super) fn watch(
    server: &Arc<Server>,
    t: &Target,
    q: &BTreeMap<String, String>,
    seq: usize,
) -> Response<Body> {
    let sel = match Selector::from_query(q) {
        Ok(sel) => sel,
        Err(e) => return super::codec::bad_request(&e),
    };
    let since: Option<u64> = q
        .get("resourceVersion")
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0);
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_secs);
    let (tx, rx) = mpsc::channel::<Bytes>(1024);
    let mut backlog = Vec::new();
    let mut live;
    {
        let mut st = server.lock();
        st.counters.watches += 1;
        live = server.events.subscribe();
        match since {
            Some(rv) => {
                let oldest = st.history.first().map_or(0, |e| e.rv);
                if rv + 1 < oldest {
                    drop(st);
                    return status_error(
                        410,
                        "Expired",
                        &format!("too old resource version: {rv}"),
                        json!({}),
                    );
                }
                let start = st.history.partition_point(|e| e.rv <= rv);
                for e in &st.history[start..] {
                    if in_scope(t, &e.group, &e.plural, e.namespace.as_deref())
                        && sel.matches(&e.object)
                    {
                        backlog.push((Some(e.rv), json!({"type": e.kind, "object": e.object})));
                    }
                }
            }
            None => {
                for ((g, p, ns, _), s) in &st.objects {
                    if in_scope(t, g, p, ns.as_deref()) && sel.matches(&s.object) {
                        backlog.push((
                            object_rv(&s.object),
                            json!({"type": "ADDED", "object": s.object}),
                        ));
                    }
                }
            }
        }
        // A streaming list (client-go's WatchList) ends its initial events with this bookmark.
        if q.get("sendInitialEvents").is_some_and(|v| v == "true") {
            backlog.push((None, json!({"type": "BOOKMARK", "object": {"kind": t.ty.kind, "apiVersion": t.ty.api_version(),
                "metadata": {"resourceVersion": st.rv.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}}})));
        }
    }
    let drop_after = server
        .scenario
        .faults
        .watch_drop_ms
        .map(Duration::from_millis);
    let limit = match (timeout, drop_after) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let target = Target {
        ty: t.ty.clone(),
        namespace: t.namespace.clone(),
        name: None,
        subresource: None,
    };
    let server = server.clone();
    tokio::spawn(async move {
        let deadline = limit.map(|l| tokio::time::Instant::now() + l);
        for (rv, e) in backlog {
            if tx.send(Bytes::from(format!("{e}\n"))).await.is_err() {
                return;
            }
            if let Some(rv) = rv {
                server.update_request(seq, |r| r.last_event_rv = Some(rv));
            }
        }
        loop {
            let next = async {
                match deadline {
                    Some(d) => tokio::time::timeout_at(d, live.recv()).await.ok(),
                    None => Some(live.recv().await),
                }
            };
            match next.await {
                None => return,
                Some(Ok(e)) => {
                    if since.is_some_and(|rv| e.rv <= rv) {
                        continue;
                    }
                    if in_scope(&target, &e.group, &e.plural, e.namespace.as_deref())
                        && sel.matches(&e.object)
                    {
                        let line = json!({"type": e.kind, "object": e.object});
                        if tx.send(Bytes::from(format!("{line}\n"))).await.is_err() {
                            return;
                        }
                        server.update_request(seq, |r| r.last_event_rv = Some(e.rv));
                    }
                }
                Some(Err(broadcast::error::RecvError::Lagged(_))) => return,
                Some(Err(broadcast::error::RecvError::Closed)) => return,
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .header("transfer-encoding", "chunked")
        .body(ChanBody(rx).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

/// An object's resourceVersion as a number.
fn object_rv(object: &serde_json::Value) -> Option<u64> {
    object["metadata"]["resourceVersion"].as_str()?.parse().ok()
}
