//! One model call over HTTP with retries: exponential backoff with jitter, `Retry-After`
//! honoured, a bounded budget (count and total wait), and the turn's wall time respected.

use std::time::{Duration, Instant};

use bureau_core::trajectory::ModelRetry;
use reqwest::StatusCode;
use reqwest::blocking::Client;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::config::RetrySettings;

/// How one model call ended.
#[derive(Debug)]
pub(crate) enum CallError {
    /// Not worth retrying (a 4xx other than 408/409/429): the API's message.
    Fatal(String),
    /// Every allowed attempt failed, or the next wait would break the budget.
    Exhausted(String),
    /// The turn's wall time ran out while the model was answering.
    OutOfTime,
}

/// A successful call: the response JSON and what `parse` made of it.
pub(crate) struct Answer<T> {
    pub body: Value,
    pub parsed: T,
}

/// One failed attempt, and whether the server asked for a wait.
struct Failure {
    reason: String,
    retry_after: Option<Duration>,
}

/// A request to send: the URL, its headers (the API key among them), the JSON body as text
/// ([`json_bytes`]: serialised once, not a `Value` tree held while the model answers).
pub(crate) struct Request<'a> {
    pub url: &'a str,
    pub headers: &'a [(&'static str, String)],
    pub body: &'a [u8],
    /// Removed from any text kept from a response (an API may echo the key in an error).
    pub secret: Option<&'a str>,
}

/// `body` as JSON text. A `Value` always serialises (its keys are strings), so the empty
/// fallback is never taken.
pub(crate) fn json_bytes(body: &Value) -> Vec<u8> {
    serde_json::to_vec(body).unwrap_or_default()
}

/// Send `req` until it succeeds and `parse` accepts the body, retrying as `policy` allows.
/// The retries made are appended to `retries`, each with its reason and the wait after it.
pub(crate) fn call<T>(
    client: &Client,
    req: &Request<'_>,
    policy: &RetrySettings,
    deadline: Instant,
    retries: &mut Vec<ModelRetry>,
    parse: impl Fn(&Value) -> Result<T, String>,
) -> Result<Answer<T>, CallError> {
    let mut waited = Duration::ZERO;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(CallError::OutOfTime);
        }
        let bounded_by_turn = left < policy.request_timeout;
        let timeout = policy.request_timeout.min(left);
        // The model answering holds no CPU permit of the run (`bureau_core::cpu`).
        let failure = match bureau_core::cpu::waiting(|| attempt(client, req, timeout, &parse)) {
            Ok(answer) => return Ok(answer),
            Err(Attempt::Fatal(message)) => return Err(CallError::Fatal(message)),
            Err(Attempt::TimedOut) if bounded_by_turn => return Err(CallError::OutOfTime),
            Err(Attempt::TimedOut) => Failure {
                reason: format!(
                    "no complete answer within {} s",
                    policy.request_timeout.as_secs_f64()
                ),
                retry_after: None,
            },
            Err(Attempt::Retry(f)) => f,
        };
        let n = retries.len() as u32;
        if n >= policy.max_retries {
            retries.push(ModelRetry {
                reason: failure.reason.clone(),
                wait_ms: 0,
            });
            return Err(CallError::Exhausted(format!(
                "{} (gave up after {} attempts, the retry budget's max_retries = {})",
                failure.reason,
                n + 1,
                policy.max_retries
            )));
        }
        let wait = failure
            .retry_after
            .unwrap_or_else(|| backoff(policy, n, fastrand::f64()));
        if waited + wait > policy.max_wait {
            retries.push(ModelRetry {
                reason: failure.reason.clone(),
                wait_ms: 0,
            });
            return Err(CallError::Exhausted(format!(
                "{} (gave up after {} attempts: waiting {:.1} s more would pass the retry budget's max_wait_seconds = {})",
                failure.reason,
                n + 1,
                wait.as_secs_f64(),
                policy.max_wait.as_secs_f64()
            )));
        }
        if wait >= deadline.saturating_duration_since(Instant::now()) {
            retries.push(ModelRetry {
                reason: failure.reason.clone(),
                wait_ms: 0,
            });
            return Err(CallError::Exhausted(format!(
                "{} (gave up after {} attempts: the turn's wall time ends before the next one could start)",
                failure.reason,
                n + 1
            )));
        }
        retries.push(ModelRetry {
            reason: failure.reason,
            wait_ms: wait.as_millis() as u64,
        });
        bureau_core::cpu::waiting(|| std::thread::sleep(wait));
        waited += wait;
    }
}

