//! Which workspace files a shell command reads and writes (for the dependency graph).
//!
//! The command (the `command` argument of `shell_run`) is tokenised like a POSIX shell does:
//! single quotes are literal, double quotes allow `\` escapes, `\` escapes outside quotes;
//! `;` `&&` `||` `|` `&` newlines and parentheses separate simple commands; `<<DELIM`
//! here-documents are skipped. Then, per simple command, in order:
//!
//! * redirections: `> f`, `>> f`, `&> f`, `2> f`, `>| f` write `f`; `< f` reads `f`; `2>&1`,
//!   `>&2` and here-strings (`<<< word`) name no file;
//! * leading `NAME=value` assignments and the wrappers `sudo`, `env`, `time`, `nice`,
//!   `nohup`, `command`, `exec` are skipped; `bash -c "..."` / `sh -c "..."` are parsed
//!   recursively; `cd dir` changes the directory later commands resolve paths against;
//! * `cp` and `mv`: every source file is read and its destination (the last argument, or
//!   `dest/<name>` when it is a folder, ends in `/` or there are several sources) written;
//! * `tee` and `touch`: every argument is written;
//! * `sed -i` / `perl -i`: every file argument is read and written (without `-i`: read);
//! * `dd`: `if=` is read, `of=` written;
//! * commands that only look at names or metadata name no file they read: `ls`, `find`,
//!   `stat`, `file`, `du`, `rm`, `rmdir`, `mkdir`, `chmod`, `chown`, `echo`, `printf`,
//!   `test`, `[`, `basename`, `dirname`, `realpath`, `readlink`, `which`, `pwd`;
//! * any other command (`cat`, `grep`, `python3 script.py`, `pandoc`, `awk`, ...): each argument
//!   that names a file which exists at that point is read; one that names a file which does
//!   not exist yet but exists at the end of the trial is written (the command made it:
//!   `python3 make.py data.csv out.md`, `pandoc in.md -o out.docx`). An argument that is not
//!   a path itself (inline code: `python3 -c "pd.read_csv('a.csv')"`, an awk program, `--in=a.csv`)
//!   is split at quotes, brackets, commas, `=`, `;` and spaces, and each piece is tried.
//!
//! Paths are resolved against the current directory (the workspace root at the start); an
//! absolute path counts when it lies under the workspace root. Words holding `*`, `?` or `[`
//! are expanded against the workspace's files (`*` and `?` do not cross `/`). Words with `$`,
//! `~` or a backquote (variables, home, command substitution) are not resolved.

use bureau_core::task::normalize_rel_path;

/// What the parser knows about the workspace at the point of the command.
pub trait FileState {
    /// The file exists now (before the command runs).
    fn exists_now(&self, path: &str) -> bool;
    /// The file exists at the end of the trial.
    fn exists_later(&self, path: &str) -> bool;
    /// The path is a folder (now or later).
    fn is_dir(&self, path: &str) -> bool;
    /// Files matching a glob pattern (workspace-relative), sorted.
    fn glob(&self, pattern: &str) -> Vec<String>;
    /// The workspace root as absolute paths may name it.
    fn roots(&self) -> &[String];
}

/// Reads and writes of one command, in order (a path may be both).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellAccess {
    pub reads: Vec<String>,
    pub writes: Vec<String>,
}

