//! Text helpers used by checks to compare figures and keywords robustly.
//!
//! Guarantees:
//!
//! * [`normalize_numbers`] only ever removes thousands separators from
//!   *well-formed* grouped numbers (`1,234,567.89`, `11 917` with a no-break
//!   or thin space). Anything ambiguous (`1,2`, `12,34,5`, `3, 4`, IP
//!   addresses, `1.234,56`) is left exactly as it was. Idempotent.
//! * [`contains_keyword`] is case-insensitive, treats any run of whitespace as
//!   one space, and never lets a number match inside a longer number
//!   (`917` does not match `11917`). A purely numeric needle matches any
//!   number in the haystack with the same value (`11917` matches `$11,917.00`).
//! * [`parse_number`] is strict: it accepts one plain figure with optional
//!   sign, currency symbol, percent sign or accounting parentheses, and
//!   rejects everything else (`1.2k`, `1e5`, `NaN`, two numbers, ...).
//! * [`html_to_text`] never fails: it drops tags, comments, `<script>` and
//!   `<style>`, decodes common entities and keeps paragraph and line breaks.
//!
//! None of these functions panic, whatever the input.

use regex::Regex;
use std::sync::LazyLock;

/// Characters accepted as a "space" thousands separator: no-break space,
/// narrow no-break space and thin space.
const SPACE_SEPARATORS: [char; 3] = ['\u{00A0}', '\u{202F}', '\u{2009}'];

/// A run of digits joined by single separator characters.
static NUMBER_RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[0-9]+(?:[,.\x{00A0}\x{202F}\x{2009}][0-9]+)*").expect("static regex is valid")
});
/// A well-formed comma-grouped number.
static COMMA_GROUPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?$").expect("static regex is valid")
});
/// A well-formed number grouped with (no-break / thin) spaces.
static SPACE_GROUPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[1-9][0-9]{0,2}(?:[\x{00A0}\x{202F}\x{2009}][0-9]{3})+(?:[.,][0-9]+)?$")
        .expect("static regex is valid")
});

/// Removes thousands separators from well-formed grouped numbers.
///
/// `"11,917"` → `"11917"`, `"1,234,567.89"` → `"1234567.89"`,
/// `"US$ 2,500"` → `"US$ 2500"`, `"11\u{202F}917"` → `"11917"`.
/// A run of digits and separators is rewritten only if it is, as a whole, a
/// number whose first group has 1–3 digits (not starting with 0) and every
/// later group exactly 3 digits, all with the same separator, optionally
/// followed by a decimal part. Everything else is returned unchanged.
pub fn normalize_numbers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for m in NUMBER_RUN.find_iter(s) {
        out.push_str(&s[last..m.start()]);
        let run = m.as_str();
        if COMMA_GROUPED.is_match(run) {
            out.extend(run.chars().filter(|&c| c != ','));
        } else if SPACE_GROUPED.is_match(run) && uses_one_space_separator(run) {
            out.extend(run.chars().filter(|c| !SPACE_SEPARATORS.contains(c)));
        } else {
            out.push_str(run);
        }
        last = m.end();
    }
    out.push_str(&s[last..]);
    out
}

fn uses_one_space_separator(run: &str) -> bool {
    let mut seps = run.chars().filter(|c| SPACE_SEPARATORS.contains(c));
    match seps.next() {
        Some(first) => seps.all(|c| c == first),
        None => false,
    }
}

/// Lower-cases, normalises numbers and collapses every whitespace run into
/// one ASCII space.
fn canonical(s: &str) -> String {
    let normalized = normalize_numbers(s).to_lowercase();
    let mut out = String::with_capacity(normalized.len());
    let mut in_space = false;
    for c in normalized.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

/// A plain decimal number, optionally negative: the form a numeric needle
/// takes after [`canonical`].
static PLAIN_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-\x{2212}]?[0-9]+(?:\.[0-9]+)?$").expect("static regex is valid")
});
/// Number tokens in a canonical haystack, with an optional sign or opening
/// accounting parenthesis in front and a possible closing one behind.
static NUMBER_TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[0-9]+(?:\.[0-9]+)*").expect("static regex is valid"));