enum Attempt {
    Fatal(String),
    TimedOut,
    Retry(Failure),
}

fn attempt<T>(
    client: &Client,
    req: &Request<'_>,
    timeout: Duration,
    parse: &impl Fn(&Value) -> Result<T, String>,
) -> Result<Answer<T>, Attempt> {
    let mut builder = client
        .post(req.url)
        .timeout(timeout)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(req.body.to_vec());
    for (name, value) in req.headers {
        builder = builder.header(*name, value);
    }
    let response = builder
        .send()
        .map_err(|e| transport_failure(&e, req.secret))?;
    let status = response.status();
    let retry_after = retry_after(response.headers(), chrono::Utc::now());
    let text = response
        .text()
        .map_err(|e| transport_failure(&e, req.secret))?;
    let text = redact(text, req.secret);
    if status.is_success() {
        let body: Value = serde_json::from_str(&text).map_err(|e| {
            Attempt::Retry(Failure {
                reason: format!(
                    "{status}, but the body is not JSON ({e}); it may have been cut off"
                ),
                retry_after: None,
            })
        })?;
        return match parse(&body) {
            Ok(parsed) => Ok(Answer { body, parsed }),
            Err(message) => Err(Attempt::Retry(Failure {
                reason: format!("{status}, but {message}"),
                retry_after: None,
            })),
        };
    }
    let reason = format!("{status}: {}", api_message(&text));
    if retryable(status) {
        Err(Attempt::Retry(Failure {
            reason,
            retry_after,
        }))
    } else {
        Err(Attempt::Fatal(reason))
    }
}

/// 408, 409, 429 and every 5xx are worth another attempt.
fn retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

fn transport_failure(e: &reqwest::Error, secret: Option<&str>) -> Attempt {
    if e.is_timeout() {
        return Attempt::TimedOut;
    }
    // The whole chain: reqwest's own message is only "error sending request".
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason.push_str(": ");
        reason.push_str(&s.to_string());
        source = s.source();
    }
    Attempt::Retry(Failure {
        reason: redact(reason, secret),
        retry_after: None,
    })
}

/// The message of an API error body (`{"error": {"message": ...}}` in both wire formats), or
/// the start of the body.
pub(crate) fn api_message(text: &str) -> String {
    let from_json = serde_json::from_str::<Value>(text).ok().and_then(|v| {
        let e = v.get("error")?;
        e.get("message")
            .and_then(Value::as_str)
            .or_else(|| e.as_str())
            .map(str::to_string)
    });
    match from_json {
        Some(m) => m,
        None if text.trim().is_empty() => "(empty body)".into(),
        None => {
            let t = text.trim();
            match t.char_indices().nth(300) {
                Some((i, _)) => format!("{}…", &t[..i]),
                None => t.to_string(),
            }
        }
    }
}

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds or
/// as an HTTP date (RFC 9110), relative to `now`. A date in the past means no wait.
pub(crate) fn retry_after(
    headers: &HeaderMap,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let secs = (at.with_timezone(&chrono::Utc) - now)
        .num_milliseconds()
        .max(0);
    Some(Duration::from_millis(secs as u64))
}

/// The backoff before retry `n` (0-based): `initial · 2ⁿ`, capped at `max_backoff`, scaled by
/// a jitter factor in [0.5, 1) drawn from `unit` in [0, 1).
pub(crate) fn backoff(policy: &RetrySettings, n: u32, unit: f64) -> Duration {
    let base = policy
        .initial_backoff
        .saturating_mul(2u32.saturating_pow(n.min(30)))
        .min(policy.max_backoff);
    base.mul_f64(0.5 + 0.5 * unit.clamp(0.0, 1.0))
}

