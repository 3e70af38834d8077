//! A compiled `checks.star`.
//!
//! [`CheckProgram::compile`] parses the file (Starlark, the "extended" dialect: f-strings and
//! type annotations allowed), refuses `load()` (checks are self-contained), runs its top level
//! once with Bureau's helper globals and freezes the result. The frozen module is shared by every
//! evaluation: a check only runs its own function, against a fresh heap.
//!
//! [`load_checks`] ties a task's rubric to its program: every `check = "name"` must name a
//! top-level `def name(w):`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bureau_core::error::{Location, TaskError, TaskErrors};
use bureau_core::task::{Evaluator as ItemEvaluator, Task};
use starlark::environment::{FrozenModule, Module};
use starlark::eval::Evaluator;
use starlark::syntax::ast::{ParameterP, Stmt};
use starlark::syntax::{AstModule, Dialect};
use starlark::values::OwnedFrozenValue;

use crate::globals;

/// Limits on running the top level of `checks.star` (it should only define functions).
const TOP_LEVEL_MAX_TICKS: u64 = 1_000_000;
/// Wall-clock time the top level of checks.star may take (in its isolated trial run).
const TOP_LEVEL_WALL: std::time::Duration = std::time::Duration::from_secs(20);
/// Memory the top level's isolated trial run may map beyond the loading process.
const TOP_LEVEL_MEMORY_BYTES: u64 = 1 << 30;

/// Problems found compiling a `checks.star`, each as `path:line:col: what — what to do`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", TaskErrors(.errors.clone()))]
pub struct CheckError {
    pub errors: Vec<TaskError>,
}

impl From<CheckError> for TaskErrors {
    fn from(e: CheckError) -> TaskErrors {
        TaskErrors(e.errors)
    }
}

impl From<TaskError> for CheckError {
    fn from(e: TaskError) -> CheckError {
        CheckError { errors: vec![e] }
    }
}

/// One top-level `def` of `checks.star`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FunctionInfo {
    /// Whether it can be called with exactly one positional argument (`def name(w)`).
    pub one_arg: bool,
    pub location: Location,
}

/// A compiled `checks.star`: its frozen module and the signatures of its top-level functions.
pub struct CheckProgram {
    path: PathBuf,
    /// The text compiled (the checks' process compiles it again: it holds no frozen module).
    source: String,
    module: FrozenModule,
    functions: BTreeMap<String, FunctionInfo>,
}