impl ShellAccess {
    fn read(&mut self, p: String) {
        if !self.reads.contains(&p) {
            self.reads.push(p);
        }
    }
    fn write(&mut self, p: String) {
        if !self.writes.contains(&p) {
            self.writes.push(p);
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A word; `quoted` when any part of it was quoted or escaped (not an operator or fd).
    Word(String, bool),
    /// A command separator.
    Sep,
    /// `>`-like (write) or `<` (read) redirection: the next word is its target.
    RedirOut,
    RedirIn,
    /// A redirection whose target is not a file (`2>&1`, `<<<`): the next word is skipped.
    RedirSkip,
}

/// Split a command line into tokens (see the module documentation).
fn tokenize(cmd: &str) -> Vec<Tok> {
    let chars: Vec<char> = cmd.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let mut heredocs: Vec<String> = Vec::new();
    let mut i = 0;
    let flush = |out: &mut Vec<Tok>, word: &mut String, in_word: &mut bool, quoted: &mut bool| {
        if *in_word {
            out.push(Tok::Word(std::mem::take(word), *quoted));
        }
        *in_word = false;
        *quoted = false;
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                in_word = true;
                quoted = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_word = true;
                quoted = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\'
                        && i + 1 < chars.len()
                        && matches!(chars[i + 1], '"' | '\\' | '$' | '`')
                    {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '\\' => {
                in_word = true;
                quoted = true;
                if i + 1 < chars.len() && chars[i + 1] != '\n' {
                    word.push(chars[i + 1]);
                }
                i += 2;
            }
            '#' if !in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ' ' | '\t' | '\r' => {
                flush(&mut out, &mut word, &mut in_word, &mut quoted);
                i += 1;
            }
            '\n' | ';' | '|' | '&' | '(' | ')' => {
                // `&>` / `&>>`: redirect both streams to a file.
                if c == '&' && chars.get(i + 1) == Some(&'>') {
                    flush(&mut out, &mut word, &mut in_word, &mut quoted);
                    i += 2;
                    if chars.get(i) == Some(&'>') {
                        i += 1;
                    }
                    out.push(Tok::RedirOut);
                    continue;
                }
                // `$(` is a command substitution inside a word: keep it in the word.
                if c == '(' && in_word && word.ends_with('$') {
                    word.push(c);
                    i += 1;
                    continue;
                }
                flush(&mut out, &mut word, &mut in_word, &mut quoted);
                out.push(Tok::Sep);
                i += 1;
                if c == '\n' && !heredocs.is_empty() {
                    // Skip the bodies of pending here-documents.
                    for delim in std::mem::take(&mut heredocs) {
                        loop {
                            let start = i;
                            while i < chars.len() && chars[i] != '\n' {
                                i += 1;
                            }
                            let line: String = chars[start..i].iter().collect();
                            i += 1;
                            if line.trim() == delim || i >= chars.len() {
                                break;
                            }
                        }
                    }
                }
            }
            '>' | '<' => {
                // A word of digits right before is a file descriptor (`2>`).
                let fd = in_word && !quoted && word.chars().all(|d| d.is_ascii_digit());
                if fd {
                    word.clear();
                    in_word = false;
                } else {
                    flush(&mut out, &mut word, &mut in_word, &mut quoted);
                }
                let mut j = i + 1;
                if c == '<' && chars.get(j) == Some(&'<') {
                    j += 1;
                    if chars.get(j) == Some(&'<') {
                        // Here-string: the next word is text.
                        out.push(Tok::RedirSkip);
                        i = j + 1;
                        continue;
                    }
                    // Here-document: remember the delimiter, skip its body at the newline.
                    if chars.get(j) == Some(&'-') {
                        j += 1;
                    }
                    while chars.get(j).is_some_and(|c| *c == ' ' || *c == '\t') {
                        j += 1;
                    }
                    let mut delim = String::new();
                    while let Some(&d) = chars.get(j) {
                        if d.is_whitespace() || matches!(d, ';' | '|' | '&' | '<' | '>') {
                            break;
                        }
                        if !matches!(d, '\'' | '"') {
                            delim.push(d);
                        }
                        j += 1;
                    }
                    heredocs.push(delim);
                    i = j;
                    continue;
                }
                if c == '>' && matches!(chars.get(j), Some(&'>') | Some(&'|')) {
                    j += 1;
                }
                if chars.get(j) == Some(&'&') {
                    // `2>&1`, `>&2`, `<&0`: a descriptor, not a file.
                    out.push(Tok::RedirSkip);
                    i = j + 1;
                    continue;
                }
                out.push(if c == '>' {
                    Tok::RedirOut
                } else {
                    Tok::RedirIn
                });
                i = j;
            }
            _ => {
                in_word = true;
                word.push(c);
                i += 1;
            }
        }
    }
    flush(&mut out, &mut word, &mut in_word, &mut quoted);
    out
}

/// Commands whose arguments are names, not files they read.
const NAME_ONLY: &[&str] = &[
    "ls", "find", "stat", "file", "du", "rm", "rmdir", "mkdir", "chmod", "chown", "echo", "printf",
    "test", "[", "basename", "dirname", "realpath", "readlink", "which", "pwd", "cd", "git",
    "tree", "unlink", "ln",
];
/// Wrappers that run the next word as the command.
const WRAPPERS: &[&str] = &[
    "sudo", "env", "time", "nice", "nohup", "command", "exec", "timeout",
];

struct Parser<'a> {
    state: &'a dyn FileState,
    cwd: String,
    /// Files written earlier in this command line (they exist for later commands).
    written: Vec<String>,
    access: ShellAccess,
}

impl Parser<'_> {
    /// A word as a workspace path (not checked for existence).
    fn resolve(&self, word: &str) -> Option<String> {
        let w = word.trim();
        if w.is_empty() || w.contains(['$', '`', '~', '\n']) || w == "-" {
            return None;
        }
        if w.starts_with('/') {
            for root in self.state.roots() {
                let root = root.trim_end_matches('/');
                if let Some(rest) = w.strip_prefix(root)
                    && (rest.is_empty() || rest.starts_with('/'))
                {
                    return normalize_rel_path(rest.trim_start_matches('/'));
                }
            }
            return None;
        }
        let joined = if self.cwd.is_empty() {
            w.to_string()
        } else {
            format!("{}/{w}", self.cwd)
        };
        normalize_rel_path(&joined)
    }

