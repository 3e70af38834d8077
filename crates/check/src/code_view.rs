//! `code_file(repo, branch, path)`: the text of a file of a hosted repository at the tip of a
//! branch (see docs/services/code.md). The rest of the code service is plain data in `w.code`.

use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::Value;
use starlark::values::none::NoneOr;

use crate::globals::{env, fail};
use crate::remote::{Code, Query};

#[starlark_module]
pub(crate) fn code_functions(builder: &mut GlobalsBuilder) {
    /// The text of `path` at the tip of `branch` (None = the default branch) of hosted
    /// repository `repo`; None when the branch or the file does not exist. An unknown
    /// repository is an error (a mistake in the check).
    fn code_file<'v>(
        #[starlark(require = pos)] repo: &str,
        #[starlark(require = pos)] branch: NoneOr<&str>,
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let answer = env(eval)?.call::<Code>(&Query::CodeFile {
            repo: repo.to_string(),
            branch: branch.into_option().map(str::to_string),
            path: path.to_string(),
        })?;
        match answer {
            Code::NoRepo => fail(format!(
                "code_file(\"{repo}\", ...): no hosted repository `{repo}`"
            )),
            Code::NoBranch | Code::Text(None) => Ok(Value::new_none()),
            Code::Text(Some(t)) => Ok(eval.heap().alloc(t)),
            Code::Failed { branch, message } => fail(format!(
                "code_file(\"{repo}\", \"{branch}\", \"{path}\"): {message}"
            )),
        }
    }
}
