//! Formulas: parsing to an expression tree and evaluation against a workbook.
//!
//! Supported: numbers, strings, TRUE/FALSE, error literals; `+ - * / ^ & %`, comparisons
//! `= <> < > <= >=`, parentheses, unary minus/plus; cell and range references (also on
//! other sheets, `$` anchors ignored, whole columns `B:B`); the functions in [`FUNCTIONS`].
//! Parsing is bounded (length, nesting depth), so hostile formulas cannot overflow the stack.

use super::a1::{CellRef, MAX_COL, MAX_ROW, RangeRef};

/// Longest formula accepted (Excel's own limit).
pub const MAX_FORMULA_LEN: usize = 8192;
/// Deepest nesting of parentheses / function calls / unary operators.
pub const MAX_DEPTH: usize = 64;

/// Functions Bureau computes. Formulas using others keep the value they were read with.
pub const FUNCTIONS: &[&str] = &[
    "ABS",
    "AND",
    "AVERAGE",
    "CONCAT",
    "CONCATENATE",
    "COUNT",
    "COUNTA",
    "COUNTIF",
    "IF",
    "IFERROR",
    "INT",
    "LEN",
    "LOWER",
    "MAX",
    "MIN",
    "MOD",
    "NOT",
    "OR",
    "PRODUCT",
    "ROUND",
    "ROUNDDOWN",
    "ROUNDUP",
    "SUM",
    "SUMIF",
    "UPPER",
];