/// Keys shorter than this are never redacted: a one-letter "key" would turn every `x` of a
/// recorded response into `[redacted]`. Such keys are not secrets (test servers use them);
/// the agents file warns about them (`llm/config.rs`).
pub(crate) const MIN_REDACTED_KEY: usize = 8;

/// `text` with every whole-token occurrence of `secret` replaced by `[redacted]`: one not
/// preceded or followed by a letter, digit, `-` or `_` (key alphabets), so a key that happens
/// to be part of a longer word is left alone. Secrets shorter than [`MIN_REDACTED_KEY`] are
/// not redacted.
pub(crate) fn redact(text: String, secret: Option<&str>) -> String {
    let Some(secret) = secret.filter(|s| s.len() >= MIN_REDACTED_KEY) else {
        return text;
    };
    if !text.contains(secret) {
        return text;
    }
    let key_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    let mut before: Option<char> = None;
    while let Some(i) = rest.find(secret) {
        let head = &rest[..i];
        let prev = head.chars().next_back().or(before);
        let tail = &rest[i + secret.len()..];
        let whole = !prev.is_some_and(key_char) && !tail.chars().next().is_some_and(key_char);
        out.push_str(head);
        out.push_str(if whole { "[redacted]" } else { secret });
        before = secret.chars().next_back();
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_reads_seconds_dates_and_milliseconds() {
        let now = chrono::DateTime::parse_from_rfc3339("2015-10-21T07:27:30Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "3")]), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]),
                now
            ),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Wed, 21 Oct 2015 07:00:00 GMT")]),
                now
            ),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "3"), ("retry-after-ms", "250")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")]), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter_in_the_upper_half() {
        let p = RetrySettings {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(500),
            ..RetrySettings::default()
        };
        assert_eq!(backoff(&p, 0, 0.0), Duration::from_millis(50));
        let top = backoff(&p, 0, 0.999_999);
        assert!(top > Duration::from_micros(99_990) && top < Duration::from_millis(100));
        assert_eq!(backoff(&p, 2, 0.0), Duration::from_millis(200));
        assert_eq!(backoff(&p, 3, 0.0), Duration::from_millis(250));
        assert_eq!(backoff(&p, 40, 0.0), Duration::from_millis(250));
    }

    #[test]
    fn only_transient_statuses_are_retried() {
        for s in [408, 409, 429, 500, 502, 503, 529] {
            assert!(retryable(StatusCode::from_u16(s).unwrap()), "{s}");
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(!retryable(StatusCode::from_u16(s).unwrap()), "{s}");
        }
    }

    #[test]
    fn api_errors_are_read_from_either_wire_format() {
        assert_eq!(
            api_message(r#"{"error":{"message":"Rate limit reached","type":"rate_limit"}}"#),
            "Rate limit reached"
        );
        assert_eq!(
            api_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(api_message(r#"{"error":"bad model"}"#), "bad model");
        assert_eq!(api_message("  "), "(empty body)");
        assert_eq!(api_message(&"x".repeat(400)).chars().count(), 301);
    }

    #[test]
    fn secrets_are_redacted() {
        assert_eq!(
            redact("key sk-live-123456 is wrong".into(), Some("sk-live-123456")),
            "key [redacted] is wrong"
        );
        assert_eq!(
            redact(
                r#"{"auth":"Bearer sk-live-123456","k":"sk-live-123456"}"#.into(),
                Some("sk-live-123456")
            ),
            r#"{"auth":"Bearer [redacted]","k":"[redacted]"}"#
        );
        assert_eq!(redact("nothing".into(), Some("")), "nothing");
        assert_eq!(redact("nothing".into(), None), "nothing");
    }

    #[test]
    fn short_keys_and_keys_inside_words_are_left_alone() {
        // OPENAI_API_KEY=x made every recorded response read `"inde[redacted]":0`.
        let body = r#"{"index":0,"text":"xx"}"#;
        assert_eq!(redact(body.into(), Some("x")), body);
        assert_eq!(redact(body.into(), Some("abcdefg")), body);
        assert_eq!(
            redact(
                "prefix-abcdefgh abcdefgh abcdefghi".into(),
                Some("abcdefgh")
            ),
            "prefix-abcdefgh [redacted] abcdefghi"
        );
    }
}
