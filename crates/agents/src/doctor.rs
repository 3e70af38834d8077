//! `bureau agents check`: what an agent needs to work, checked one by one before any trial
//! (program installed, its version, its model endpoint reachable), each with the fix.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// One checked thing about an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked (`program`, `version`, `model endpoint`, ...).
    pub what: String,
    /// `Some(true)`: fine; `Some(false)`: the agent cannot work this way; `None`: not
    /// checkable here (said in `detail`).
    pub ok: Option<bool>,
    /// What was found, or what is wrong and the fix.
    pub detail: String,
}

impl Check {
    pub fn ok(what: &str, detail: impl Into<String>) -> Check {
        Check {
            what: what.into(),
            ok: Some(true),
            detail: detail.into(),
        }
    }
    pub fn failed(what: &str, detail: impl Into<String>) -> Check {
        Check {
            what: what.into(),
            ok: Some(false),
            detail: detail.into(),
        }
    }
    pub fn unchecked(what: &str, detail: impl Into<String>) -> Check {
        Check {
            what: what.into(),
            ok: None,
            detail: detail.into(),
        }
    }
}

/// How long a connection to a model endpoint may take.
const CONNECT: Duration = Duration::from_secs(5);

/// Whether the model endpoint at `url` accepts a TCP connection (nothing is sent: no key,
/// no request, no cost). `what_for` names where the URL came from, for the message.
pub fn endpoint(url: &str, what_for: &str) -> Check {
    let parsed = match reqwest::Url::parse(url) {
        Ok(u) => u,
        Err(e) => {
            return Check::failed(
                "model endpoint",
                format!(
                    "{what_for} `{url}` is not a URL ({e}) — give http(s)://host[:port][/path]"
                ),
            );
        }
    };
    let Some(host) = parsed.host_str().map(str::to_string) else {
        return Check::failed(
            "model endpoint",
            format!("{what_for} `{url}` names no host"),
        );
    };
    let port = parsed.port_or_known_default().unwrap_or(443);
    let shown = format!("{}://{host}:{port}", parsed.scheme());
    let addrs: Vec<_> = match (host.as_str(), port).to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => {
            return Check::failed(
                "model endpoint",
                format!(
                    "{what_for} {shown}: the host does not resolve ({e}) — check the URL or the network"
                ),
            );
        }
    };
    for addr in &addrs {
        if TcpStream::connect_timeout(addr, CONNECT).is_ok() {
            return Check::ok(
                "model endpoint",
                format!("{what_for} {shown} accepts connections"),
            );
        }
    }
    Check::failed(
        "model endpoint",
        format!(
            "{what_for} {shown} refuses connections or does not answer within {} s — start the model server, or fix the URL",
            CONNECT.as_secs()
        ),
    )
}
