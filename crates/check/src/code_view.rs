//! `code_file(repo, branch, path)`: the text of a file of a hosted repository at the tip of a
//! branch (see docs/services/code.md). The rest of the code service is plain data in `w.code`.

use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::Value;
use starlark::values::none::NoneOr;

use crate::globals::{ctx, fail};

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
        let world = ctx(eval)?.world;
        let Some(r) = world.code().repo(repo) else {
            return fail(format!(
                "code_file(\"{repo}\", ...): no hosted repository `{repo}`"
            ));
        };
        let branch = branch
            .into_option()
            .unwrap_or(&r.default_branch)
            .to_string();
        if !r.branches.contains_key(&branch) {
            return Ok(Value::new_none());
        }
        match bureau_world::code::file_text(world, repo, Some(&branch), path) {
            Ok(Some(t)) => Ok(eval.heap().alloc(t)),
            Ok(None) => Ok(Value::new_none()),
            Err(e) => fail(format!(
                "code_file(\"{repo}\", \"{branch}\", \"{path}\"): {e}"
            )),
        }
    }
}