/// A parsed formula.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Str(String),
    Bool(bool),
    Error(String),
    /// A name Bureau does not know (named ranges are not supported): `#NAME?`.
    Name(String),
    /// An omitted function argument, as in `IF(A1,,2)`: an empty value.
    Missing,
    Ref(Option<String>, CellRef),
    Range(RangeRef),
    Neg(Box<Expr>),
    Percent(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Concat,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

impl Expr {
    /// Every cell reference and range in the formula (for dependencies).
    pub fn refs(&self, out: &mut Vec<RangeRef>) {
        match self {
            Expr::Ref(sheet, c) => out.push(RangeRef {
                sheet: sheet.clone(),
                start: *c,
                end: *c,
            }),
            Expr::Range(r) => out.push(r.clone()),
            Expr::Neg(e) | Expr::Percent(e) => e.refs(out),
            Expr::Bin(_, a, b) => {
                a.refs(out);
                b.refs(out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.refs(out)),
            _ => {}
        }
    }

    /// Names of functions used that Bureau does not compute.
    pub fn unsupported_functions(&self, out: &mut Vec<String>) {
        match self {
            Expr::Neg(e) | Expr::Percent(e) => e.unsupported_functions(out),
            Expr::Bin(_, a, b) => {
                a.unsupported_functions(out);
                b.unsupported_functions(out);
            }
            Expr::Call(name, args) => {
                if !FUNCTIONS.contains(&name.as_str()) && !out.contains(name) {
                    out.push(name.clone());
                }
                args.iter().for_each(|a| a.unsupported_functions(out));
            }
            _ => {}
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Word(String),
    /// A reference or range text, possibly with a sheet prefix.
    Ref(RangeRef),
    Func(String),
    Err(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
}

/// Parse a formula (with or without the leading `=`). The error says what is wrong.
pub fn parse(formula: &str) -> Result<Expr, String> {
    let text = formula.trim();
    let text = text.strip_prefix('=').unwrap_or(text);
    if text.len() > MAX_FORMULA_LEN {
        return Err(format!(
            "the formula is longer than {MAX_FORMULA_LEN} characters"
        ));
    }
    if text.trim().is_empty() {
        return Err("the formula is empty".into());
    }
    let toks = lex(text)?;
    let mut p = Parser { toks, pos: 0 };
    let e = p.comparison(0)?;
    if p.pos < p.toks.len() {
        return Err(format!(
            "unexpected {} in the formula",
            describe(&p.toks[p.pos])
        ));
    }
    Ok(e)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(n) => format!("number {n}"),
        Tok::Str(s) => format!("text {s:?}"),
        Tok::Word(w) | Tok::Func(w) => format!("`{w}`"),
        Tok::Ref(r) => format!("reference {r}"),
        Tok::Err(e) => e.clone(),
        Tok::Op(o) => format!("`{o}`"),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::Comma => "`,`".into(),
    }
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' => i += 1,
            '(' => {
                out.push(Tok::LParen);
                i += 1;
            }
            ')' => {
                out.push(Tok::RParen);
                i += 1;
            }
            ',' | ';' => {
                out.push(Tok::Comma);
                i += 1;
            }
            '+' | '-' | '*' | '/' | '^' | '&' | '%' | '=' => {
                out.push(Tok::Op(match c {
                    '+' => "+",
                    '-' => "-",
                    '*' => "*",
                    '/' => "/",
                    '^' => "^",
                    '&' => "&",
                    '%' => "%",
                    _ => "=",
                }));
                i += 1;
            }
            '<' | '>' => {
                let next = chars.get(i + 1).copied();
                let op = match (c, next) {
                    ('<', Some('=')) => "<=",
                    ('<', Some('>')) => "<>",
                    ('>', Some('=')) => ">=",
                    ('<', _) => "<",
                    _ => ">",
                };
                i += op.len();
                out.push(Tok::Op(op));
            }
            '"' => {
                let mut text = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("a text in quotes is not closed (missing `\"`)".into()),
                        Some('"') if chars.get(i + 1) == Some(&'"') => {
                            text.push('"');
                            i += 2;
                        }
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some(ch) => {
                            text.push(*ch);
                            i += 1;
                        }
                    }
                }
                out.push(Tok::Str(text));
            }
            '#' => {
                let start = i;
                i += 1;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || "/!?".contains(chars[i]))
                {
                    i += 1;
                    if matches!(chars[i - 1], '!' | '?') {
                        break;
                    }
                }
                let e: String = chars[start..i].iter().collect::<String>().to_uppercase();
                const KNOWN: &[&str] = &[
                    "#DIV/0!", "#N/A", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!",
                ];
                if !KNOWN.contains(&e.as_str()) {
                    return Err(format!("unknown error value `{e}`"));
                }
                // `#REF!A1`-style leftovers of deleted references stay an error.
                out.push(Tok::Err(e));
            }
            '\'' => {
                // Quoted sheet name: '...'!ref
                let start = i;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            return Err("a quoted sheet name is not closed (missing `'`)".into());
                        }
                        Some('\'') if chars.get(i + 1) == Some(&'\'') => i += 2,
                        Some('\'') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                if chars.get(i) != Some(&'!') {
                    return Err(
                        "a quoted sheet name must be followed by `!` and a cell reference".into(),
                    );
                }
                i += 1;
                let (word, next) = ref_word(&chars, i);
                i = next;
                let text: String = chars[start..i].iter().collect();
                let r = RangeRef::parse(&text)
                    .ok_or_else(|| format!("`{text}` is not a valid reference"))?;
                let _ = word;
                out.push(Tok::Ref(r));
            }
            c if c.is_ascii_digit() || c == '.' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                // Row range like 2:3
                if chars.get(i) == Some(&':')
                    && chars
                        .get(i + 1)
                        .is_some_and(|c| c.is_ascii_digit() || *c == '$')
                    && !chars[start..i].contains(&'.')
                {
                    let (_, next) = ref_word(&chars, i + 1);
                    let text: String = chars[start..next].iter().collect();
                    if let Some(r) = RangeRef::parse(&text) {
                        out.push(Tok::Ref(r));
                        i = next;
                        continue;
                    }
                }
                if matches!(chars.get(i), Some('e' | 'E'))
                    && chars
                        .get(i + 1)
                        .is_some_and(|c| c.is_ascii_digit() || *c == '+' || *c == '-')
                {
                    i += 2;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                let text: String = chars[start..i].iter().collect();
                let n: f64 = text
                    .parse()
                    .map_err(|_| format!("`{text}` is not a number"))?;
                out.push(Tok::Num(n));
            }
            c if c.is_alphabetic() || c == '_' || c == '$' => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_alphanumeric() || matches!(chars[i], '_' | '.' | '$'))
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if chars.get(i) == Some(&'!') {
                    // Sheet!ref
                    let (_, next) = ref_word(&chars, i + 1);
                    let text: String = chars[start..next].iter().collect();
                    let r = RangeRef::parse(&text)
                        .ok_or_else(|| format!("`{text}` is not a valid reference"))?;
                    out.push(Tok::Ref(r));
                    i = next;
                } else if chars.get(i) == Some(&':') {
                    let (_, next) = ref_word(&chars, i + 1);
                    let text: String = chars[start..next].iter().collect();
                    let r = RangeRef::parse(&text)
                        .ok_or_else(|| format!("`{text}` is not a valid range"))?;
                    out.push(Tok::Ref(r));
                    i = next;
                } else if let Some(c) = CellRef::parse(&word) {
                    out.push(Tok::Ref(RangeRef {
                        sheet: None,
                        start: c,
                        end: c,
                    }));
                } else {
                    // Function name if followed by `(` (spaces allowed).
                    let mut j = i;
                    while j < chars.len() && chars[j] == ' ' {
                        j += 1;
                    }
                    if chars.get(j) == Some(&'(') {
                        out.push(Tok::Func(word.to_uppercase()));
                        i = j;
                    } else {
                        out.push(Tok::Word(word));
                    }
                }
            }
            other => return Err(format!("unexpected character `{other}` in the formula")),
        }
    }
    Ok(out)
}