/// Whether `haystack` contains `needle`, compared case-insensitively, with
/// whitespace runs treated as one space and numbers normalised by
/// [`normalize_numbers`] on both sides.
///
/// Numbers are never matched partially: `"917"` is not found in `"11917"` and
/// `"2,500"` is not found in `"12,500"` or `"2,500.5"` (but is in `"2,500.00"`).
/// A needle that is just a number (`"11917"`, `"-1,200"`, `"3.50"`) matches
/// any number in the haystack with the same value; a needle without a sign
/// also matches the negative of its value (`"1200"` is found in `"(1,200)"`).
///
/// An empty (or all-whitespace) needle matches nothing, so that an empty
/// keyword in a check fails loudly instead of passing vacuously.
pub fn contains_keyword(haystack: &str, needle: &str) -> bool {
    let hay = canonical(haystack);
    let needle = canonical(needle);
    let needle = needle.trim_matches(' ');
    if needle.is_empty() {
        return false;
    }
    if PLAIN_NUMBER.is_match(needle) {
        let Some(value) = parse_number(needle) else {
            return false;
        };
        let signed = needle.starts_with(['-', '\u{2212}']);
        return number_tokens(&hay).any(|t| t == value || (!signed && t == -value));
    }
    let bytes = hay.as_bytes();
    let starts_digit = needle.starts_with(|c: char| c.is_ascii_digit());
    let ends_digit = needle.ends_with(|c: char| c.is_ascii_digit());
    // Every occurrence, overlapping ones included.
    let mut from = 0;
    while let Some(pos) = hay.get(from..).and_then(|rest| rest.find(needle)) {
        let at = from + pos;
        let end = at + needle.len();
        let before_ok = !starts_digit || !digit_before(bytes, at);
        let after_ok = !ends_digit || digits_end_cleanly(bytes, end);
        if before_ok && after_ok {
            return true;
        }
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// True if the number that would start at `at` actually continues one that
/// starts earlier (`1|917`, `3.|5`).
fn digit_before(bytes: &[u8], at: usize) -> bool {
    let prev = at.checked_sub(1).and_then(|i| bytes.get(i));
    match prev {
        Some(b) if b.is_ascii_digit() => true,
        Some(b'.') => at
            .checked_sub(2)
            .and_then(|i| bytes.get(i))
            .is_some_and(u8::is_ascii_digit),
        _ => false,
    }
}

/// True if a number ending at `end` really ends there: no further digit, and
/// any decimal part that follows is all zeros (`2500` ends cleanly in
/// `2500.00` but not in `2500.5`).
fn digits_end_cleanly(bytes: &[u8], end: usize) -> bool {
    match bytes.get(end) {
        Some(b) if b.is_ascii_digit() => false,
        Some(b'.') => {
            let frac: Vec<&u8> = bytes
                .get(end + 1..)
                .unwrap_or_default()
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .collect();
            frac.iter().all(|&&b| b == b'0')
        }
        _ => true,
    }
}

/// Signed values of the number tokens of a canonical haystack.
fn number_tokens(hay: &str) -> impl Iterator<Item = f64> + '_ {
    NUMBER_TOKEN.find_iter(hay).filter_map(move |m| {
        let token = m.as_str();
        // "1.2.3" (versions, dates, IPs) is not a number.
        if token.matches('.').count() > 1 {
            return None;
        }
        let value: f64 = token.parse().ok()?;
        let before = &hay[..m.start()];
        let after = &hay[m.end()..];
        let prev = before.chars().next_back();
        let negative = match prev {
            Some('-' | '\u{2212}') => {
                // A minus sign, not a hyphen inside a word or a range: "a-5".
                !before[..before.len() - prev.map_or(0, char::len_utf8)]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
            }
            Some('(') => after.starts_with(')'),
            _ => false,
        };
        Some(if negative { -value } else { value })
    })
}

/// The strict grammar of [`parse_number`]: accounting parentheses, sign,
/// currency, figure, percent or trailing currency.
static NUMBER_GRAMMAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(\()?\s*([-+\x{2212}])?\s*((?:[A-Z]{1,2})?\$|[€£¥₹])?\s*([-+\x{2212}])?([0-9][0-9,\x{00A0}\x{202F}\x{2009}]*(?:\.[0-9]+)?|\.[0-9]+)\s*(%|[€£¥₹])?\s*(\))?$",
    )
    .expect("static regex is valid")
});

