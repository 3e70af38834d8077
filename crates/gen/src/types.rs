//! The file types the generator writes: one row per type (its id, how names end, its
//! category and base weight).

use serde::Serialize;

/// A coarse family of file types; personas weight families differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Document,
    Spreadsheet,
    Presentation,
    Communication,
    Data,
    Config,
    Code,
    Build,
    Notebook,
    Image,
    Archive,
    Diagram,
    Log,
}

/// One file type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileType {
    /// Stable id used in the manifest ("docx", "tar.gz", "dockerfile").
    pub id: &'static str,
    /// How the name ends (".docx"), or the whole name for fixed names ("Dockerfile").
    pub suffix: &'static str,
    /// Whether `suffix` is a whole file name.
    pub fixed_name: bool,
    pub category: Category,
    /// Relative frequency inside its category.
    pub weight: u32,
}

const fn t(id: &'static str, suffix: &'static str, category: Category, weight: u32) -> FileType {
    FileType {
        id,
        suffix,
        fixed_name: false,
        category,
        weight,
    }
}

const fn named(id: &'static str, name: &'static str, category: Category) -> FileType {
    FileType {
        id,
        suffix: name,
        fixed_name: true,
        category,
        weight: 1,
    }
}

use Category::*;

/// Every type the generator writes.
pub const TYPES: &[FileType] = &[
    t("docx", ".docx", Document, 30),
    t("pdf", ".pdf", Document, 24),
    t("md", ".md", Document, 14),
    t("txt", ".txt", Document, 10),
    t("rst", ".rst", Document, 2),
    t("tex", ".tex", Document, 2),
    t("rtf", ".rtf", Document, 2),
    t("html", ".html", Document, 4),
    t("xlsx", ".xlsx", Spreadsheet, 45),
    t("csv", ".csv", Spreadsheet, 40),
    t("tsv", ".tsv", Spreadsheet, 8),
    t("pptx", ".pptx", Presentation, 1),
    t("eml", ".eml", Communication, 20),
    t("mbox", ".mbox", Communication, 2),
    t("ics", ".ics", Communication, 5),
    t("vcf", ".vcf", Communication, 3),
    t("srt", ".srt", Communication, 1),
    t("vtt", ".vtt", Communication, 1),
    t("json", ".json", Data, 20),
    t("jsonl", ".jsonl", Data, 5),
    t("xml", ".xml", Data, 5),
    t("sql", ".sql", Data, 4),
    t("geojson", ".geojson", Data, 2),
    t("kml", ".kml", Data, 1),
    t("gpx", ".gpx", Data, 1),
    t("arff", ".arff", Data, 1),
    t("dat", ".dat", Data, 3),
    t("bib", ".bib", Data, 2),
    t("ris", ".ris", Data, 1),
    t("yaml", ".yaml", Config, 10),
    t("yml", ".yml", Config, 6),
    t("toml", ".toml", Config, 5),
    t("ini", ".ini", Config, 3),
    t("cfg", ".cfg", Config, 3),
    t("conf", ".conf", Config, 2),
    t("env", ".env", Config, 1),
    t("properties", ".properties", Config, 2),
    named("editorconfig", ".editorconfig", Config),
    named("gitignore", ".gitignore", Config),
    t("log", ".log", Log, 1),
    t("py", ".py", Code, 20),
    t("rs", ".rs", Code, 6),
    t("go", ".go", Code, 6),
    t("js", ".js", Code, 8),
    t("ts", ".ts", Code, 8),
    t("tsx", ".tsx", Code, 3),
    t("jsx", ".jsx", Code, 2),
    t("java", ".java", Code, 8),
    t("c", ".c", Code, 3),
    t("h", ".h", Code, 3),
    t("cpp", ".cpp", Code, 3),
    t("hpp", ".hpp", Code, 2),
    t("cs", ".cs", Code, 2),
    t("rb", ".rb", Code, 2),
    t("sh", ".sh", Code, 6),
    t("ps1", ".ps1", Code, 1),
    t("kt", ".kt", Code, 2),
    t("swift", ".swift", Code, 1),
    t("scala", ".scala", Code, 1),
    t("php", ".php", Code, 1),
    t("r", ".R", Code, 4),
    t("jl", ".jl", Code, 2),
    t("lua", ".lua", Code, 1),
    t("pl", ".pl", Code, 1),
    t("m", ".m", Code, 2),
    t("css", ".css", Code, 2),
    t("scss", ".scss", Code, 1),
    t("proto", ".proto", Code, 2),
    t("graphql", ".graphql", Code, 1),
    named("dockerfile", "Dockerfile", Build),
    named("makefile", "Makefile", Build),
    named("gradle", "build.gradle", Build),
    named("cmake", "CMakeLists.txt", Build),
    t("ipynb", ".ipynb", Notebook, 1),
    t("png", ".png", Image, 10),
    t("jpg", ".jpg", Image, 8),
    t("gif", ".gif", Image, 2),
    t("svg", ".svg", Image, 4),
    t("zip", ".zip", Archive, 6),
    t("tar", ".tar", Archive, 1),
    t("tar.gz", ".tar.gz", Archive, 3),
    t("gz", ".gz", Archive, 2),
    t("puml", ".puml", Diagram, 2),
    t("mmd", ".mmd", Diagram, 2),
    t("dot", ".dot", Diagram, 1),
    t("drawio", ".drawio", Diagram, 1),
    t("patch", ".patch", Code, 1),
];

/// The type with this id.
pub fn by_id(id: &str) -> Option<&'static FileType> {
    TYPES.iter().find(|t| t.id == id)
}

pub(crate) fn ty(id: &str) -> &'static FileType {
    // Ids passed here are literals from this crate; an unknown one is a bug caught by tests.
    by_id(id).unwrap_or(&TYPES[0])
}