/// The end of a reference word starting at `i`: `A1`, `$A$1`, `A1:B2`, `A:B`, `1:2`.
fn ref_word(chars: &[char], mut i: usize) -> (String, usize) {
    let start = i;
    let is_ref_char = |c: char| c.is_ascii_alphanumeric() || c == '$';
    while i < chars.len() && is_ref_char(chars[i]) {
        i += 1;
    }
    if chars.get(i) == Some(&':') && chars.get(i + 1).is_some_and(|c| is_ref_char(*c)) {
        i += 1;
        while i < chars.len() && is_ref_char(chars[i]) {
            i += 1;
        }
    }
    (chars[start..i].iter().collect(), i)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.peek() {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn depth_check(depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            Err(format!(
                "the formula is nested more than {MAX_DEPTH} levels deep"
            ))
        } else {
            Ok(())
        }
    }

    fn comparison(&mut self, d: usize) -> Result<Expr, String> {
        Self::depth_check(d)?;
        let mut left = self.concat(d)?;
        while let Some(op) = self.peek_op() {
            let op = match op {
                "=" => Op::Eq,
                "<>" => Op::Ne,
                "<" => Op::Lt,
                ">" => Op::Gt,
                "<=" => Op::Le,
                ">=" => Op::Ge,
                _ => break,
            };
            self.pos += 1;
            let right = self.concat(d)?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn concat(&mut self, d: usize) -> Result<Expr, String> {
        let mut left = self.additive(d)?;
        while self.peek_op() == Some("&") {
            self.pos += 1;
            let right = self.additive(d)?;
            left = Expr::Bin(Op::Concat, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn additive(&mut self, d: usize) -> Result<Expr, String> {
        let mut left = self.multiplicative(d)?;
        while let Some(op @ ("+" | "-")) = self.peek_op() {
            self.pos += 1;
            let right = self.multiplicative(d)?;
            let op = if op == "+" { Op::Add } else { Op::Sub };
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn multiplicative(&mut self, d: usize) -> Result<Expr, String> {
        let mut left = self.power(d)?;
        while let Some(op @ ("*" | "/")) = self.peek_op() {
            self.pos += 1;
            let right = self.power(d)?;
            let op = if op == "*" { Op::Mul } else { Op::Div };
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn power(&mut self, d: usize) -> Result<Expr, String> {
        let mut left = self.unary(d)?;
        while self.peek_op() == Some("^") {
            self.pos += 1;
            let right = self.unary(d)?;
            left = Expr::Bin(Op::Pow, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self, d: usize) -> Result<Expr, String> {
        Self::depth_check(d)?;
        match self.peek_op() {
            Some("-") => {
                self.pos += 1;
                Ok(Expr::Neg(Box::new(self.unary(d + 1)?)))
            }
            Some("+") => {
                self.pos += 1;
                self.unary(d + 1)
            }
            _ => self.postfix(d),
        }
    }

    fn postfix(&mut self, d: usize) -> Result<Expr, String> {
        let mut e = self.primary(d)?;
        while self.peek_op() == Some("%") {
            self.pos += 1;
            e = Expr::Percent(Box::new(e));
        }
        Ok(e)
    }

    fn primary(&mut self, d: usize) -> Result<Expr, String> {
        let Some(tok) = self.peek().cloned() else {
            return Err("the formula ends too early (an operand is missing)".into());
        };
        self.pos += 1;
        match tok {
            Tok::Num(n) => Ok(Expr::Num(n)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Err(e) => Ok(Expr::Error(e)),
            Tok::Word(w) => match w.to_uppercase().as_str() {
                "TRUE" => Ok(Expr::Bool(true)),
                "FALSE" => Ok(Expr::Bool(false)),
                _ => Ok(Expr::Name(w)),
            },
            Tok::Ref(r) => {
                if r.start == r.end {
                    Ok(Expr::Ref(r.sheet, r.start))
                } else {
                    Ok(Expr::Range(r))
                }
            }
            Tok::LParen => {
                let e = self.comparison(d + 1)?;
                if self.peek() != Some(&Tok::RParen) {
                    return Err("a `(` is not closed (missing `)`)".into());
                }
                self.pos += 1;
                Ok(e)
            }
            Tok::Func(name) => {
                // The lexer put the `(` next.
                if self.peek() != Some(&Tok::LParen) {
                    return Err(format!("`{name}` must be followed by `(`"));
                }
                self.pos += 1;
                let mut args = Vec::new();
                if self.peek() == Some(&Tok::RParen) {
                    self.pos += 1;
                    return Ok(Expr::Call(name, args));
                }
                loop {
                    if matches!(self.peek(), Some(Tok::Comma | Tok::RParen)) {
                        // An omitted argument, as in IF(A1,,2).
                        args.push(Expr::Missing);
                    } else {
                        args.push(self.comparison(d + 1)?);
                    }
                    match self.peek() {
                        Some(Tok::Comma) => self.pos += 1,
                        Some(Tok::RParen) => {
                            self.pos += 1;
                            break;
                        }
                        _ => {
                            return Err(format!(
                                "the arguments of `{name}` are not closed (missing `)`)"
                            ));
                        }
                    }
                    if args.len() > 255 {
                        return Err(format!("`{name}` has more than 255 arguments"));
                    }
                }
                Ok(Expr::Call(name, args))
            }
            other => Err(format!("unexpected {} in the formula", describe(&other))),
        }
    }
}

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Empty,
    Num(f64),
    Text(String),
    Bool(bool),
    Error(String),
}

/// A formula names a sheet the workbook does not have (the formula evaluates to `#REF!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoSuchSheet;

/// What the evaluator reads.
pub trait Cells {
    /// The value of one cell (`Val::Empty` when empty); `Err` when the sheet does not exist.
    fn cell(&self, sheet: Option<&str>, c: CellRef) -> Result<Val, NoSuchSheet>;
    /// The non-empty cells of a range in row-major order; `Err` when the sheet does not exist.
    fn range(&self, r: &RangeRef) -> Result<Vec<Val>, NoSuchSheet>;
    /// The last used (row, column) of a sheet, `None` for an empty sheet.
    fn extent(&self, sheet: Option<&str>) -> Result<Option<CellRef>, NoSuchSheet>;
}

const REF: &str = "#REF!";
const VALUE: &str = "#VALUE!";
const DIV0: &str = "#DIV/0!";
const NUM: &str = "#NUM!";
const NAME: &str = "#NAME?";

/// Evaluate a parsed formula. The result is never a range; errors are `Val::Error`.
pub fn eval(e: &Expr, cells: &dyn Cells) -> Val {
    let v = eval_scalar(e, cells);
    match v {
        Val::Num(n) if !n.is_finite() => Val::Error(NUM.into()),
        v => v,
    }
}

fn eval_scalar(e: &Expr, cells: &dyn Cells) -> Val {
    match e {
        Expr::Num(n) => Val::Num(*n),
        Expr::Str(s) => Val::Text(s.clone()),
        Expr::Bool(b) => Val::Bool(*b),
        Expr::Error(s) => Val::Error(s.clone()),
        Expr::Missing => Val::Empty,
        Expr::Name(_) => Val::Error(NAME.into()),
        Expr::Ref(sheet, c) => cells
            .cell(sheet.as_deref(), *c)
            .unwrap_or_else(|NoSuchSheet| Val::Error(REF.into())),
        Expr::Range(r) => {
            // A range used as one value: only a single cell works.
            if r.start == r.end {
                cells
                    .cell(r.sheet.as_deref(), r.start)
                    .unwrap_or_else(|NoSuchSheet| Val::Error(REF.into()))
            } else {
                Val::Error(VALUE.into())
            }
        }
        Expr::Neg(x) => match to_num(eval_scalar(x, cells)) {
            Ok(n) => Val::Num(-n),
            Err(e) => e,
        },
        Expr::Percent(x) => match to_num(eval_scalar(x, cells)) {
            Ok(n) => Val::Num(n / 100.0),
            Err(e) => e,
        },
        Expr::Bin(op, a, b) => binary(*op, eval_scalar(a, cells), eval_scalar(b, cells)),
        Expr::Call(name, args) => call(name, args, cells),
    }
}

/// Number of a value in arithmetic: empty = 0, TRUE = 1, numeric text parses, else #VALUE!.
fn to_num(v: Val) -> Result<f64, Val> {
    match v {
        Val::Empty => Ok(0.0),
        Val::Num(n) => Ok(n),
        Val::Bool(b) => Ok(if b { 1.0 } else { 0.0 }),
        Val::Text(s) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .ok_or(Val::Error(VALUE.into())),
        Val::Error(e) => Err(Val::Error(e)),
    }
}

fn to_bool(v: Val) -> Result<bool, Val> {
    match v {
        Val::Empty => Ok(false),
        Val::Bool(b) => Ok(b),
        Val::Num(n) => Ok(n != 0.0),
        Val::Text(s) => match s.trim().to_uppercase().as_str() {
            "TRUE" => Ok(true),
            "FALSE" => Ok(false),
            _ => Err(Val::Error(VALUE.into())),
        },
        Val::Error(e) => Err(Val::Error(e)),
    }
}

/// Text of a value in concatenation.
pub fn to_text(v: &Val) -> String {
    match v {
        Val::Empty => String::new(),
        Val::Num(n) => format_number(*n),
        Val::Text(s) => s.clone(),
        Val::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
        Val::Error(e) => e.clone(),
    }
}

/// A number the way a spreadsheet shows it in general format: `1250`, `0.5`, `-3.25`.
pub fn format_number(n: f64) -> String {
    if n == n.trunc() && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        let s = format!("{}", (n * 1e10).round() / 1e10);
        if s.parse::<f64>()
            .is_ok_and(|x| x == n || (x - n).abs() < 1e-9 * n.abs().max(1.0))
        {
            s
        } else {
            format!("{n}")
        }
    }
}

fn binary(op: Op, a: Val, b: Val) -> Val {
    if let Val::Error(e) = a {
        return Val::Error(e);
    }
    if let Val::Error(e) = b {
        return Val::Error(e);
    }
    match op {
        Op::Concat => Val::Text(to_text(&a) + &to_text(&b)),
        Op::Eq | Op::Ne | Op::Lt | Op::Gt | Op::Le | Op::Ge => {
            let ord = compare(&a, &b);
            Val::Bool(match op {
                Op::Eq => ord.is_eq(),
                Op::Ne => !ord.is_eq(),
                Op::Lt => ord.is_lt(),
                Op::Gt => ord.is_gt(),
                Op::Le => ord.is_le(),
                _ => ord.is_ge(),
            })
        }
        _ => {
            let (x, y) = match (to_num(a), to_num(b)) {
                (Ok(x), Ok(y)) => (x, y),
                (Err(e), _) | (_, Err(e)) => return e,
            };
            let r = match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div => {
                    if y == 0.0 {
                        return Val::Error(DIV0.into());
                    }
                    x / y
                }
                _ => {
                    if x == 0.0 && y < 0.0 {
                        return Val::Error(DIV0.into());
                    }
                    x.powf(y)
                }
            };
            if r.is_finite() {
                Val::Num(r)
            } else {
                Val::Error(NUM.into())
            }
        }
    }
}

/// Spreadsheet ordering: numbers < text (case-insensitive) < booleans; empty is 0 or "".
fn compare(a: &Val, b: &Val) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn rank(v: &Val) -> u8 {
        match v {
            Val::Num(_) | Val::Empty => 0,
            Val::Text(_) => 1,
            _ => 2,
        }
    }
    match (a, b) {
        (Val::Empty, Val::Text(t)) => "".cmp(t.to_lowercase().as_str()),
        (Val::Text(t), Val::Empty) => t.to_lowercase().as_str().cmp(""),
        (Val::Empty, Val::Bool(x)) => false.cmp(x),
        (Val::Bool(x), Val::Empty) => x.cmp(&false),
        _ => match (rank(a), rank(b)) {
            (0, 0) => {
                let x = if let Val::Num(n) = a { *n } else { 0.0 };
                let y = if let Val::Num(n) = b { *n } else { 0.0 };
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
            (1, 1) => to_text(a).to_lowercase().cmp(&to_text(b).to_lowercase()),
            (2, 2) => matches!(a, Val::Bool(true)).cmp(&matches!(b, Val::Bool(true))),
            (x, y) => x.cmp(&y),
        },
    }
}

/// Values of one function argument: a range gives its cells (`from_range` = true), anything
/// else one value.
fn arg_values(e: &Expr, cells: &dyn Cells) -> (Vec<Val>, bool) {
    match e {
        Expr::Range(r) => match cells.range(r) {
            Ok(v) => (v, true),
            Err(NoSuchSheet) => (vec![Val::Error(REF.into())], false),
        },
        Expr::Ref(sheet, c) => (
            vec![
                cells
                    .cell(sheet.as_deref(), *c)
                    .unwrap_or_else(|NoSuchSheet| Val::Error(REF.into())),
            ],
            true,
        ),
        other => (vec![eval_scalar(other, cells)], false),
    }
}

/// Numbers of the arguments the way SUM/AVERAGE/MIN/MAX see them: in ranges only numbers
/// count; direct arguments coerce (TRUE, "3"); errors propagate.
fn numbers(args: &[Expr], cells: &dyn Cells) -> Result<Vec<f64>, Val> {
    let mut out = Vec::new();
    for a in args {
        let (vals, from_range) = arg_values(a, cells);
        for v in vals {
            match v {
                Val::Error(e) => return Err(Val::Error(e)),
                Val::Num(n) => out.push(n),
                Val::Empty => {}
                other if !from_range => out.push(to_num(other)?),
                _ => {}
            }
        }
    }
    Ok(out)
}

fn arity(name: &str, args: &[Expr], min: usize, max: usize) -> Result<(), Val> {
    if args.len() < min || args.len() > max {
        Err(Val::Error(VALUE.into()))
    } else {
        let _ = name;
        Ok(())
    }
}

fn call(name: &str, args: &[Expr], cells: &dyn Cells) -> Val {
    match call_inner(name, args, cells) {
        Ok(v) => v,
        Err(e) => e,
    }
}

fn num_arg(e: &Expr, cells: &dyn Cells) -> Result<f64, Val> {
    to_num(eval_scalar(e, cells))
}

fn round_to(x: f64, digits: f64, mode: i8) -> f64 {
    let digits = digits.trunc().clamp(-15.0, 15.0) as i32;
    let f = 10f64.powi(digits);
    let scaled = x * f;
    // Guard against binary noise (2.675 → 267.49999…).
    let scaled_clean = (scaled * 1e9).round() / 1e9;
    let r = match mode {
        0 => scaled_clean.abs().round() * scaled_clean.signum(),
        1 => scaled_clean.abs().ceil() * scaled_clean.signum(),
        _ => scaled_clean.abs().floor() * scaled_clean.signum(),
    };
    r / f
}

/// A COUNTIF/SUMIF criterion: `">100"`, `"<>x"`, `"=North"`, `"North"`, or a value.
fn criterion_matches(crit: &Val, v: &Val) -> bool {
    let (op, operand) = match crit {
        Val::Text(s) => {
            let s = s.trim();
            let (op, rest) = ["<=", ">=", "<>", "<", ">", "="]
                .iter()
                .find_map(|op| s.strip_prefix(op).map(|r| (*op, r)))
                .unwrap_or(("=", s));
            let operand = match rest.trim().parse::<f64>() {
                Ok(n) => Val::Num(n),
                Err(_) => match rest.trim().to_uppercase().as_str() {
                    "TRUE" => Val::Bool(true),
                    "FALSE" => Val::Bool(false),
                    _ => Val::Text(rest.to_string()),
                },
            };
            (op, operand)
        }
        other => ("=", other.clone()),
    };
    if matches!(v, Val::Empty) {
        return op == "<>" && !matches!(operand, Val::Empty);
    }
    // Numbers only compare with numbers, text with text (as spreadsheets do).
    let same_kind = matches!(
        (&operand, v),
        (Val::Num(_), Val::Num(_)) | (Val::Text(_), Val::Text(_)) | (Val::Bool(_), Val::Bool(_))
    );
    if !same_kind {
        return op == "<>";
    }
    let ord = compare(v, &operand);
    match op {
        "=" => ord.is_eq(),
        "<>" => !ord.is_eq(),
        "<" => ord.is_lt(),
        ">" => ord.is_gt(),
        "<=" => ord.is_le(),
        _ => ord.is_ge(),
    }
}

/// All cells of a range including empty ones (row-major), bounded: used by SUMIF where
/// two ranges are walked side by side.
fn dense(r: &RangeRef, cells: &dyn Cells) -> Result<Vec<Val>, Val> {
    // Clip the range to the sheet's used area (whole columns stay cheap); cap the walk.
    let Some(last) = cells
        .extent(r.sheet.as_deref())
        .map_err(|NoSuchSheet| Val::Error(REF.into()))?
    else {
        return Ok(Vec::new());
    };
    if last.row < r.start.row || last.col < r.start.col {
        return Ok(Vec::new());
    }
    let rows = u64::from(r.end.row.min(last.row) - r.start.row) + 1;
    let cols = u64::from(r.end.col.min(last.col) - r.start.col) + 1;
    if rows * cols > 1_000_000 {
        return Err(Val::Error(NUM.into()));
    }
    let mut out = Vec::with_capacity((rows * cols) as usize);
    for dr in 0..rows as u32 {
        for dc in 0..cols as u32 {
            let c = CellRef::new(r.start.row + dr, r.start.col + dc);
            out.push(
                cells
                    .cell(r.sheet.as_deref(), c)
                    .map_err(|NoSuchSheet| Val::Error(REF.into()))?,
            );
        }
    }
    Ok(out)
}

fn range_arg(e: &Expr) -> Result<RangeRef, Val> {
    match e {
        Expr::Range(r) => Ok(r.clone()),
        Expr::Ref(sheet, c) => Ok(RangeRef {
            sheet: sheet.clone(),
            start: *c,
            end: *c,
        }),
        _ => Err(Val::Error(VALUE.into())),
    }
}

fn call_inner(name: &str, args: &[Expr], cells: &dyn Cells) -> Result<Val, Val> {
    Ok(match name {
        "SUM" => Val::Num(numbers(args, cells)?.iter().sum()),
        "PRODUCT" => Val::Num(numbers(args, cells)?.iter().product()),
        "AVERAGE" => {
            let n = numbers(args, cells)?;
            if n.is_empty() {
                return Err(Val::Error(DIV0.into()));
            }
            Val::Num(n.iter().sum::<f64>() / n.len() as f64)
        }
        "MIN" => Val::Num(
            numbers(args, cells)?
                .into_iter()
                .reduce(f64::min)
                .unwrap_or(0.0),
        ),
        "MAX" => Val::Num(
            numbers(args, cells)?
                .into_iter()
                .reduce(f64::max)
                .unwrap_or(0.0),
        ),
        "COUNT" => {
            let mut n = 0.0;
            for a in args {
                let (vals, from_range) = arg_values(a, cells);
                for v in vals {
                    match v {
                        Val::Num(_) => n += 1.0,
                        Val::Bool(_) if !from_range => n += 1.0,
                        Val::Text(s) if !from_range && s.trim().parse::<f64>().is_ok() => n += 1.0,
                        _ => {}
                    }
                }
            }
            Val::Num(n)
        }
        "COUNTA" => {
            let mut n = 0.0;
            for a in args {
                let (vals, _) = arg_values(a, cells);
                n += vals.iter().filter(|v| !matches!(v, Val::Empty)).count() as f64;
            }
            Val::Num(n)
        }
        "IF" => {
            arity(name, args, 1, 3)?;
            let cond = to_bool(eval_scalar(&args[0], cells))?;
            match (cond, args.get(1), args.get(2)) {
                (true, Some(e), _) => zero_if_empty(eval_scalar(e, cells)),
                (true, None, _) => Val::Bool(true),
                (false, _, Some(e)) => zero_if_empty(eval_scalar(e, cells)),
                (false, _, None) => Val::Bool(false),
            }
        }
        "IFERROR" => {
            arity(name, args, 2, 2)?;
            match eval_scalar(&args[0], cells) {
                Val::Error(_) => eval_scalar(&args[1], cells),
                v => v,
            }
        }
        "AND" | "OR" => {
            let mut vals = Vec::new();
            for a in args {
                let (vs, from_range) = arg_values(a, cells);
                for v in vs {
                    match v {
                        Val::Empty => {}
                        Val::Text(_) if from_range => {}
                        v => vals.push(to_bool(v)?),
                    }
                }
            }
            if vals.is_empty() {
                return Err(Val::Error(VALUE.into()));
            }
            Val::Bool(if name == "AND" {
                vals.iter().all(|b| *b)
            } else {
                vals.iter().any(|b| *b)
            })
        }
        "NOT" => {
            arity(name, args, 1, 1)?;
            Val::Bool(!to_bool(eval_scalar(&args[0], cells))?)
        }
        "ROUND" | "ROUNDUP" | "ROUNDDOWN" => {
            arity(name, args, 1, 2)?;
            let x = num_arg(&args[0], cells)?;
            let d = match args.get(1) {
                Some(e) => num_arg(e, cells)?,
                None => 0.0,
            };
            let mode = match name {
                "ROUND" => 0,
                "ROUNDUP" => 1,
                _ => 2,
            };
            Val::Num(round_to(x, d, mode))
        }
        "ABS" => {
            arity(name, args, 1, 1)?;
            Val::Num(num_arg(&args[0], cells)?.abs())
        }
        "INT" => {
            arity(name, args, 1, 1)?;
            Val::Num(num_arg(&args[0], cells)?.floor())
        }
        "MOD" => {
            arity(name, args, 2, 2)?;
            let x = num_arg(&args[0], cells)?;
            let y = num_arg(&args[1], cells)?;
            if y == 0.0 {
                return Err(Val::Error(DIV0.into()));
            }
            Val::Num(x - y * (x / y).floor())
        }
        "CONCAT" | "CONCATENATE" => {
            let mut s = String::new();
            for a in args {
                let (vals, _) = arg_values(a, cells);
                for v in vals {
                    if let Val::Error(e) = v {
                        return Err(Val::Error(e));
                    }
                    s.push_str(&to_text(&v));
                    if s.len() > 32_767 {
                        return Err(Val::Error(VALUE.into()));
                    }
                }
            }
            Val::Text(s)
        }
        "LEN" | "UPPER" | "LOWER" => {
            arity(name, args, 1, 1)?;
            let v = eval_scalar(&args[0], cells);
            if let Val::Error(e) = v {
                return Err(Val::Error(e));
            }
            let t = to_text(&v);
            match name {
                "LEN" => Val::Num(t.chars().count() as f64),
                "UPPER" => Val::Text(t.to_uppercase()),
                _ => Val::Text(t.to_lowercase()),
            }
        }
        "COUNTIF" => {
            arity(name, args, 2, 2)?;
            let r = range_arg(&args[0])?;
            let crit = eval_scalar(&args[1], cells);
            let vals = cells
                .range(&r)
                .map_err(|NoSuchSheet| Val::Error(REF.into()))?;
            let mut n = vals.iter().filter(|v| criterion_matches(&crit, v)).count() as f64;
            // Empty cells match "<>x" criteria too: count them from the range's area.
            if criterion_matches(&crit, &Val::Empty) {
                n += (r.rows() * r.cols()) as f64 - vals.len() as f64;
            }
            Val::Num(n)
        }
        "SUMIF" => {
            arity(name, args, 2, 3)?;
            let r = range_arg(&args[0])?;
            let crit = eval_scalar(&args[1], cells);
            let sum_range = match args.get(2) {
                Some(e) => {
                    let s = range_arg(e)?;
                    // The sum range has the criteria range's shape, from its top-left.
                    RangeRef {
                        sheet: s.sheet,
                        start: s.start,
                        end: CellRef::new(
                            (s.start.row + (r.end.row - r.start.row)).min(MAX_ROW),
                            (s.start.col + (r.end.col - r.start.col)).min(MAX_COL),
                        ),
                    }
                }
                None => r.clone(),
            };
            let crit_vals = dense(&r, cells)?;
            let sum_vals = dense(&sum_range, cells)?;
            let mut total = 0.0;
            for (c, s) in crit_vals.iter().zip(sum_vals.iter()) {
                if criterion_matches(&crit, c) {
                    match s {
                        Val::Num(n) => total += n,
                        Val::Error(e) => return Err(Val::Error(e.clone())),
                        _ => {}
                    }
                }
            }
            Val::Num(total)
        }
        _ => return Err(Val::Error(NAME.into())),
    })
}

fn zero_if_empty(v: Val) -> Val {
    if matches!(v, Val::Empty) {
        Val::Num(0.0)
    } else {
        v
    }
}