/// Parses one figure as written in a document.
///
/// Accepts `"42"`, `"  42 "`, `"-3.5"`, `"$11,917.50"` (11917.5), `"12%"` (12),
/// `"(1,200)"` (-1200), `"US$ 2,500"`, `"€1,000"`, `"1 000"` with a no-break or
/// thin space, `"\u{2212}7"` (Unicode minus). Rejects anything else,
/// including `"1.2k"`, `"1e5"`, `"NaN"`, `"1,2"`, `""`, `"--5"`, `"(-5)"`.
pub fn parse_number(s: &str) -> Option<f64> {
    let caps = NUMBER_GRAMMAR.captures(s.trim())?;
    let open = caps.get(1).is_some();
    let close = caps.get(7).is_some();
    if open != close {
        return None;
    }
    let sign1 = caps.get(2).map(|m| m.as_str());
    let sign2 = caps.get(4).map(|m| m.as_str());
    let sign = match (sign1, sign2) {
        (Some(_), Some(_)) => return None,
        (Some(s), None) | (None, Some(s)) => Some(s),
        (None, None) => None,
    };
    if open && sign.is_some() {
        return None;
    }
    let figure = normalize_numbers(caps.get(5)?.as_str());
    let plain = figure.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !plain || figure.matches('.').count() > 1 {
        return None;
    }
    let magnitude: f64 = figure.parse().ok()?;
    if !magnitude.is_finite() {
        return None;
    }
    let negative = open || matches!(sign, Some("-" | "\u{2212}"));
    Some(if negative { -magnitude } else { magnitude })
}

/// Converts HTML to readable plain text.
///
/// Drops tags, comments, `<script>`, `<style>` and `<head>` contents; decodes
/// the common named entities and all numeric ones; turns `<br>` into a line
/// break and block elements (`p`, `div`, headings, list items, table rows,
/// ...) into line breaks, list items prefixed with `"- "`. Runs of whitespace
/// collapse to one space as a browser would, lines are trimmed and at most
/// one blank line is kept in a row. Never fails.
pub fn html_to_text(html: &str) -> String {
    let mut raw = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        push_collapsed(&mut raw, &decode_entities(&rest[..lt]));
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        let tag_like = rest[1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'));
        if !tag_like {
            // "a < b" style text, not a tag.
            push_collapsed(&mut raw, "<");
            rest = &rest[1..];
            continue;
        }
        let Some(gt) = rest.find('>') else {
            // A tag that never closes: keep it as plain text.
            push_collapsed(&mut raw, &decode_entities(rest));
            rest = "";
            break;
        };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        match name.as_str() {
            "script" | "style" | "head" | "title" if !closing => {
                rest = skip_until_close(rest, &name);
            }
            "br" => raw.push('\n'),
            "li" if !closing => raw.push_str("\n- "),
            "td" | "th" if !closing => raw.push(' '),
            "p" | "div" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "tr" | "table" | "ul"
            | "ol" | "blockquote" | "pre" | "hr" | "section" | "article" | "header" | "footer"
            | "dl" | "dt" | "dd" | "address" | "body" | "html" => {
                raw.push('\n');
                if matches!(name.as_str(), "p" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6") {
                    raw.push('\n');
                }
            }
            _ => {}
        }
    }
    push_collapsed(&mut raw, &decode_entities(rest));
    tidy_lines(&raw)
}

/// Skips past `</name ...>` (case-insensitive); everything if it never comes.
fn skip_until_close<'a>(rest: &'a str, name: &str) -> &'a str {
    let lower = rest.to_ascii_lowercase();
    let needle = format!("</{name}");
    match lower.find(&needle) {
        Some(at) => {
            let after = &rest[at..];
            after.find('>').map_or("", |gt| &after[gt + 1..])
        }
        None => "",
    }
}

