//! Who may talk to the server. The API has no authentication, so a web page the person visits
//! must not be able to drive it: cross-origin requests are refused (403), request bodies must be
//! `application/json` (415, which a page cannot send without a CORS preflight this server never
//! answers), and a `Host` header naming another machine is refused (403), which defeats DNS
//! rebinding. Oversized requests answer JSON like every other error (413, 414): a declared
//! `Content-Length` over the limit before any of the body is read. A body must arrive within
//! the read timeout (else 408), so a slow client cannot hold a request open.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// The longest request target (path and query) served; the API's longest is far shorter.
pub const MAX_URI_BYTES: usize = 2048;

/// The host names and origins the server answers.
#[derive(Clone, Debug)]
pub struct Access {
    /// Host names (no port) a `Host` header may name.
    hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) allowed besides the page's own.
    origins: Vec<String>,
}

impl Access {
    /// Loopback names, the bind address's IP, and the extra `hosts` (names, or `name:port`
    /// whose port is ignored) and `origins` given on the command line.
    pub fn new(bind: Option<SocketAddr>, hosts: &[String], origins: &[String]) -> Access {
        let mut all: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .map(String::from)
            .to_vec();
        if let Some(addr) = bind.filter(|a| !a.ip().is_unspecified()) {
            all.push(host_name(&SocketAddr::new(addr.ip(), 0).to_string()).to_string());
        }
        all.extend(hosts.iter().map(|h| host_name(h).to_ascii_lowercase()));
        Access {
            hosts: all,
            origins: origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    /// Why a request with these headers is refused, if it is.
    fn refusal(&self, headers: &HeaderMap) -> Option<ApiError> {
        let host = headers.get(header::HOST).map(|h| h.to_str().unwrap_or(""));
        if let Some(host) = host {
            if !self.hosts.contains(&host_name(host).to_ascii_lowercase()) {
                return Some(ApiError::new(
                    StatusCode::FORBIDDEN,
                    format!(
                        "Host `{}` is not this server's (see bao serve --allow-host)",
                        prefix(host)
                    ),
                ));
            }
        }
        let origin = headers.get(header::ORIGIN)?;
        let origin = origin.to_str().unwrap_or("").to_ascii_lowercase();
        let same = host.is_some_and(|h| origin == format!("http://{}", h.to_ascii_lowercase()));
        if same || self.origins.contains(&origin) {
            return None;
        }
        Some(ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "requests from origin `{}` are refused (see bao serve --allow-origin)",
                prefix(&origin)
            ),
        ))
    }
}

/// Checks an origin given to `--allow-origin`: `http://` or `https://`, a host, an optional
/// port, nothing after (as a browser sends it in an `Origin` header).
pub fn check_origin(text: &str) -> anyhow::Result<()> {
    let shown = crate::util::quote::quote(text);
    let url = url::Url::parse(text).map_err(|e| {
        anyhow::anyhow!("--allow-origin `{shown}` is not an origin such as http://name:3000 ({e})")
    })?;
    let origin = url.origin().ascii_serialization();
    anyhow::ensure!(
        matches!(url.scheme(), "http" | "https")
            && url.host().is_some()
            && origin.eq_ignore_ascii_case(text.trim_end_matches('/')),
        "--allow-origin `{shown}` is not an origin such as http://name:3000 (a scheme, a host \
         and a port only, as a browser sends it: here `{}`)",
        crate::util::quote::quote(&origin)
    );
    Ok(())
}

/// What the gate in front of the routes needs: who may call, and how long a body may take.
#[derive(Clone, Debug)]
pub struct Gate {
    pub access: Access,
    pub read_timeout: Duration,
}

/// Loopback names only: what a server bound to localhost answers.
impl Default for Access {
    fn default() -> Access {
        Access::new(None, &[], &[])
    }
}

/// The host part of `host[:port]` (an IPv6 literal keeps its brackets).
fn host_name(host: &str) -> &str {
    match host.rfind(':') {
        Some(i) if !host[i..].contains(']') => &host[..i],
        _ => host,
    }
}

/// A header quoted in an error, cut short.
fn prefix(text: &str) -> String {
    crate::util::quote::quote(text)
}

/// The declared `Content-Length`, if any and readable.
fn declared_length(req: &Request) -> Option<u64> {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
}

/// The whole body, at most `limit` bytes of it.
async fn read_body(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    use futures::StreamExt;
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::bad(format!("cannot read the request body: {e}")))?;
        if bytes.len() + chunk.len() > limit {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes.into())
}

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request body is over {} bytes",
            super::error::MAX_BODY_BYTES
        ),
    )
}

/// True when the request carries a body: a declared length over 0, or (no length declared) a
/// body that is not known to be empty, as a chunked one.
fn has_body(req: &Request) -> bool {
    use axum::body::HttpBody;
    match declared_length(req) {
        Some(n) => n > 0,
        None => req.body().size_hint().upper() != Some(0),
    }
}

/// True when the content type is JSON (`application/json`, parameters allowed).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// The middleware: refuses what [`Access`] refuses, long URIs, non-JSON bodies and declared
/// bodies over the limit, reads the body within the read timeout, and turns the body limit's
/// plain-text 413 into JSON.
pub async fn guard(State(gate): State<Gate>, req: Request, next: Next) -> Response {
    if let Some(refusal) = gate.access.refusal(req.headers()) {
        return refusal.into_response();
    }
    let uri_len = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if uri_len > MAX_URI_BYTES {
        return ApiError::new(
            StatusCode::URI_TOO_LONG,
            format!("the request target is {uri_len} bytes; at most {MAX_URI_BYTES}"),
        )
        .into_response();
    }
    let req = if has_body(&req) {
        if !is_json(req.headers()) {
            return ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "a request body must be sent as Content-Type: application/json",
            )
            .into_response();
        }
        let limit = super::error::MAX_BODY_BYTES;
        if declared_length(&req).is_some_and(|n| n > limit as u64) {
            return too_large().into_response();
        }
        let (parts, body) = req.into_parts();
        match tokio::time::timeout(gate.read_timeout, read_body(body, limit)).await {
            Ok(Ok(bytes)) => Request::from_parts(parts, Body::from(bytes)),
            Ok(Err(e)) => return e.into_response(),
            Err(_) => {
                return ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request body did not arrive within {} s",
                        gate.read_timeout.as_secs_f64()
                    ),
                )
                .into_response()
            }
        }
    } else {
        req
    };
    let res = next.run(req).await;
    if res.status() == StatusCode::PAYLOAD_TOO_LARGE && !is_json(res.headers()) {
        return too_large().into_response();
    }
    res
}
