//! A tool's JSON schema as an HTML form, and a submitted form back as the tool's arguments.
//!
//! Every property of the schema's `properties` becomes one field named after it:
//! strings an `<input>` (a `<textarea>` for long text such as `body`), integers and numbers a
//! number input, booleans a checkbox, enums a `<select>`, arrays of strings a `<textarea>` with
//! one item per line, anything else (objects, arrays of objects, mixed types) a `<textarea>`
//! holding JSON. Field names starting with `_` are the form's own (where to go back to, ...)
//! and never reach the tool.

use serde::Serialize;
use serde_json::{Map, Value};

/// How a property is entered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    /// One line of text.
    Text,
    /// Several lines of text (bodies, contents, descriptions).
    TextArea,
    Integer,
    Number,
    /// A checkbox: checked is `true`, unchecked leaves the argument out (the tool's default).
    Checkbox,
    /// A required boolean: a choice of `true` or `false` (a checkbox could not say `false`).
    Boolean,
    /// One of the schema's `enum` values.
    Select,
    /// An array of strings, one per line.
    Lines,
    /// Any other value, written as JSON.
    Json,
}

/// One field of a generated form.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Field {
    /// The property name: the form field's `name` and the argument's key.
    pub name: String,
    pub kind: FieldKind,
    pub required: bool,
    pub description: String,
    /// The choices of a [`FieldKind::Select`].
    pub options: Vec<String>,
}

/// Properties whose text is long: a `<textarea>` rather than an `<input>`.
const LONG_TEXT: &[&str] = &[
    "body",
    "text",
    "content",
    "description",
    "new",
    "old",
    "comment",
    "message",
    "markdown",
];

/// The fields of `schema` (an object schema), in the schema's property order (sorted, as
/// serde_json keeps them).
pub fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let (mut kind, mut options) = kind_of(name, prop);
            let required = required.contains(&name.as_str());
            if kind == FieldKind::Checkbox && required {
                kind = FieldKind::Boolean;
                options = vec!["true".into(), "false".into()];
            }
            Field {
                name: name.clone(),
                kind,
                required,
                description: prop
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                options,
            }
        })
        .collect()
}

fn kind_of(name: &str, prop: &Value) -> (FieldKind, Vec<String>) {
    if let Some(choices) = prop.get("enum").and_then(Value::as_array)
        && choices.iter().all(Value::is_string)
    {
        let options = choices
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        return (FieldKind::Select, options);
    }
    let kind = match prop.get("type").and_then(Value::as_str) {
        Some("string") if LONG_TEXT.contains(&name) => FieldKind::TextArea,
        Some("string") => FieldKind::Text,
        Some("integer") => FieldKind::Integer,
        Some("number") => FieldKind::Number,
        Some("boolean") => FieldKind::Checkbox,
        Some("array")
            if prop
                .get("items")
                .and_then(|i| i.get("type"))
                .and_then(Value::as_str)
                == Some("string") =>
        {
            FieldKind::Lines
        }
        _ => FieldKind::Json,
    };
    (kind, Vec::new())
}

/// Why a submitted form is not a call: nothing was called.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FormError(pub String);

/// The arguments of a tool from a submitted form (`pairs` in the order sent). Empty optional
/// fields are left out; a repeated field (a multi-select) gives several items of an array.
/// Fields named in the form's `_commas` field (comma-separated names) also split their
/// items on commas, for address lines such as `to`. A required field left empty, a number
/// that is not one, JSON that does not parse, or a field the tool does not take is a
/// [`FormError`].
pub fn args_from_form(schema: &Value, pairs: &[(String, String)]) -> Result<Value, FormError> {
    let fields = fields(schema);
    let commas: Vec<&str> = pairs
        .iter()
        .filter(|(k, _)| k == "_commas")
        .flat_map(|(_, v)| v.split(','))
        .map(str::trim)
        .collect();
    for (k, _) in pairs {
        if !k.starts_with('_') && !fields.iter().any(|f| &f.name == k) {
            return Err(FormError(format!(
                "the form sent `{k}`, which this tool does not take"
            )));
        }
    }
    let mut args = Map::new();
    let mut missing: Vec<String> = Vec::new();
    for field in &fields {
        let values: Vec<&str> = pairs
            .iter()
            .filter(|(k, _)| *k == field.name)
            .map(|(_, v)| v.as_str())
            .collect();
        let value = convert(field, &values, commas.contains(&field.name.as_str()))?;
        match value {
            Some(v) => {
                args.insert(field.name.clone(), v);
            }
            None if field.required => missing.push(format!("`{}`", field.name)),
            None => {}
        }
    }
    if !missing.is_empty() {
        return Err(FormError(format!(
            "{} {} required — fill {} in (nothing was called)",
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" },
            if missing.len() == 1 { "it" } else { "them" },
        )));
    }
    Ok(Value::Object(args))
}

