//! The world view as an HTML fragment, rendered server-side with minijinja (autoescape on).

use minijinja::{AutoEscape, Environment, context};

use super::WorldChanges;
use super::files::Preview;

const MACROS: &str = include_str!("../../templates/world/macros.html");
const WORLD: &str = include_str!("../../templates/world/world.html");
const PREVIEW: &str = include_str!("../../templates/world/preview.html");

fn env() -> Result<Environment<'static>, minijinja::Error> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.add_template("macros.html", MACROS)?;
    env.add_template("world.html", WORLD)?;
    env.add_template("preview.html", PREVIEW)?;
    Ok(env)
}

/// Escapes text for HTML (for the error paragraph, which is built without the templates).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

fn render(name: &str, ctx: minijinja::Value) -> String {
    let result = env().and_then(|env| env.get_template(name)?.render(ctx));
    match result {
        Ok(html) => html,
        Err(e) => format!(
            "<div class=\"world-problems\"><p>The world view could not be drawn: {}</p></div>",
            escape(&format!("{e:#}"))
        ),
    }
}

/// The world changes of one turn as an HTML fragment (no `<html>`/`<body>`): one
/// `<section id="world-<service>">` per service (files, mail, calendar, chat, kb, sheets,
/// tracker, code; `world-other` when something unmodelled changed).
pub fn render_html(changes: &WorldChanges) -> String {
    render_html_prefixed(changes, "")
}

/// [`render_html`] with every id (sections and objects) and in-fragment link prefixed by
/// `id_prefix` (e.g. `t2-`), so that several turns' fragments can share one page without
/// duplicate ids; a link to an object of that turn is then `#<id_prefix><object_anchor>`.
pub fn render_html_prefixed(changes: &WorldChanges, id_prefix: &str) -> String {
    render("world.html", context! { w => changes, idp => id_prefix })
}

/// A deliverable's preview as an HTML fragment (`<div class="preview">`).
pub fn render_preview_html(preview: &Preview) -> String {
    render("preview.html", context! { p => preview })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::{FieldChange, ObjectChanges};

    #[test]
    fn empty_changes_render_every_section() {
        let html = render_html(&WorldChanges::default());
        for s in [
            "files", "mail", "calendar", "chat", "kb", "sheets", "tracker", "code",
        ] {
            assert!(
                html.contains(&format!("<section id=\"world-{s}\"")),
                "{s}: {html}"
            );
        }
        assert!(!html.contains("could not be drawn"), "{html}");
        assert!(!html.contains("world-other"));
    }

    #[test]
    fn prefixed_ids_and_links() {
        let w = WorldChanges {
            kb: ObjectChanges {
                groups: vec![crate::world::Group {
                    title: "Pages".into(),
                    anchor: "kb-pages".into(),
                    objects: vec![crate::world::ObjectChange {
                        kind: "page".into(),
                        key: "page-1".into(),
                        anchor: "page-page-1".into(),
                        title: "Home".into(),
                        status: crate::world::Status::Added,
                        fields: vec![],
                    }],
                }],
                other: vec![],
            },
            ..Default::default()
        };
        let html = render_html_prefixed(&w, "t2-");
        assert!(html.contains("id=\"t2-world-kb\""), "{html}");
        assert!(html.contains("id=\"t2-page-page-1\""), "{html}");
        assert!(!html.contains("id=\"world-"), "{html}");
        assert!(render_html(&w).contains("id=\"page-page-1\""));
    }

    #[test]
    fn text_from_the_world_is_escaped() {
        let w = WorldChanges {
            problems: vec!["<script>alert(1)</script>".into()],
            kb: ObjectChanges {
                groups: vec![],
                other: vec![FieldChange {
                    path: "x\"><b>".into(),
                    old: None,
                    new: Some("<img src=x onerror=alert(1)>".into()),
                    diff: None,
                }],
            },
            ..Default::default()
        };
        let html = render_html(&w);
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<img src=x"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("could not be drawn"), "{html}");
    }
}
