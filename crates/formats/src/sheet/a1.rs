//! A1 references: `B7`, `$B$7`, ranges `A1:C10`, whole columns `B:B`, sheet-qualified
//! `Sheet2!A1` and `'Q1 Budget'!A1:B2`; column letters ↔ 0-based index.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Largest column index (XFD, Excel's limit), 0-based.
pub const MAX_COL: u32 = 16_383;
/// Largest row index (1,048,576 rows), 0-based.
pub const MAX_ROW: u32 = 1_048_575;

/// Column letters for a 0-based index: 0 → `A`, 25 → `Z`, 26 → `AA`.
pub fn col_letters(mut col: u32) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'A' + (col % 26) as u8);
        if col < 26 {
            break;
        }
        col = col / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// 0-based index of column letters (case-insensitive): `A` → 0, `AA` → 26. `None` when
/// empty, not letters, or beyond `XFD`.
pub fn col_index(letters: &str) -> Option<u32> {
    if letters.is_empty() || letters.len() > 3 {
        return None;
    }
    let mut n: u32 = 0;
    for b in letters.bytes() {
        if !b.is_ascii_alphabetic() {
            return None;
        }
        n = n * 26 + u32::from(b.to_ascii_uppercase() - b'A') + 1;
    }
    let idx = n - 1;
    (idx <= MAX_COL).then_some(idx)
}

/// One cell's position, 0-based. Ordered row-major (row, then column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellRef {
    pub row: u32,
    pub col: u32,
}

impl CellRef {
    pub fn new(row: u32, col: u32) -> CellRef {
        CellRef { row, col }
    }

    /// Parse `B7` or `$B$7` (case-insensitive).
    pub fn parse(s: &str) -> Option<CellRef> {
        let s = s.trim();
        let b = s.as_bytes();
        let mut i = 0;
        if b.get(i) == Some(&b'$') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
        let col = col_index(&s[start..i])?;
        if b.get(i) == Some(&b'$') {
            i += 1;
        }
        let digits = &s[i..];
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) || digits.len() > 7 {
            return None;
        }
        let row: u32 = digits.parse().ok()?;
        if row == 0 || row - 1 > MAX_ROW {
            return None;
        }
        Some(CellRef { row: row - 1, col })
    }
}

impl fmt::Display for CellRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", col_letters(self.col), self.row + 1)
    }
}

impl Serialize for CellRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for CellRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CellRef, D::Error> {
        let s = String::deserialize(d)?;
        CellRef::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("not an A1 cell reference: {s:?}")))
    }
}

/// A rectangular range, optionally on a named sheet. `start` is the top-left corner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeRef {
    pub sheet: Option<String>,
    pub start: CellRef,
    pub end: CellRef,
}

impl RangeRef {
    /// Parse `A1`, `A1:C10`, `B:B`, `2:2`, `Sheet2!A1:B3`, `'My sheet'!C4`. Corners are
    /// normalised so that `start` is the top-left.
    pub fn parse(s: &str) -> Option<RangeRef> {
        let s = s.trim();
        let (sheet, rest) = split_sheet(s)?;
        let (a, b) = match rest.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (rest, None),
        };
        let (start, end) = match b {
            None => {
                let c = CellRef::parse(a)?;
                (c, c)
            }
            Some(b) => {
                if let (Some(x), Some(y)) = (CellRef::parse(a), CellRef::parse(b)) {
                    (x, y)
                } else if let (Some(x), Some(y)) = (col_only(a), col_only(b)) {
                    (CellRef::new(0, x), CellRef::new(MAX_ROW, y))
                } else if let (Some(x), Some(y)) = (row_only(a), row_only(b)) {
                    (CellRef::new(x, 0), CellRef::new(y, MAX_COL))
                } else {
                    return None;
                }
            }
        };
        Some(RangeRef {
            sheet,
            start: CellRef::new(start.row.min(end.row), start.col.min(end.col)),
            end: CellRef::new(start.row.max(end.row), start.col.max(end.col)),
        })
    }

    pub fn contains(&self, c: CellRef) -> bool {
        c.row >= self.start.row
            && c.row <= self.end.row
            && c.col >= self.start.col
            && c.col <= self.end.col
    }

    pub fn rows(&self) -> u64 {
        u64::from(self.end.row - self.start.row) + 1
    }

    pub fn cols(&self) -> u64 {
        u64::from(self.end.col - self.start.col) + 1
    }
}

impl fmt::Display for RangeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.sheet {
            write!(f, "{}!", quote_sheet(s))?;
        }
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}:{}", self.start, self.end)
        }
    }
}

