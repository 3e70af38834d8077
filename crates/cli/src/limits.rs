//! `--agent-concurrency` and `--rpm` of `bureau run` and `bureau submit`: per-agent model API
//! limits for the whole run (bureau_run::budget).

/// `--agent-concurrency` / `--rpm`: `N` (every agent) or `SPEC=N` (one agent), N ≥ 1.
pub(crate) fn parse_agent_limit(s: &str) -> Result<(Option<String>, u32), String> {
    let (spec, n) = match s.rsplit_once('=') {
        Some((spec, n)) if !spec.is_empty() => (Some(spec.to_string()), n),
        Some(_) => {
            return Err(format!(
                "`{s}`: give N or SPEC=N, e.g. 60 or llm:openai:gpt-4.1=60"
            ));
        }
        None => (None, s),
    };
    match n.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok((spec, n)),
        _ => Err(format!(
            "`{n}` is not a whole number of at least 1 (give N or SPEC=N)"
        )),
    }
}

/// Put `--agent-concurrency` and `--rpm` into the run's configuration.
pub(crate) fn apply_agent_limits(
    config: &mut bureau_run::RunConfig,
    concurrency: &[(Option<String>, u32)],
    rpm: &[(Option<String>, u32)],
) {
    for (spec, n) in concurrency {
        match spec {
            None => config.budget.concurrency = Some(*n),
            Some(s) => {
                config
                    .agent_budgets
                    .entry(s.clone())
                    .or_default()
                    .concurrency = Some(*n);
            }
        }
    }
    for (spec, n) in rpm {
        match spec {
            None => config.budget.rpm = Some(*n),
            Some(s) => config.agent_budgets.entry(s.clone()).or_default().rpm = Some(*n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_n_or_spec_equals_n() {
        assert_eq!(parse_agent_limit("60"), Ok((None, 60)));
        assert_eq!(
            parse_agent_limit("llm:openai:gpt-4.1=120"),
            Ok((Some("llm:openai:gpt-4.1".into()), 120))
        );
        // A spec with `=` in it (a command template) keeps everything before the last one.
        assert_eq!(
            parse_agent_limit("command:x --a=b=3"),
            Ok((Some("command:x --a=b".into()), 3))
        );
        for bad in ["0", "-1", "x", "=5", "gpt=", "gpt=0", "1.5"] {
            assert!(parse_agent_limit(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn limits_fill_the_default_and_per_agent_budgets() {
        let mut c = bureau_run::RunConfig::new(vec![], vec!["a".into(), "b".into()], "x".into());
        apply_agent_limits(
            &mut c,
            &[(None, 4), (Some("b".into()), 1)],
            &[(Some("a".into()), 600)],
        );
        assert_eq!(c.budget.concurrency, Some(4));
        assert_eq!(c.budget.rpm, None);
        assert_eq!(c.agent_budgets["b"].concurrency, Some(1));
        assert_eq!(c.agent_budgets["a"].rpm, Some(600));
    }
}