impl std::fmt::Debug for CheckProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckProgram")
            .field("path", &self.path)
            .field("functions", &self.functions.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl CheckProgram {
    /// Compile `source` (the text of the file at `path`, used in messages).
    pub fn compile(path: &Path, source: &str) -> Result<CheckProgram, CheckError> {
        Self::compile_with(path, source, true)
    }

    /// Compile `source` that [`CheckProgram::compile`] already accepted, in the checks'
    /// isolated process: its top level is not tried first in a process of its own (there is
    /// nothing left to protect).
    pub(crate) fn compile_trusted(path: &Path, source: &str) -> Result<CheckProgram, CheckError> {
        Self::compile_with(path, source, false)
    }

    fn compile_with(
        path: &Path,
        source: &str,
        try_top_level: bool,
    ) -> Result<CheckProgram, CheckError> {
        let filename = path.display().to_string();
        let ast = AstModule::parse(&filename, source.to_owned(), &Dialect::Extended).map_err(
            |e| {
                CheckError::from(starlark_error(
                    path,
                    &e,
                    "fix the Starlark syntax here (Starlark is a small Python: def, if, for, list and dict comprehensions; no while, class or try)",
                ))
            },
        )?;

        let mut errors = Vec::new();
        for load in ast.loads() {
            let pos = load.span.resolve_span().begin;
            errors.push(TaskError::new(
                Location {
                    path: path.to_path_buf(),
                    line: pos.line + 1,
                    col: pos.column + 1,
                },
                format!("`load(\"{}\", ...)` is not allowed", load.module_id),
                "checks are self-contained: copy the functions you need into checks.star",
            ));
        }
        if !errors.is_empty() {
            return Err(CheckError { errors });
        }

        let mut functions = BTreeMap::new();
        collect_defs(&ast, path, &mut functions);

        // The top level runs once, here, in this process: try it first in an isolated child,
        // so that a top level that would abort or hang the process is an error of the task.
        // (Its Starlark errors are reported by the real run below, identically.)
        let trial_ast = ast.clone();
        // Initialise the shared globals here, before the fork, not in the child.
        let _ = globals::helpers();
        let isolation = bureau_isolate::Limits::new(TOP_LEVEL_WALL, TOP_LEVEL_MEMORY_BYTES);
        if try_top_level
            && let Err(e) = bureau_isolate::run_isolated(&isolation, move || {
                let discard = globals::DiscardPrints;
                Module::with_temp_heap(|module| {
                    let mut eval = Evaluator::new(&module);
                    eval.set_print_handler(&discard);
                    if eval.set_max_tick_count(TOP_LEVEL_MAX_TICKS).is_err() {
                        return false;
                    }
                    eval.eval_module(trial_ast.clone(), globals::helpers())
                        .is_ok()
                })
            })
        {
            let what = e.to_string();
            return Err(CheckError::from(TaskError::new(
                Location {
                    path: path.to_path_buf(),
                    line: 1,
                    col: 1,
                },
                format!(
                    "loading checks.star was stopped: its top level {}",
                    what.strip_prefix("it ").unwrap_or(&what)
                ),
                "the top level of checks.star runs once at load time; keep it to `def`s and constants",
            )));
        }

        let discard = globals::DiscardPrints;
        let module = Module::with_temp_heap(|module| {
            {
                let mut eval = Evaluator::new(&module);
                eval.set_print_handler(&discard);
                eval.set_max_tick_count(TOP_LEVEL_MAX_TICKS)
                    .map_err(|e| internal(path, e))?;
                eval.eval_module(ast, globals::helpers()).map_err(|e| {
                    starlark_error(
                        path,
                        &e,
                        "the top level of checks.star runs once at load time; keep it to `def`s and constants",
                    )
                })?;
            }
            module.freeze().map_err(|e| internal(path, e.err_msg))
        })?;

        Ok(CheckProgram {
            path: path.to_path_buf(),
            source: source.to_string(),
            module,
            functions,
        })
    }

    /// Names of the top-level `def`s, sorted.
    pub fn functions(&self) -> Vec<String> {
        self.functions.keys().cloned().collect()
    }

    /// The path the program was compiled from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The text the program was compiled from.
    pub fn source(&self) -> &str {
        &self.source
    }

    pub(crate) fn function_info(&self, name: &str) -> Option<&FunctionInfo> {
        self.functions.get(name)
    }

    /// The frozen function value `name`, if it is a top-level `def`.
    pub(crate) fn function(&self, name: &str) -> Option<OwnedFrozenValue> {
        if !self.functions.contains_key(name) {
            return None;
        }
        self.module.get(name).ok()
    }
}

/// Compile `task.checks` and check that every rubric item's `check = "name"` names a top-level
/// function of one parameter. `Ok(None)` when the task has no `checks.star`.
///
/// A program that compiles is also compiled once in the zygote ([`prepared`]), so that the
/// processes that run its checks find it there instead of compiling it for every evaluation.
pub fn load_checks(task: &Task) -> Result<Option<CheckProgram>, TaskErrors> {
    let program = match &task.checks {
        Some((path, source)) => {
            let p = CheckProgram::compile(path, source)?;
            prepared::offer(path, source);
            Some(p)
        }
        None => None,
    };
    let mut errors = Vec::new();
    for item in &task.rubric {
        let name = match &item.evaluator {
            ItemEvaluator::Check(name) => name,
            ItemEvaluator::Judge(bureau_core::task::JudgeSpec {
                twin: Some(name), ..
            }) => name,
            _ => continue,
        };
        match &program {
            None => errors.push(TaskError::new(
                item.location.clone(),
                format!("rubric item `{}` uses check `{name}` but the task has no checks.star", item.id),
                format!("create checks.star beside task.toml with `def {name}(w):`"),
            )),
            Some(p) => match p.function_info(name) {
                None => {
                    let defined = p.functions();
                    let defined = if defined.is_empty() {
                        "none".to_string()
                    } else {
                        defined.join(", ")
                    };
                    errors.push(TaskError::new(
                        item.location.clone(),
                        format!("unknown Starlark function `{name}`"),
                        format!("define `def {name}(w):` in checks.star (defined: {defined})"),
                    ));
                }
                Some(info) if !info.one_arg => errors.push(TaskError::new(
                    info.location.clone(),
                    format!("check `{name}` (used by rubric item `{}`) does not take exactly one argument", item.id),
                    format!("write it as `def {name}(w):` — it receives the world view `w`"),
                )),
                Some(_) => {}
            },
        }
    }
    if errors.is_empty() {
        Ok(program)
    } else {
        Err(TaskErrors(errors))
    }
}

/// Top-level `def`s of the module with whether they accept one positional argument.
fn collect_defs(ast: &AstModule, path: &Path, out: &mut BTreeMap<String, FunctionInfo>) {
    let stmts: Vec<&starlark::syntax::ast::AstStmt> = match &ast.statement().node {
        Stmt::Statements(v) => v.iter().collect(),
        _ => vec![ast.statement()],
    };
    for stmt in stmts {
        let Stmt::Def(def) = &stmt.node else {
            continue;
        };
        let mut positional = 0usize;
        let mut required_positional = 0usize;
        let mut required_named = 0usize;
        let mut varargs = false;
        let mut after_star = false;
        for p in &def.params {
            match &p.node {
                ParameterP::Normal(_, _, default) => {
                    if after_star {
                        if default.is_none() {
                            required_named += 1;
                        }
                    } else {
                        positional += 1;
                        if default.is_none() {
                            required_positional += 1;
                        }
                    }
                }
                ParameterP::Args(..) => {
                    varargs = true;
                    after_star = true;
                }
                ParameterP::NoArgs => after_star = true,
                ParameterP::Slash | ParameterP::KwArgs(..) => {}
            }
        }
        let one_arg =
            required_positional <= 1 && (positional >= 1 || varargs) && required_named == 0;
        let pos = ast.file_span(def.name.span).resolve_span().begin;
        out.insert(
            def.name.node.ident.clone(),
            FunctionInfo {
                one_arg,
                location: Location {
                    path: path.to_path_buf(),
                    line: pos.line + 1,
                    col: pos.column + 1,
                },
            },
        );
    }
}

/// A Starlark error as a located task error.
fn starlark_error(path: &Path, e: &starlark::Error, hint: &str) -> TaskError {
    let location = match e.span() {
        Some(span) => {
            let pos = span.resolve_span().begin;
            Location {
                path: path.to_path_buf(),
                line: pos.line + 1,
                col: pos.column + 1,
            }
        }
        None => Location::file(path),
    };
    TaskError::new(
        location,
        one_line(&e.without_diagnostic().to_string()),
        hint,
    )
}

fn internal(path: &Path, e: impl std::fmt::Display) -> TaskError {
    TaskError::new(
        Location::file(path),
        format!("the Starlark interpreter failed: {e}"),
        "this is a Bureau bug; please report it with the checks.star",
    )
}

/// Collapse a message onto one line.
/// Programs compiled in the zygote (`bureau_isolate::prepare_zygote`), which every checks'
/// process forked after it inherits.
pub(crate) mod prepared {
    use std::cell::RefCell;
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};
    use std::rc::Rc;
    use std::sync::Mutex;

    use super::CheckProgram;

    /// At most this many bytes of sources are compiled in the zygote (what it holds is copied
    /// by every fork of it); beyond, the checks' process compiles its program itself.
    const MAX_SOURCE_BYTES: usize = 32 << 20;

    thread_local! {
        /// In the zygote (and its forks): the programs compiled there, by [`key`].
        static PROGRAMS: RefCell<BTreeMap<String, Rc<CheckProgram>>> =
            const { RefCell::new(BTreeMap::new()) };
    }

    /// The programs offered to the zygote, and their bytes (in the calling process).
    static OFFERED: Mutex<(BTreeSet<String>, usize)> = Mutex::new((BTreeSet::new(), 0));

    pub(crate) fn key(path: &Path, source: &str) -> String {
        let mut h = blake3::Hasher::new();
        h.update(path.as_os_str().as_encoded_bytes());
        h.update(&[0]);
        h.update(source.as_bytes());
        h.finalize().to_hex().to_string()
    }

    /// Have the zygote compile `source` (once per program and process).
    pub(crate) fn offer(path: &Path, source: &str) {
        if !bureau_isolate::zygote_running() {
            return;
        }
        let k = key(path, source);
        {
            let mut offered = OFFERED.lock().unwrap_or_else(|p| p.into_inner());
            if offered.0.contains(&k) || offered.1 + source.len() > MAX_SOURCE_BYTES {
                return;
            }
            offered.0.insert(k);
            offered.1 += source.len();
        }
        bureau_isolate::prepare_zygote(compile_here, &(path.to_path_buf(), source.to_string()));
    }

    /// In the zygote: compile and keep.
    fn compile_here((path, source): (PathBuf, String)) {
        if let Ok(p) = CheckProgram::compile_trusted(&path, &source) {
            PROGRAMS.with(|m| m.borrow_mut().insert(key(&path, &source), Rc::new(p)));
        }
    }

    /// The program compiled in the zygote for `path` and `source`, if any.
    pub(crate) fn get(path: &Path, source: &str) -> Option<Rc<CheckProgram>> {
        let k = key(path, source);
        PROGRAMS.with(|m| m.borrow().get(&k).cloned())
    }
}

pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(src: &str) -> Result<CheckProgram, CheckError> {
        CheckProgram::compile(Path::new("t/checks.star"), src)
    }

    #[test]
    fn lists_top_level_defs_sorted() {
        let p = compile("def b(w):\n    return True\n\ndef a(w, x=1):\n    return False\nK = 3\n")
            .unwrap();
        assert_eq!(p.functions(), vec!["a", "b"]);
        assert!(p.function_info("a").unwrap().one_arg);
        assert!(p.function("a").is_some());
        assert!(p.function("K").is_none());
    }

    #[test]
    fn syntax_errors_are_located() {
        let e = compile("def a(w):\n    return (\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("t/checks.star:"), "{msg}");
        assert!(msg.contains(" — fix the Starlark syntax"), "{msg}");
        assert_eq!(e.errors.len(), 1);
        assert!(e.errors[0].location.line >= 2, "{msg}");
    }

    #[test]
    fn load_statements_are_refused_with_their_line() {
        let e = compile("\nload(\"lib.star\", \"f\")\ndef a(w):\n    return f(w)\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("t/checks.star:2:"), "{msg}");
        assert!(msg.contains("load(\"lib.star\""), "{msg}");
        assert!(msg.contains("self-contained"), "{msg}");
    }

    #[test]
    fn top_level_errors_are_reported() {
        let e = compile("def a(w):\n    return True\nx = 1 // 0\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("t/checks.star:3:"), "{msg}");
        let e = compile("def a(w):\n    return undefined_name\n").unwrap_err();
        assert!(e.to_string().contains("undefined_name"), "{e}");
    }

    #[test]
    fn arity_is_recorded() {
        let p = compile("def zero():\n    pass\ndef two(a, b):\n    pass\ndef kw(w, *, k):\n    pass\ndef star(*args):\n    pass\n").unwrap();
        assert!(!p.function_info("zero").unwrap().one_arg);
        assert!(!p.function_info("two").unwrap().one_arg);
        assert!(!p.function_info("kw").unwrap().one_arg);
        assert!(p.function_info("star").unwrap().one_arg);
        assert_eq!(p.function_info("two").unwrap().location.line, 3);
    }

    #[test]
    fn programs_can_be_shared_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CheckProgram>();
    }
}
