//! What model calls cost, and the running totals an agent's budgets are checked against.

use bureau_core::trajectory::ModelUsage;

use super::config::{LlmLimits, Price};

/// The cost in US dollars of one call's tokens at `price`.
///
/// `input_tokens` includes the cached and cache-write tokens; each part is charged at its
/// own rate (the input rate when the price gives none).
pub fn cost_usd(usage: &ModelUsage, price: &Price) -> f64 {
    let cached = usage.cached_input_tokens.min(usage.input_tokens);
    let written = usage
        .cache_write_tokens
        .min(usage.input_tokens.saturating_sub(cached));
    let fresh = usage.input_tokens - cached - written;
    let per = |tokens: u64, rate: f64| tokens as f64 * rate / 1_000_000.0;
    per(fresh, price.input_per_mtok)
        + per(
            cached,
            price.cached_input_per_mtok.unwrap_or(price.input_per_mtok),
        )
        + per(
            written,
            price.cache_write_per_mtok.unwrap_or(price.input_per_mtok),
        )
        + per(usage.output_tokens, price.output_per_mtok)
}

/// Tokens and cost of a trial so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

impl Totals {
    pub fn add(&mut self, usage: &ModelUsage) {
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cost_usd += usage.cost_usd.unwrap_or(0.0);
    }

    /// The first budget of `limits` these totals have reached, as (limit name, detail).
    pub fn exhausted(&self, limits: &LlmLimits) -> Option<(&'static str, String)> {
        if let Some(max) = limits.max_input_tokens
            && self.input_tokens >= max
        {
            return Some((
                "max_input_tokens",
                format!(
                    "{} input tokens used of {max} allowed for the trial",
                    self.input_tokens
                ),
            ));
        }
        if let Some(max) = limits.max_output_tokens
            && self.output_tokens >= max
        {
            return Some((
                "max_output_tokens",
                format!(
                    "{} output tokens used of {max} allowed for the trial",
                    self.output_tokens
                ),
            ));
        }
        if let Some(max) = limits.max_cost_usd
            && self.cost_usd >= max
        {
            return Some((
                "max_cost_usd",
                format!(
                    "${:.4} spent of ${max} allowed for the trial",
                    self.cost_usd
                ),
            ));
        }
        None
    }

    /// Output tokens left in the budget, if there is one.
    pub fn output_left(&self, limits: &LlmLimits) -> Option<u64> {
        limits
            .max_output_tokens
            .map(|max| max.saturating_sub(self.output_tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price() -> Price {
        Price {
            input_per_mtok: 2.0,
            cached_input_per_mtok: Some(0.5),
            cache_write_per_mtok: Some(2.5),
            output_per_mtok: 8.0,
        }
    }

    #[test]
    fn each_kind_of_token_is_charged_at_its_rate() {
        let u = ModelUsage {
            input_tokens: 1_000_000,
            cached_input_tokens: 400_000,
            cache_write_tokens: 100_000,
            output_tokens: 250_000,
            cost_usd: None,
        };
        // 500k fresh × 2 + 400k × 0.5 + 100k × 2.5 + 250k × 8, per million
        let c = cost_usd(&u, &price());
        assert!((c - (1.0 + 0.2 + 0.25 + 2.0)).abs() < 1e-12, "{c}");
        let flat = Price {
            cached_input_per_mtok: None,
            cache_write_per_mtok: None,
            ..price()
        };
        assert!((cost_usd(&u, &flat) - (2.0 + 2.0)).abs() < 1e-12);
    }

    #[test]
    fn inconsistent_usage_never_underflows() {
        let u = ModelUsage {
            input_tokens: 10,
            cached_input_tokens: 50,
            cache_write_tokens: 50,
            output_tokens: 0,
            cost_usd: None,
        };
        assert!((cost_usd(&u, &price()) - 10.0 * 0.5 / 1e6).abs() < 1e-15);
    }

    #[test]
    fn budgets_are_reached_at_their_limit() {
        let limits = LlmLimits {
            max_input_tokens: Some(100),
            max_output_tokens: Some(10),
            max_cost_usd: Some(1.0),
        };
        let mut t = Totals::default();
        assert_eq!(t.exhausted(&limits), None);
        assert_eq!(t.output_left(&limits), Some(10));
        t.add(&ModelUsage {
            input_tokens: 50,
            output_tokens: 10,
            cost_usd: Some(0.25),
            ..ModelUsage::default()
        });
        let (limit, detail) = t.exhausted(&limits).unwrap();
        assert_eq!(limit, "max_output_tokens");
        assert!(detail.contains("10 output tokens used of 10"), "{detail}");
        assert_eq!(t.output_left(&limits), Some(0));
        t.cost_usd = 1.5;
        t.output_tokens = 0;
        assert_eq!(t.exhausted(&limits).unwrap().0, "max_cost_usd");
    }
}