/// A sheet name as written in a reference: quoted when it is not a plain word.
pub fn quote_sheet(name: &str) -> String {
    let plain = !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && CellRef::parse(name).is_none();
    if plain {
        name.to_string()
    } else {
        format!("'{}'", name.replace('\'', "''"))
    }
}

/// Split `Sheet!rest` / `'Sheet name'!rest`; no `!` means no sheet. `None` when malformed.
fn split_sheet(s: &str) -> Option<(Option<String>, &str)> {
    if let Some(rest) = s.strip_prefix('\'') {
        // Quoted: '' is an escaped quote.
        let mut name = String::new();
        let mut chars = rest.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if let Some((_, '\'')) = chars.peek() {
                    chars.next();
                    name.push('\'');
                    continue;
                }
                let after = &rest[i + 1..];
                return after.strip_prefix('!').map(|r| (Some(name), r));
            }
            name.push(c);
        }
        None
    } else if let Some((sheet, rest)) = s.rsplit_once('!') {
        (!sheet.is_empty()).then(|| (Some(sheet.to_string()), rest))
    } else {
        Some((None, s))
    }
}

fn col_only(s: &str) -> Option<u32> {
    col_index(s.strip_prefix('$').unwrap_or(s))
}

fn row_only(s: &str) -> Option<u32> {
    let s = s.strip_prefix('$').unwrap_or(s);
    if s.is_empty() || s.len() > 7 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = s.parse().ok()?;
    (n >= 1 && n - 1 <= MAX_ROW).then(|| n - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn letters() {
        assert_eq!(col_letters(0), "A");
        assert_eq!(col_letters(25), "Z");
        assert_eq!(col_letters(26), "AA");
        assert_eq!(col_letters(701), "ZZ");
        assert_eq!(col_letters(702), "AAA");
        assert_eq!(col_letters(MAX_COL), "XFD");
        assert_eq!(col_index("xfd"), Some(MAX_COL));
        assert_eq!(col_index("XFE"), None);
        assert_eq!(col_index(""), None);
        assert_eq!(col_index("A1"), None);
    }

    #[test]
    fn cells_and_ranges() {
        assert_eq!(CellRef::parse("B7"), Some(CellRef::new(6, 1)));
        assert_eq!(CellRef::parse("$b$7"), Some(CellRef::new(6, 1)));
        assert_eq!(CellRef::parse("B0"), None);
        assert_eq!(CellRef::parse("7B"), None);
        assert_eq!(CellRef::parse("B1048577"), None);
        let r = RangeRef::parse("C10:A1").unwrap();
        assert_eq!(r.to_string(), "A1:C10");
        assert_eq!((r.rows(), r.cols()), (10, 3));
        let r = RangeRef::parse("Sheet2!A1").unwrap();
        assert_eq!(r.sheet.as_deref(), Some("Sheet2"));
        let r = RangeRef::parse("'Q1 ''draft'''!B2:B3").unwrap();
        assert_eq!(r.sheet.as_deref(), Some("Q1 'draft'"));
        assert_eq!(r.to_string(), "'Q1 ''draft'''!B2:B3");
        let r = RangeRef::parse("B:B").unwrap();
        assert_eq!(
            (r.start, r.end),
            (CellRef::new(0, 1), CellRef::new(MAX_ROW, 1))
        );
        let r = RangeRef::parse("2:3").unwrap();
        assert_eq!(r.cols(), u64::from(MAX_COL) + 1);
        assert_eq!(RangeRef::parse("A1:"), None);
        assert_eq!(RangeRef::parse("!A1"), None);
        assert_eq!(RangeRef::parse("hello"), None);
    }

    proptest! {
        #[test]
        fn column_letters_round_trip(col in 0u32..=MAX_COL) {
            prop_assert_eq!(col_index(&col_letters(col)), Some(col));
        }

        #[test]
        fn cell_refs_round_trip(row in 0u32..=MAX_ROW, col in 0u32..=MAX_COL) {
            let c = CellRef::new(row, col);
            prop_assert_eq!(CellRef::parse(&c.to_string()), Some(c));
        }

        #[test]
        fn ranges_round_trip(r1 in 0u32..5000, c1 in 0u32..800, r2 in 0u32..5000, c2 in 0u32..800,
                             sheet in proptest::option::of("[A-Za-z][A-Za-z0-9 ']{0,12}")) {
            let r = RangeRef {
                sheet,
                start: CellRef::new(r1.min(r2), c1.min(c2)),
                end: CellRef::new(r1.max(r2), c1.max(c2)),
            };
            prop_assert_eq!(RangeRef::parse(&r.to_string()), Some(r));
        }
    }
}