/// Appends text with whitespace runs collapsed to one space (HTML rendering
/// rules); no-break spaces are kept as plain spaces.
fn push_collapsed(out: &mut String, text: &str) {
    for c in text.chars() {
        if c.is_whitespace() && c != '\u{00A0}' {
            if !out.ends_with([' ', '\n']) && !out.is_empty() {
                out.push(' ');
            }
        } else if c == '\u{00A0}' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
}

/// Trims every line and keeps at most one blank line in a row.
fn tidy_lines(raw: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    for line in raw.split('\n').map(|l| l.trim_matches(' ')) {
        if !line.is_empty() || lines.last().is_some_and(|l| !l.is_empty()) {
            lines.push(line);
        }
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

/// Decodes HTML character references; unknown or malformed ones stay as is.
fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest
            .char_indices()
            .skip(1)
            .take(12)
            .find(|&(_, c)| c == ';')
            .map(|(i, _)| i);
        let decoded = end.and_then(|end| decode_entity(&rest[1..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn decode_entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse::<u32>().ok()?,
        };
        return char::from_u32(code).filter(|&c| c != '\0');
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{00A0}',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "bull" => '•',
        "middot" => '·',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "euro" => '€',
        "pound" => '£',
        "yen" => '¥',
        "cent" => '¢',
        "deg" => '°',
        "times" => '×',
        "divide" => '÷',
        "laquo" => '«',
        "raquo" => '»',
        "shy" => '\u{00AD}',
        "thinsp" => '\u{2009}',
        "ensp" => '\u{2002}',
        "emsp" => '\u{2003}',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn normalize_removes_well_formed_separators() {
        assert_eq!(normalize_numbers("11,917"), "11917");
        assert_eq!(normalize_numbers("1,234,567.89"), "1234567.89");
        assert_eq!(normalize_numbers("US$ 2,500"), "US$ 2500");
        assert_eq!(normalize_numbers("total: $11,917.00."), "total: $11917.00.");
        assert_eq!(normalize_numbers("11\u{202F}917"), "11917");
        assert_eq!(normalize_numbers("1\u{00A0}234\u{00A0}567,5"), "1234567,5");
        assert_eq!(normalize_numbers("-1,200 and (3,400)"), "-1200 and (3400)");
    }

    #[test]
    fn normalize_leaves_ambiguous_text_alone() {
        for s in [
            "1,2",
            "a,b",
            "12,34,5",
            "3, 4",
            "1,234,56",
            "0,123",
            "1234,567",
            "192.168.1.1",
            "1.234,56",
            "11 917",
            "1\u{00A0}234\u{202F}567",
            "",
            "no numbers",
            "1,234.5,678",
        ] {
            assert_eq!(normalize_numbers(s), s, "{s:?}");
        }
    }

    #[test]
    fn keyword_basics() {
        assert!(contains_keyword(
            "Revenue was  11,917 dollars",
            "revenue WAS 11917"
        ));
        assert!(contains_keyword("Hello\n\tWorld", "hello world"));
        assert!(!contains_keyword("abc", ""));
        assert!(!contains_keyword("abc", "   "));
        assert!(contains_keyword("The invoices are late", "invoice"));
        assert!(!contains_keyword("helloworld", "hello world"));
    }

    #[test]
    fn keyword_numbers_never_match_inside_longer_numbers() {
        assert!(!contains_keyword("total 11917", "917"));
        assert!(!contains_keyword("total 11,917", "917"));
        assert!(!contains_keyword("v1.917", "917"));
        assert!(!contains_keyword("12,500", "2,500"));
        assert!(!contains_keyword("25000", "2500"));
        assert!(contains_keyword("total 11,917", "11917"));
        assert!(contains_keyword("total $11,917.00", "11917"));
        assert!(contains_keyword("total 11917", "11,917"));
        assert!(contains_keyword("total 11917", "11917.0"));
        assert!(!contains_keyword("total 11917.5", "11917"));
        assert!(contains_keyword("loss of (1,200)", "-1200"));
        assert!(contains_keyword("loss of -1,200", "1200"));
        assert!(!contains_keyword("gain of 1,200", "-1200"));
        assert!(!contains_keyword("item a-5", "-5"));
        assert!(!contains_keyword("version 1.2.3", "1.2"));
        // An invalid occurrence overlapping a valid one does not hide it.
        assert!(contains_keyword("21 1 1", "1 1"));
    }

    #[test]
    fn keyword_with_units_keeps_number_boundaries() {
        assert!(contains_keyword("budget: US$2,500.00", "$2,500"));
        assert!(contains_keyword("budget: US$  2,500.00", "us$ 2500"));
        assert!(!contains_keyword("budget: US$2,500.50", "$2,500"));
        assert!(!contains_keyword("budget: $25,000", "$2,500"));
        assert!(contains_keyword("growth of 12 % this year", "12 %"));
        assert!(!contains_keyword("growth of 112%", "12%"));
        assert!(contains_keyword("growth of 12%", "12%"));
    }

    #[test]
    fn parse_number_accepts_plain_figures() {
        assert_eq!(parse_number("$11,917.50"), Some(11917.5));
        assert_eq!(parse_number("12%"), Some(12.0));
        assert_eq!(parse_number("(1,200)"), Some(-1200.0));
        assert_eq!(parse_number("-3.5"), Some(-3.5));
        assert_eq!(parse_number("  42 "), Some(42.0));
        assert_eq!(parse_number("+7"), Some(7.0));
        assert_eq!(parse_number("\u{2212}7"), Some(-7.0));
        assert_eq!(parse_number("US$ 2,500"), Some(2500.0));
        assert_eq!(parse_number("-$3"), Some(-3.0));
        assert_eq!(parse_number("$-3"), Some(-3.0));
        assert_eq!(parse_number("€1,000"), Some(1000.0));
        assert_eq!(parse_number("1000€"), Some(1000.0));
        assert_eq!(parse_number("11\u{202F}917"), Some(11917.0));
        assert_eq!(parse_number(".5"), Some(0.5));
        assert_eq!(parse_number("0"), Some(0.0));
    }

    #[test]
    fn parse_number_is_strict() {
        for s in [
            "", " ", "1.2k", "1e5", "NaN", "inf", "1,2", "12,34,5", "--5", "(-5)", "(5", "5)",
            "1 2", "1.2.3", "5.", "abc", "$", "%", "1,234,56", "3, 4", "12%%", "- 5 -",
        ] {
            assert_eq!(parse_number(s), None, "{s:?}");
        }
    }

    #[test]
    fn html_to_text_keeps_structure() {
        let html = "<html><head><title>T</title><style>p{color:red}</style></head>\
            <body><p>Hello&nbsp;<b>Dana</b>,</p><p>Total: &#36;11,917 &amp; more</p>\
            <script>alert('x')</script><ul><li>one</li><li>two</li></ul>Line<br>break\
            <!-- hidden --> a &lt; b &unknown; &#x1F600;</body></html>";
        let text = html_to_text(html);
        assert_eq!(
            text,
            "Hello Dana,\n\nTotal: $11,917 & more\n\n- one\n- two\nLine\nbreak a < b &unknown; 😀"
        );
    }

    #[test]
    fn html_to_text_survives_broken_markup() {
        assert_eq!(html_to_text(""), "");
        assert_eq!(html_to_text("a < b and c > d"), "a < b and c > d");
        assert_eq!(html_to_text("<p>unterminated <b"), "unterminated <b");
        assert_eq!(html_to_text("<script>never closed"), "");
        assert_eq!(html_to_text("<!-- never closed"), "");
        assert_eq!(html_to_text("&#0; &#xFFFFFFFF; &"), "&#0; &#xFFFFFFFF; &");
        assert_eq!(html_to_text("<P>Caps</P><BR/>x"), "Caps\n\nx");
    }

    proptest! {
        #[test]
        fn normalize_is_idempotent_and_total(s in "\\PC{0,40}") {
            let once = normalize_numbers(&s);
            prop_assert_eq!(normalize_numbers(&once), once.clone());
        }

        #[test]
        fn grouped_numbers_normalise_to_plain(n in 0u64..10_000_000_000u64, cents in 0u32..100) {
            let plain = n.to_string();
            let mut grouped = String::new();
            for (i, c) in plain.chars().enumerate() {
                if i > 0 && (plain.len() - i) % 3 == 0 { grouped.push(','); }
                grouped.push(c);
            }
            prop_assert_eq!(normalize_numbers(&grouped), plain.clone());
            let money = format!("${grouped}.{cents:02}");
            let exact: f64 = format!("{plain}.{cents:02}").parse().unwrap();
            prop_assert_eq!(parse_number(&money), Some(exact));
            let hay = format!("the total was ${grouped}.00 in Q3, then {money}");
            prop_assert!(contains_keyword(&hay, &plain));
            prop_assert!(contains_keyword(&hay, &grouped));
            let with_cents = format!("{plain}.{cents:02}");
            prop_assert!(contains_keyword(&hay, &with_cents));
            let longer = format!("1{plain}");
            let hay = format!("value {longer}");
            prop_assert!(!contains_keyword(&hay, &plain));
        }

        #[test]
        fn text_functions_never_panic(s in "\\PC{0,60}", t in "\\PC{0,10}") {
            let _ = parse_number(&s);
            let _ = contains_keyword(&s, &t);
            let _ = html_to_text(&s);
        }

        #[test]
        fn keyword_is_found_in_itself(s in "[a-zA-Z0-9 ,.$%]{1,30}") {
            prop_assume!(!s.trim().is_empty());
            let hay = format!("x {s} y");
            prop_assert!(contains_keyword(&hay, &s));
        }
    }
}