    fn exists_now(&self, p: &str) -> bool {
        self.state.exists_now(p) || self.written.iter().any(|w| w == p)
    }

    /// Paths a word names: itself, or its glob expansion.
    fn paths(&self, word: &str) -> Vec<String> {
        let Some(p) = self.resolve(word) else {
            return Vec::new();
        };
        if p.contains(['*', '?', '[']) {
            self.state.glob(&p)
        } else {
            vec![p]
        }
    }

    fn write(&mut self, p: String) {
        if !self.written.contains(&p) {
            self.written.push(p.clone());
        }
        self.access.write(p);
    }

    /// A generic argument: read if it exists now, written if it only exists later; a word
    /// that is no path is split into pieces and each piece tried.
    fn generic(&mut self, word: &str, split: bool) {
        let mut any = false;
        for p in self.paths(word) {
            if self.state.is_dir(&p) {
                any = true;
            } else if self.exists_now(&p) {
                self.access.read(p);
                any = true;
            } else if self.state.exists_later(&p) {
                self.write(p);
                any = true;
            }
        }
        if !any && split {
            let pieces: Vec<String> = word
                .split(|c: char| {
                    c.is_whitespace()
                        || matches!(
                            c,
                            '\'' | '"'
                                | '('
                                | ')'
                                | '['
                                | ']'
                                | '{'
                                | '}'
                                | ','
                                | '='
                                | ';'
                                | '<'
                                | '>'
                                | '|'
                                | '`'
                                | ':'
                        )
                })
                .filter(|p| !p.is_empty() && *p != word)
                .map(String::from)
                .collect();
            for piece in pieces {
                self.generic(&piece, false);
            }
        }
    }

    fn run(&mut self, tokens: &[Tok]) {
        for cmd in tokens.split(|t| *t == Tok::Sep) {
            self.simple(cmd);
        }
    }