/// One field's value, `None` when it was left empty.
fn convert(field: &Field, values: &[&str], commas: bool) -> Result<Option<Value>, FormError> {
    let name = &field.name;
    let last = values.last().map(|v| v.trim()).unwrap_or_default();
    Ok(match field.kind {
        FieldKind::Text | FieldKind::Select => (!last.is_empty()).then(|| Value::from(last)),
        // Long text is kept as typed (browsers send CRLF line ends; the tool gets LF).
        FieldKind::TextArea => {
            let raw = values
                .last()
                .copied()
                .unwrap_or_default()
                .replace("\r\n", "\n");
            (!raw.trim().is_empty()).then_some(Value::from(raw))
        }
        FieldKind::Integer => {
            if last.is_empty() {
                None
            } else {
                let n: i64 = last.parse().map_err(|_| {
                    FormError(format!("`{name}` must be a whole number, not `{last}`"))
                })?;
                Some(Value::from(n))
            }
        }
        FieldKind::Number => {
            if last.is_empty() {
                None
            } else {
                let n: f64 = last
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or_else(|| FormError(format!("`{name}` must be a number, not `{last}`")))?;
                serde_json::Number::from_f64(n).map(Value::Number)
            }
        }
        FieldKind::Boolean => match last {
            "" => None,
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            other => {
                return Err(FormError(format!(
                    "`{name}` must be true or false, not `{other}`"
                )));
            }
        },
        FieldKind::Checkbox => values
            .iter()
            .any(|v| matches!(v.trim(), "on" | "true" | "1" | "yes"))
            .then_some(Value::Bool(true)),
        FieldKind::Lines => {
            let items: Vec<Value> = values
                .iter()
                .flat_map(|v| v.lines())
                .flat_map(|l| {
                    if commas {
                        l.split(',').collect::<Vec<_>>()
                    } else {
                        vec![l]
                    }
                })
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(Value::from)
                .collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        FieldKind::Json => {
            if last.is_empty() {
                None
            } else {
                Some(serde_json::from_str(last).map_err(|e| {
                    FormError(format!("`{name}` must be JSON ({e}) — e.g. {{}} or []"))
                })?)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "to": {"type": "array", "items": {"type": "string"}, "description": "Recipients"},
                "subject": {"type": "string"},
                "body": {"type": "string"},
                "limit": {"type": "integer", "minimum": 0},
                "hours": {"type": "number"},
                "urgent": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["replace", "append"]},
                "values": {"type": "object"},
                "rows": {"type": "array", "items": {"type": "array"}},
                "any": {},
                "confirm": {"type": "boolean"}
            },
            "required": ["to", "subject", "confirm"]
        })
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_property_kind_gets_its_field() {
        let f = fields(&schema());
        let kind = |n: &str| f.iter().find(|x| x.name == n).unwrap().kind.clone();
        assert_eq!(kind("to"), FieldKind::Lines);
        assert_eq!(kind("subject"), FieldKind::Text);
        assert_eq!(kind("body"), FieldKind::TextArea);
        assert_eq!(kind("limit"), FieldKind::Integer);
        assert_eq!(kind("hours"), FieldKind::Number);
        assert_eq!(kind("urgent"), FieldKind::Checkbox);
        assert_eq!(kind("mode"), FieldKind::Select);
        assert_eq!(kind("values"), FieldKind::Json);
        assert_eq!(kind("rows"), FieldKind::Json);
        assert_eq!(kind("any"), FieldKind::Json);
        assert_eq!(kind("confirm"), FieldKind::Boolean, "a required boolean");
        assert_eq!(f.len(), 11);
        let to = f.iter().find(|x| x.name == "to").unwrap();
        assert!(to.required);
        assert_eq!(to.description, "Recipients");
        let mode = f.iter().find(|x| x.name == "mode").unwrap();
        assert_eq!(mode.options, vec!["replace", "append"]);
        assert!(fields(&json!({"type": "object"})).is_empty());
    }

    #[test]
    fn forms_become_typed_arguments() {
        let args = args_from_form(
            &schema(),
            &pairs(&[
                ("_back", "/inbox"),
                ("_commas", "to"),
                ("to", "a@x.test, b@x.test\r\nc@x.test\r\n"),
                ("subject", "  Hello "),
                ("body", "Line 1\r\nLine 2\r\n"),
                ("limit", "5"),
                ("hours", "1.5"),
                ("urgent", "on"),
                ("mode", "append"),
                ("values", r#"{"a": 1}"#),
                ("rows", ""),
                ("confirm", "false"),
            ]),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({
                "to": ["a@x.test", "b@x.test", "c@x.test"],
                "subject": "Hello",
                "body": "Line 1\nLine 2\n",
                "limit": 5,
                "hours": 1.5,
                "urgent": true,
                "mode": "append",
                "values": {"a": 1},
                "confirm": false
            })
        );
    }

    #[test]
    fn without_commas_lines_keep_their_commas_and_repeats_add_items() {
        let args = args_from_form(
            &schema(),
            &pairs(&[
                ("to", "Doe, Jane <j@x.test>"),
                ("to", "k@x.test"),
                ("subject", "s"),
                ("confirm", "true"),
            ]),
        )
        .unwrap();
        assert_eq!(args["to"], json!(["Doe, Jane <j@x.test>", "k@x.test"]));
        assert!(args.get("urgent").is_none(), "unchecked box is left out");
    }

    #[test]
    fn bad_forms_are_refused_with_the_field_named() {
        let s = schema();
        let err = |p: &[(&str, &str)]| args_from_form(&s, &pairs(p)).unwrap_err().0;
        assert!(err(&[("subject", "s"), ("confirm", "true")]).contains("`to` is required"));
        assert!(err(&[("subject", "s")]).contains("`confirm`, `to` are required"));
        let base = [("to", "a@x.test"), ("subject", "s"), ("confirm", "true")];
        let with = |extra: (&'static str, &'static str)| {
            let mut v = base.to_vec();
            v.push(extra);
            err(&v)
        };
        assert!(with(("limit", "five")).contains("`limit` must be a whole number"));
        assert!(with(("hours", "NaN")).contains("`hours` must be a number"));
        assert!(with(("values", "{oops")).contains("`values` must be JSON"));
        assert!(with(("bogus", "1")).contains("`bogus`"));
        let mut v = base.to_vec();
        v[2] = ("confirm", "maybe");
        assert!(err(&v).contains("`confirm` must be true or false"));
    }
}