    fn simple(&mut self, cmd: &[Tok]) {
        let mut words: Vec<String> = Vec::new();
        let mut i = 0;
        while i < cmd.len() {
            match &cmd[i] {
                Tok::Word(w, _) => words.push(w.clone()),
                Tok::RedirOut => {
                    if let Some(Tok::Word(w, _)) = cmd.get(i + 1) {
                        for p in self.paths(w) {
                            self.write(p);
                        }
                        i += 1;
                    }
                }
                Tok::RedirIn => {
                    if let Some(Tok::Word(w, _)) = cmd.get(i + 1) {
                        for p in self.paths(w) {
                            if self.exists_now(&p) && !self.state.is_dir(&p) {
                                self.access.read(p);
                            }
                        }
                        i += 1;
                    }
                }
                Tok::RedirSkip => {
                    if matches!(cmd.get(i + 1), Some(Tok::Word(..))) {
                        i += 1;
                    }
                }
                Tok::Sep => {}
            }
            i += 1;
        }
        // Assignments and wrappers before the command word.
        let mut start = 0;
        while start < words.len() {
            let w = &words[start];
            let assignment = w.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
            if assignment || WRAPPERS.contains(&w.as_str()) || (start > 0 && w.starts_with('-')) {
                start += 1;
            } else {
                break;
            }
        }
        let Some(name) = words.get(start) else {
            return;
        };
        let name = name.rsplit('/').next().unwrap_or(name).to_string();
        let args: Vec<String> = words[start + 1..].to_vec();
        let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        match name.as_str() {
            "cd" => {
                let target = operands.first().map(|s| s.as_str()).unwrap_or("");
                self.cwd = if target.is_empty() {
                    String::new()
                } else {
                    self.resolve(target).unwrap_or_default()
                };
            }
            "bash" | "sh" | "zsh" | "dash" => {
                if let Some(pos) = args.iter().position(|a| a == "-c")
                    && let Some(script) = args.get(pos + 1)
                {
                    let tokens = tokenize(script);
                    self.run(&tokens);
                } else {
                    for a in &operands {
                        self.generic(a, false);
                    }
                }
            }
            "cp" | "mv" if operands.len() >= 2 => {
                let Some((dest, sources)) = operands.split_last() else {
                    return;
                };
                let Some(dest_path) = self.resolve(dest) else {
                    return;
                };
                let into_dir =
                    sources.len() > 1 || dest.ends_with('/') || self.state.is_dir(&dest_path);
                for src in sources.iter() {
                    for sp in self.paths(src) {
                        if self.state.is_dir(&sp) || !self.exists_now(&sp) {
                            continue;
                        }
                        let target = if into_dir {
                            let base = sp.rsplit('/').next().unwrap_or(&sp);
                            format!("{dest_path}/{base}")
                        } else {
                            dest_path.clone()
                        };
                        self.access.read(sp);
                        self.write(target);
                    }
                }
            }
            "tee" | "touch" => {
                for a in operands {
                    for p in self.paths(a) {
                        self.write(p);
                    }
                }
            }
            "sed" | "perl" => {
                // `-i`, `-i.bak`, `--in-place`; perl also bundles it (`-pi`, `-pi.bak`).
                let in_place = args.iter().any(|a| {
                    a.starts_with("-i")
                        || a.starts_with("--in-place")
                        || (name == "perl"
                            && a.starts_with('-')
                            && !a.starts_with("--")
                            && a.contains('i'))
                });
                for a in operands {
                    for p in self.paths(a) {
                        if self.exists_now(&p) && !self.state.is_dir(&p) {
                            self.access.read(p.clone());
                            if in_place {
                                self.write(p);
                            }
                        }
                    }
                }
            }
            "dd" => {
                for a in &args {
                    if let Some(f) = a.strip_prefix("if=") {
                        for p in self.paths(f) {
                            if self.exists_now(&p) {
                                self.access.read(p);
                            }
                        }
                    } else if let Some(f) = a.strip_prefix("of=") {
                        for p in self.paths(f) {
                            self.write(p);
                        }
                    }
                }
            }
            n if NAME_ONLY.contains(&n) => {}
            _ => {
                for a in &args {
                    self.generic(a, true);
                }
            }
        }
    }
}

/// The files `command`, run in the workspace root, reads and writes.
pub fn shell_accesses(command: &str, state: &dyn FileState) -> ShellAccess {
    let mut p = Parser {
        state,
        cwd: String::new(),
        written: Vec::new(),
        access: ShellAccess::default(),
    };
    let tokens = tokenize(command);
    p.run(&tokens);
    p.access
}

/// Whether `path` matches `pattern` (`*` any run of characters but `/`, `?` one character
/// but `/`, `[...]` one of a set), both workspace-relative.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    fn go(p: &[char], s: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('*') => {
                let mut k = 0;
                loop {
                    if go(&p[1..], &s[k..]) {
                        return true;
                    }
                    if k >= s.len() || s[k] == '/' {
                        return false;
                    }
                    k += 1;
                }
            }
            Some('?') => !s.is_empty() && s[0] != '/' && go(&p[1..], &s[1..]),
            Some('[') => {
                let Some(close) = p.iter().position(|c| *c == ']') else {
                    return !s.is_empty() && s[0] == '[' && go(&p[1..], &s[1..]);
                };
                let set = &p[1..close];
                let (negate, set) = match set.first() {
                    Some('!') | Some('^') => (true, &set[1..]),
                    _ => (false, set),
                };
                let Some(&c) = s.first() else {
                    return false;
                };
                let mut hit = false;
                let mut k = 0;
                while k < set.len() {
                    if k + 2 < set.len() && set[k + 1] == '-' {
                        hit |= set[k] <= c && c <= set[k + 2];
                        k += 3;
                    } else {
                        hit |= set[k] == c;
                        k += 1;
                    }
                }
                hit != negate && c != '/' && go(&p[close + 1..], &s[1..])
            }
            Some(&c) => s.first() == Some(&c) && go(&p[1..], &s[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = path.chars().collect();
    go(&p, &s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    struct Ws {
        now: BTreeSet<String>,
        later: BTreeSet<String>,
        dirs: BTreeSet<String>,
        roots: Vec<String>,
    }

    impl FileState for Ws {
        fn exists_now(&self, p: &str) -> bool {
            self.now.contains(p)
        }
        fn exists_later(&self, p: &str) -> bool {
            self.later.contains(p)
        }
        fn is_dir(&self, p: &str) -> bool {
            self.dirs.contains(p)
        }
        fn glob(&self, pattern: &str) -> Vec<String> {
            self.now
                .iter()
                .filter(|f| glob_match(pattern, f))
                .cloned()
                .collect()
        }
        fn roots(&self) -> &[String] {
            &self.roots
        }
    }

    fn ws() -> Ws {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<BTreeSet<_>>();
        Ws {
            now: s(&[
                "data/q1.csv",
                "data/q2.csv",
                "data/notes.md",
                "scripts/make.py",
                "report.md",
                "a b.txt",
            ]),
            later: s(&["out/summary.md", "out.docx", "result.csv", "report.md"]),
            dirs: s(&["data", "out", "scripts"]),
            roots: vec!["/work/ws".into()],
        }
    }

    /// The shell rules, as a table: (command, reads, writes).
    #[test]
    fn shell_command_table() {
        let table: &[(&str, &[&str], &[&str])] = &[
            ("cat data/q1.csv", &["data/q1.csv"], &[]),
            (
                "cat data/q1.csv data/q2.csv > out/summary.md",
                &["data/q1.csv", "data/q2.csv"],
                &["out/summary.md"],
            ),
            (
                "cat data/q1.csv >> out/summary.md",
                &["data/q1.csv"],
                &["out/summary.md"],
            ),
            (
                "sort < data/q1.csv > result.csv 2>&1",
                &["data/q1.csv"],
                &["result.csv"],
            ),
            ("grep -c x data/q1.csv 2> /dev/null", &["data/q1.csv"], &[]),
            ("cp data/q1.csv out/", &["data/q1.csv"], &["out/q1.csv"]),
            ("cp data/q1.csv out", &["data/q1.csv"], &["out/q1.csv"]),
            (
                "cp -v data/q1.csv result.csv",
                &["data/q1.csv"],
                &["result.csv"],
            ),
            (
                "cp data/q1.csv data/q2.csv out",
                &["data/q1.csv", "data/q2.csv"],
                &["out/q1.csv", "out/q2.csv"],
            ),
            (
                "mv report.md out/summary.md",
                &["report.md"],
                &["out/summary.md"],
            ),
            (
                "cat data/notes.md | tee out/summary.md | wc -l",
                &["data/notes.md"],
                &["out/summary.md"],
            ),
            ("sed -i 's/a/b/' report.md", &["report.md"], &["report.md"]),
            ("sed -n 1,5p report.md", &["report.md"], &[]),
            (
                "sed -i.bak -e 's/x/y/' data/notes.md",
                &["data/notes.md"],
                &["data/notes.md"],
            ),
            (
                "python3 scripts/make.py data/q1.csv out/summary.md",
                &["scripts/make.py", "data/q1.csv"],
                &["out/summary.md"],
            ),
            (
                "python3 -c \"import pandas as pd; pd.read_csv('data/q2.csv').to_csv('result.csv')\"",
                &["data/q2.csv"],
                &["result.csv"],
            ),
            (
                "pandoc report.md -o out.docx",
                &["report.md"],
                &["out.docx"],
            ),
            (
                "cd data && cat q1.csv notes.md",
                &["data/q1.csv", "data/notes.md"],
                &[],
            ),
            (
                "cd data; cat ../report.md > ../result.csv",
                &["report.md"],
                &["result.csv"],
            ),
            ("cat /work/ws/data/q1.csv > /tmp/x", &["data/q1.csv"], &[]),
            ("cat ./data//q1.csv", &["data/q1.csv"], &[]),
            ("cat data/*.csv", &["data/q1.csv", "data/q2.csv"], &[]),
            (
                "head -n 3 data/q?.csv",
                &["data/q1.csv", "data/q2.csv"],
                &[],
            ),
            ("cat 'a b.txt'", &["a b.txt"], &[]),
            ("cat a\\ b.txt", &["a b.txt"], &[]),
            (
                "bash -c 'cat data/q1.csv > result.csv'",
                &["data/q1.csv"],
                &["result.csv"],
            ),
            ("FOO=1 env LC_ALL=C sort data/q1.csv", &["data/q1.csv"], &[]),
            (
                "ls data/q1.csv; rm data/q2.csv; find data -name '*.csv'",
                &[],
                &[],
            ),
            ("touch out/summary.md", &[], &["out/summary.md"]),
            (
                "dd if=data/q1.csv of=result.csv",
                &["data/q1.csv"],
                &["result.csv"],
            ),
            (
                "cat <<EOF > out/summary.md\ndata/q1.csv is not read here\nEOF\ncat report.md",
                &["report.md"],
                &["out/summary.md"],
            ),
            ("wc -l <<< data/q1.csv", &[], &[]),
            ("echo data/q1.csv > result.csv", &[], &["result.csv"]),
            ("cat $HOME/data/q1.csv ~/x data/missing.csv", &[], &[]),
            ("cat ../outside.csv /etc/passwd", &[], &[]),
            (
                "cat data/q1.csv > result.csv && cat result.csv",
                &["data/q1.csv", "result.csv"],
                &["result.csv"],
            ),
            (
                "cat data/q1.csv &> result.csv # cat data/q2.csv",
                &["data/q1.csv"],
                &["result.csv"],
            ),
            (
                "awk -F, '{s+=$2} END {print s}' data/q1.csv",
                &["data/q1.csv"],
                &[],
            ),
            ("(cd data && cat q2.csv)", &["data/q2.csv"], &[]),
        ];
        let state = ws();
        for (cmd, reads, writes) in table {
            let got = shell_accesses(cmd, &state);
            let want = ShellAccess {
                reads: reads.iter().map(|s| s.to_string()).collect(),
                writes: writes.iter().map(|s| s.to_string()).collect(),
            };
            assert_eq!(got, want, "command: {cmd}");
        }
    }

    #[test]
    fn globs_stay_within_a_folder() {
        assert!(glob_match("data/*.csv", "data/q1.csv"));
        assert!(!glob_match("data/*.csv", "data/sub/q1.csv"));
        assert!(!glob_match("*.csv", "data/q1.csv"));
        assert!(glob_match("data/q[12].csv", "data/q2.csv"));
        assert!(!glob_match("data/q[!12].csv", "data/q2.csv"));
        assert!(glob_match("data/q[0-9].csv", "data/q7.csv"));
        assert!(glob_match("?ata/q1.csv", "data/q1.csv"));
    }

    proptest::proptest! {
        /// Agents send arbitrary text: parsing never panics, and every path it reports is a
        /// normalised workspace path.
        #[test]
        fn any_command_parses_to_workspace_paths(cmd in "[ -~\n]{0,80}") {
            let state = ws();
            let a = shell_accesses(&cmd, &state);
            for p in a.reads.iter().chain(&a.writes) {
                let normal = normalize_rel_path(p);
                proptest::prop_assert_eq!(normal.as_deref(), Some(p.as_str()));
            }
        }

        #[test]
        fn globs_never_panic(pattern in "[a-z*?\\[\\]!/-]{0,12}", path in "[a-z/]{0,12}") {
            let _ = glob_match(&pattern, &path);
        }
    }
}
