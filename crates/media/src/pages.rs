//! Deliverables rendered to page images, for a judge that looks at them (`judge_render`).
//!
//! | the file | how it becomes pages |
//! | --- | --- |
//! | `.pdf` | poppler's `pdftoppm` renders its first pages, the longest side scaled to [`PAGE_SIDE`] |
//! | `.docx` `.doc` `.odt` `.rtf` `.html` `.htm`, `.xlsx` `.xls` `.ods`, `.pptx` `.ppt` `.odp` | LibreOffice (`soffice --headless --convert-to pdf`) makes a PDF, then as a PDF |
//! | `.png` `.jpg` `.jpeg` `.gif` `.webp` `.bmp` `.tif` `.tiff` | the picture itself, as an agent is shown it ([`crate::picture::for_agent`]: scaled to fit [`crate::limits::MAX_AGENT_SIDE`]) |
//!
//! Both programs are found on the renderer's search path (`PATH` by default) and are
//! optional: a missing one is [`MediaError::Missing`] naming the Debian package to install.
//!
//! **Bounds.** At most [`MAX_PAGES_PER_FILE`] pages of one file (the rest named in a note),
//! pages scaled to [`PAGE_SIDE`] pixels on their longest side and re-encoded like any picture
//! an agent is shown (PNG, or JPEG past [`crate::limits::MAX_AGENT_IMAGE_BYTES`]), inputs up to
//! [`crate::limits::MAX_INPUT_BYTES`]; a caller bounds the pages of several files together
//! (`bureau-check` allows 20 per judged item).
//!
//! **Containment.** Each program works on a copy of the bytes in a private temporary
//! directory, never the agent's path. LibreOffice gets a fresh profile there
//! (`-env:UserInstallation=file://…`), that directory as `HOME` and `TMPDIR`, an environment
//! emptied but for `PATH`, `LC_ALL` and `SAL_USE_VCLPLUGIN=svp`, no stdin, a session and
//! process group of its own, an address-space and CPU limit per process, and — LibreOffice
//! forks helpers — a cgroup of its own where one is writable ([`bureau_shell::cgroup`]: memory
//! and process count of the whole tree, and a kill that reaches processes that left the
//! group). Without a writable cgroup (not root, read-only `/sys/fs/cgroup`) the process group
//! is killed at the deadline and after the run, which misses only a helper that called
//! `setsid` itself. Where the process may make a network namespace (root), it runs in a new,
//! empty one, so a document's links to remote pictures reach nothing; otherwise LibreOffice's
//! own defaults apply. `pdftoppm` runs through [`crate::external::run`].
//!
//! **Cache.** Rendering is deterministic enough to keep but not cheap (LibreOffice takes
//! seconds), and a judge's answer is cached by the hashes of the pages it saw, so pages are
//! cached by the blake3 of the file's bytes and the renderer's settings: with a cache
//! directory, `<cache>/<key>/pages.json` lists the pages and `<key>/page-<n>.<ext>` holds
//! them; an entry whose files do not match their recorded hashes is rendered again.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bureau_shell::cgroup::{Cgroup, CgroupLimits, Cgroups};
use serde::{Deserialize, Serialize};

use crate::limits::{MAX_AGENT_SIDE, MAX_INPUT_BYTES, MEMORY_BYTES};
use crate::{MediaError, MediaType, invalid, sniff};

/// Most pages of one file rendered.
pub const MAX_PAGES_PER_FILE: usize = 8;
/// Longest side of a rendered page, in pixels.
pub const PAGE_SIDE: u32 = MAX_AGENT_SIDE;
/// Wall-clock seconds one program run (a conversion, a rendering) may take.
pub const RENDER_SECONDS: u64 = 120;
/// Memory of LibreOffice's whole process tree, where a cgroup holds it.
pub const OFFICE_TREE_MEMORY_BYTES: u64 = 3 << 30;
/// Processes and threads of LibreOffice's whole tree, where a cgroup holds it.
pub const OFFICE_TREE_TASKS: u64 = 512;
/// Names the settings of the cache key: bump it when rendering changes.
const RENDER_VERSION: &str = "pages/1";

/// What renders a file, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    Pdf,
    /// LibreOffice, then pdftoppm; `component` is the LibreOffice part that reads it.
    Office {
        component: Component,
    },
    Image,
}

/// The LibreOffice application that opens a document (and its Debian package).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Component {
    Writer,
    Calc,
    Impress,
}

impl Component {
    pub fn package(self) -> &'static str {
        match self {
            Component::Writer => "libreoffice-writer",
            Component::Calc => "libreoffice-calc",
            Component::Impress => "libreoffice-impress",
        }
    }
}

/// How the file `name` is rendered, by its extension; `None` when Bureau cannot render it.
pub fn source_of(name: &str) -> Option<Source> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "pdf" => Source::Pdf,
        "docx" | "doc" | "odt" | "rtf" | "html" | "htm" => Source::Office {
            component: Component::Writer,
        },
        "xlsx" | "xls" | "ods" => Source::Office {
            component: Component::Calc,
        },
        "pptx" | "ppt" | "odp" => Source::Office {
            component: Component::Impress,
        },
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "bmp" | "tif" | "tiff" => Source::Image,
        _ => return None,
    })
}

/// One rendered page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// 1-based.
    pub page: usize,
    /// `image/png` or `image/jpeg`.
    pub mime_type: String,
    pub width: u32,
    pub height: u32,
    #[serde(skip)]
    pub bytes: Vec<u8>,
    /// blake3 of `bytes` (hex).
    pub blake3: String,
}

/// The pages of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rendered {
    pub pages: Vec<Page>,
    /// Pages the file has (when known): more than `pages.len()` when some were cut.
    pub total_pages: Option<usize>,
    /// What was cut or changed.
    pub notes: Vec<String>,
    /// Whether this came from the cache.
    #[serde(skip)]
    pub cached: bool,
}

/// Renders files to pages: where to find the programs, where to cache.
#[derive(Debug, Clone, Default)]
pub struct Renderer {
    /// Directories searched for `soffice` and `pdftoppm`; `None`: `PATH`.
    pub search_path: Option<OsString>,
    /// Where pages are cached; `None`: no cache.
    pub cache: Option<PathBuf>,
    /// Most pages rendered of one file (0: [`MAX_PAGES_PER_FILE`]).
    pub max_pages: usize,
}

/// How to install a program.
fn install_line(program: &str, source: Source) -> String {
    match (program, source) {
        ("pdftoppm", _) => "apt-get install poppler-utils".into(),
        (_, Source::Office { component }) => format!("apt-get install {}", component.package()),
        _ => "apt-get install libreoffice-core".into(),
    }
}

impl Renderer {
    /// The renderer over `PATH`, with no cache.
    pub fn new() -> Renderer {
        Renderer::default()
    }

    /// The same renderer caching in `dir`.
    pub fn with_cache(mut self, dir: impl Into<PathBuf>) -> Renderer {
        self.cache = Some(dir.into());
        self
    }

    /// The same renderer finding its programs in `path` (a `PATH`-style list).
    pub fn with_search_path(mut self, path: impl Into<OsString>) -> Renderer {
        self.search_path = Some(path.into());
        self
    }

    fn max_pages(&self) -> usize {
        if self.max_pages == 0 {
            MAX_PAGES_PER_FILE
        } else {
            self.max_pages
        }
    }

    /// The first executable `name` on the search path.
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        let path = match &self.search_path {
            Some(p) => p.clone(),
            None => std::env::var_os("PATH")?,
        };
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| crate::external::is_executable(p))
    }

    fn need(&self, name: &str, what: &str, source: Source) -> Result<PathBuf, MediaError> {
        self.find(name).ok_or_else(|| MediaError::Missing {
            what: what.to_string(),
            program: name.to_string(),
            install: install_line(name, source),
        })
    }

    /// Whether the programs `name` needs are here: `Ok`, or the [`MediaError::Missing`] that
    /// rendering it would give (without rendering anything).
    pub fn check(&self, name: &str) -> Result<(), MediaError> {
        let source = source_of(name).ok_or_else(|| unsupported(name))?;
        match source {
            Source::Image => Ok(()),
            Source::Pdf => self
                .need("pdftoppm", &format!("rendering `{name}`"), source)
                .map(|_| ()),
            Source::Office { .. } => {
                self.need("soffice", &format!("rendering `{name}`"), source)?;
                self.need("pdftoppm", &format!("rendering `{name}`"), source)?;
                Ok(())
            }
        }
    }

    /// The pages of the file `name` with contents `bytes`.
    pub fn render(&self, name: &str, bytes: &[u8]) -> Result<Rendered, MediaError> {
        let source = source_of(name).ok_or_else(|| unsupported(name))?;
        if bytes.len() > MAX_INPUT_BYTES {
            return Err(MediaError::TooLarge {
                file: name.into(),
                reason: format!(
                    "it is {} bytes, more than the {MAX_INPUT_BYTES} that are rendered",
                    bytes.len()
                ),
            });
        }
        self.check(name)?;
        let key = cache_key(name, source, bytes, self.max_pages());
        if let Some(hit) = self
            .cache
            .as_deref()
            .and_then(|c| read_cached(&c.join(&key)))
        {
            return Ok(hit);
        }
        let rendered = match source {
            Source::Image => image_page(name, bytes)?,
            Source::Pdf => {
                if sniff(bytes) != Some(MediaType::Pdf) {
                    return Err(invalid(name, "not a PDF (no %PDF- header)"));
                }
                self.pdf_pages(name, bytes, source)?
            }
            Source::Office { component } => {
                let pdf = self.office_to_pdf(name, bytes, component)?;
                self.pdf_pages(name, &pdf, source)?
            }
        };
        if let Some(c) = &self.cache {
            write_cached(c, &key, &rendered);
        }
        Ok(rendered)
    }

    fn pdf_pages(&self, name: &str, pdf: &[u8], source: Source) -> Result<Rendered, MediaError> {
        let pdftoppm = self.need("pdftoppm", &format!("rendering `{name}`"), source)?;
        let total = page_count(name, pdf);
        if total == Some(0) {
            return Err(invalid(name, "the PDF has no pages"));
        }
        let max = self.max_pages();
        let last = total.unwrap_or(max).min(max);
        let (dir, input) = crate::external::stage(pdf, ".pdf")?;
        let prefix = dir.path().join("page");
        crate::external::run(
            &pdftoppm,
            &[
                "-f",
                "1",
                "-l",
                &last.to_string(),
                "-scale-to",
                &PAGE_SIDE.to_string(),
                "-png",
                &input.to_string_lossy(),
                &prefix.to_string_lossy(),
            ],
            dir.path(),
            name,
            Duration::from_secs(RENDER_SECONDS),
        )?;
        // pdftoppm names pages `page-1.png` or `page-01.png` (padded to the page count's
        // digits): read them by number.
        let mut files: Vec<(usize, PathBuf)> = std::fs::read_dir(dir.path())
            .map_err(|e| program_error("pdftoppm", name, format!("its output is unreadable: {e}")))?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                let num = n
                    .strip_prefix("page-")?
                    .strip_suffix(".png")?
                    .parse()
                    .ok()?;
                Some((num, e.path()))
            })
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(program_error(
                "pdftoppm",
                name,
                "it rendered no page".into(),
            ));
        }
        let mut pages = Vec::new();
        for (num, path) in files.into_iter().take(max) {
            let png = std::fs::read(&path).map_err(|e| {
                program_error("pdftoppm", name, format!("page {num} is unreadable: {e}"))
            })?;
            let shown =
                crate::picture::for_agent(&format!("{name}, page {num}"), &png, MediaType::Png)?;
            pages.push(page_of(num, shown));
        }
        let mut notes = Vec::new();
        match total {
            Some(t) if t > pages.len() => notes.push(format!(
                "{name} has {t} pages; the first {} are shown",
                pages.len()
            )),
            None if pages.len() == max => notes.push(format!(
                "{name}: its page count is unreadable; the first {max} pages are shown"
            )),
            _ => {}
        }
        Ok(Rendered {
            pages,
            total_pages: total,
            notes,
            cached: false,
        })
    }

    /// A PDF of the office document `bytes`, made by LibreOffice.
    fn office_to_pdf(
        &self,
        name: &str,
        bytes: &[u8],
        component: Component,
    ) -> Result<Vec<u8>, MediaError> {
        let source = Source::Office { component };
        let soffice = self.need("soffice", &format!("rendering `{name}`"), source)?;
        let ext = name
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        let (dir, input) = crate::external::stage(bytes, &format!(".{ext}"))?;
        let out = dir.path().join("out");
        let home = dir.path().join("home");
        for d in [&out, &home] {
            std::fs::create_dir_all(d).map_err(|e| {
                program_error("soffice", name, format!("no working directory: {e}"))
            })?;
        }
        let profile = format!(
            "-env:UserInstallation=file://{}",
            dir.path().join("profile").display()
        );
        let args: Vec<OsString> = [
            OsStr::new("--headless"),
            OsStr::new("--invisible"),
            OsStr::new("--nologo"),
            OsStr::new("--norestore"),
            OsStr::new("--nolockcheck"),
            OsStr::new("--nodefault"),
            OsStr::new("--nofirststartwizard"),
            OsStr::new(&profile),
            OsStr::new("--convert-to"),
            OsStr::new("pdf"),
            OsStr::new("--outdir"),
            out.as_os_str(),
            input.as_os_str(),
        ]
        .iter()
        .map(|s| s.to_os_string())
        .collect();
        let run = run_tree(
            &soffice,
            &args,
            dir.path(),
            &home,
            Duration::from_secs(RENDER_SECONDS),
        )
        .map_err(|e| program_error("soffice", name, e))?;
        let pdf_path = out.join("input.pdf");
        match std::fs::read(&pdf_path) {
            Ok(pdf) if !pdf.is_empty() => Ok(pdf),
            _ => {
                let said = format!("{}\n{}", run.stdout, run.stderr);
                // A LibreOffice without the application that reads this kind of document.
                if said.contains("no export filter") {
                    return Err(MediaError::Missing {
                        what: format!("rendering `{name}`"),
                        program: format!("LibreOffice {:?}", component).to_lowercase(),
                        install: install_line("soffice", source),
                    });
                }
                let why = match run.timed_out {
                    Some(s) => format!("it did not finish within {s} s and was stopped"),
                    None => {
                        let last = said
                            .lines()
                            .rev()
                            .find(|l| !l.trim().is_empty() && !l.contains("javaldx"))
                            .unwrap_or("")
                            .trim()
                            .to_string();
                        format!(
                            "it made no PDF ({}){}",
                            run.status,
                            if last.is_empty() {
                                String::new()
                            } else {
                                format!(": {last}")
                            }
                        )
                    }
                };
                Err(program_error(
                    "soffice",
                    name,
                    format!("{why}; the document is damaged or not a {ext} file"),
                ))
            }
        }
    }
}

fn unsupported(name: &str) -> MediaError {
    invalid(
        name,
        "Bureau renders only PDFs, office documents (docx, doc, odt, rtf, html, xlsx, xls, ods, pptx, ppt, odp) and pictures (png, jpeg, gif, webp, bmp, tiff)",
    )
}

fn program_error(program: &str, file: &str, reason: String) -> MediaError {
    MediaError::Program {
        program: program.into(),
        file: file.into(),
        reason,
    }
}

fn page_of(num: usize, shown: crate::picture::AgentImage) -> Page {
    Page {
        page: num,
        mime_type: shown.mime_type,
        width: shown.shown_width,
        height: shown.shown_height,
        blake3: blake3::hash(&shown.bytes).to_hex().to_string(),
        bytes: shown.bytes,
    }
}

fn image_page(name: &str, bytes: &[u8]) -> Result<Rendered, MediaError> {
    let t = match sniff(bytes) {
        Some(t) if t.family() == crate::kind::Family::Image => t,
        _ => {
            return Err(invalid(
                name,
                "not a picture Bureau reads (PNG, JPEG, GIF, WebP, BMP or TIFF by its bytes)",
            ));
        }
    };
    let shown = crate::picture::for_agent(name, bytes, t)?;
    let notes = shown.notes.iter().map(|n| format!("{name}: {n}")).collect();
    Ok(Rendered {
        pages: vec![page_of(1, shown)],
        total_pages: Some(1),
        notes,
        cached: false,
    })
}

/// The page count of a PDF (parsed in an isolated child); `None` when it cannot be read.
fn page_count(name: &str, pdf: &[u8]) -> Option<usize> {
    crate::isolated::decode(name, &(), pdf, |_, pdf| {
        Ok(lopdf::Document::load_mem(pdf)
            .ok()
            .map(|d| d.get_pages().len()))
    })
    .ok()
    .flatten()
}

fn cache_key(name: &str, source: Source, bytes: &[u8], max_pages: usize) -> String {
    let mut h = blake3::Hasher::new();
    for part in [
        RENDER_VERSION.as_bytes(),
        format!("{source:?}|{max_pages}|{PAGE_SIDE}").as_bytes(),
        // The extension decides the LibreOffice filter.
        name.rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default()
            .as_bytes(),
        bytes,
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().to_hex().to_string()
}

#[derive(Serialize, Deserialize)]
struct CacheIndex {
    version: String,
    total_pages: Option<usize>,
    notes: Vec<String>,
    pages: Vec<Page>,
}

fn page_file(p: &Page) -> String {
    let ext = if p.mime_type == "image/jpeg" {
        "jpg"
    } else {
        "png"
    };
    format!("page-{}.{ext}", p.page)
}

fn read_cached(dir: &Path) -> Option<Rendered> {
    let index: CacheIndex =
        serde_json::from_slice(&std::fs::read(dir.join("pages.json")).ok()?).ok()?;
    if index.version != RENDER_VERSION {
        return None;
    }
    let mut pages = Vec::new();
    for mut p in index.pages {
        let bytes = std::fs::read(dir.join(page_file(&p))).ok()?;
        if blake3::hash(&bytes).to_hex().as_str() != p.blake3 {
            return None;
        }
        p.bytes = bytes;
        pages.push(p);
    }
    Some(Rendered {
        pages,
        total_pages: index.total_pages,
        notes: index.notes,
        cached: true,
    })
}

/// Store `r` under `<cache>/<key>`: written to a private directory, then renamed into place,
/// so a reader sees a whole entry or none. A cache that cannot be written costs a rendering
/// next time, nothing else.
fn write_cached(cache: &Path, key: &str, r: &Rendered) {
    if std::fs::create_dir_all(cache).is_err() {
        return;
    }
    let Ok(tmp) = tempfile::Builder::new()
        .prefix(".partial-")
        .tempdir_in(cache)
    else {
        return;
    };
    for p in &r.pages {
        if std::fs::write(tmp.path().join(page_file(p)), &p.bytes).is_err() {
            return;
        }
    }
    let index = CacheIndex {
        version: RENDER_VERSION.into(),
        total_pages: r.total_pages,
        notes: r.notes.clone(),
        pages: r.pages.clone(),
    };
    let Ok(json) = serde_json::to_vec_pretty(&index) else {
        return;
    };
    if std::fs::write(tmp.path().join("pages.json"), json).is_err() {
        return;
    }
    let dest = cache.join(key);
    let _ = std::fs::remove_dir_all(&dest);
    let kept = tmp.keep();
    if std::fs::rename(&kept, &dest).is_err() {
        let _ = std::fs::remove_dir_all(&kept);
    }
}

/// How a bounded run of a forking program ended.
struct TreeRun {
    status: String,
    /// The deadline, in seconds, when it was reached.
    timed_out: Option<u64>,
    stdout: String,
    stderr: String,
}

fn cgroups() -> &'static Cgroups {
    static CGROUPS: OnceLock<Cgroups> = OnceLock::new();
    CGROUPS.get_or_init(Cgroups::probe)
}

/// Run `program args` in `dir` with its whole process tree bounded (see the module docs).
fn run_tree(
    program: &Path,
    args: &[OsString],
    dir: &Path,
    home: &Path,
    wall: Duration,
) -> Result<TreeRun, String> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .env("TMPDIR", dir)
        .env("LC_ALL", "C.UTF-8")
        .env("SAL_USE_VCLPLUGIN", "svp")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let cg = cgroups();
    let group: Option<Cgroup> = if cg.kills_all() {
        cg.create(
            "render",
            &CgroupLimits {
                memory_bytes: Some(OFFICE_TREE_MEMORY_BYTES),
                max_processes: Some(OFFICE_TREE_TASKS),
            },
        )
        .ok()
    } else {
        None
    };
    let procs = group
        .as_ref()
        .map(|g| g.procs_files().to_vec())
        .unwrap_or_default();
    let cpu = wall.as_secs().max(1) + 1;
    // SAFETY: between fork and exec only raw system calls that touch no memory of the
    // parent: a new session, no inherited descriptor above 2, the cgroup join (open/write of
    // paths prepared above), an empty network namespace when permitted, rlimits.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Cgroup::join_self(&procs)?;
            // Best effort: refused without CAP_SYS_ADMIN.
            libc::unshare(libc::CLONE_NEWNET);
            let lim = |r: libc::__rlimit_resource_t, v: u64| {
                let l = libc::rlimit {
                    rlim_cur: v,
                    rlim_max: v,
                };
                libc::setrlimit(r, &l);
            };
            lim(libc::RLIMIT_AS, MEMORY_BYTES);
            lim(libc::RLIMIT_CPU, cpu);
            lim(libc::RLIMIT_CORE, 0);
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("it could not be started: {e}"))?;
    let pid = child.id() as libc::pid_t;
    let read_all = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.by_ref().take(64 * 1024).read_to_end(&mut buf);
                let _ = std::io::copy(&mut r, &mut std::io::sink());
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = read_all(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = read_all(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + wall;
    let mut timed_out = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s.to_string(),
            Ok(None) if Instant::now() >= deadline => {
                timed_out = Some(wall.as_secs());
                kill_group(pid);
                let _ = child.wait();
                break "killed at the deadline".to_string();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                kill_group(pid);
                let _ = child.wait();
                return Err(format!("waiting for it failed: {e}"));
            }
        }
    };
    // Whatever it left running goes with it: its process group, then its cgroup.
    kill_group(pid);
    drop(group);
    // The readers end when the last writer of the pipes is gone (killed above); a helper
    // that escaped both group and cgroup could hold them, so they are not waited for past
    // a moment.
    let join = |h: std::thread::JoinHandle<String>| {
        let until = Instant::now() + Duration::from_secs(2);
        while !h.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        if h.is_finished() {
            h.join().unwrap_or_default()
        } else {
            String::new()
        }
    };
    Ok(TreeRun {
        status,
        timed_out,
        stdout: join(out),
        stderr: join(err),
    })
}

fn kill_group(pgid: libc::pid_t) {
    if pgid > 0 {
        // SAFETY: plain system call; a negative pid addresses the process group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(p: &str) -> bool {
        Renderer::new().find(p).is_some()
    }

    #[test]
    fn sources_by_extension() {
        assert_eq!(
            source_of("a/deck.PPTX"),
            Some(Source::Office {
                component: Component::Impress
            })
        );
        assert_eq!(source_of("r.pdf"), Some(Source::Pdf));
        assert_eq!(source_of("p.jpeg"), Some(Source::Image));
        assert_eq!(source_of("notes.md"), None);
        assert_eq!(source_of("noext"), None);
    }

    #[test]
    fn a_missing_program_is_named_with_its_package_and_nothing_is_rendered() {
        let empty = tempfile::tempdir().unwrap();
        let r = Renderer::new().with_search_path(empty.path());
        let e = r.render("deck.pptx", b"PK\x03\x04").unwrap_err();
        assert_eq!(
            e.to_string(),
            "rendering `deck.pptx` needs `soffice`, which is not on PATH; install it (apt-get install libreoffice-impress)"
        );
        let e = r.render("r.pdf", b"%PDF-1.4\n").unwrap_err();
        assert!(
            e.to_string().contains("apt-get install poppler-utils"),
            "{e}"
        );
        // Pictures need no program.
        let png = crate::analyze::tests::picture([1, 2, 3], |x, _| x < 10, 0);
        assert_eq!(r.render("p.png", &png).unwrap().pages.len(), 1);
    }

    #[test]
    fn a_pdf_is_rendered_page_by_page_within_the_bounds_and_cached() {
        if !has("pdftoppm") {
            panic!("pdftoppm is needed for this test: apt-get install poppler-utils");
        }
        let text: String = (1..=120)
            .map(|i| format!("Line {i} of the report.\n"))
            .collect();
        let pdf = bureau_formats::office::write_pdf("Report", &text);
        let cache = tempfile::tempdir().unwrap();
        let mut r = Renderer::new().with_cache(cache.path());
        r.max_pages = 2;
        let out = r.render("report.pdf", &pdf).unwrap();
        let total = out.total_pages.unwrap();
        assert!(total >= 3, "{total} pages");
        assert_eq!(out.pages.len(), 2);
        assert!(
            out.notes[0].contains(&format!("has {total} pages; the first 2")),
            "{:?}",
            out.notes
        );
        for p in &out.pages {
            assert_eq!(p.mime_type, "image/png");
            assert_eq!(p.width.max(p.height), PAGE_SIDE);
            let img = image::load_from_memory(&p.bytes).unwrap();
            assert_eq!((img.width(), img.height()), (p.width, p.height));
        }
        assert!(!out.cached);
        let again = r.render("report.pdf", &pdf).unwrap();
        assert!(again.cached);
        assert_eq!(again.pages, out.pages);
        // A damaged entry is rendered again.
        let entry = std::fs::read_dir(cache.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::write(entry.join("page-1.png"), b"not the page").unwrap();
        let third = r.render("report.pdf", &pdf).unwrap();
        assert!(!third.cached);
        assert_eq!(third.pages, out.pages);
    }

    #[test]
    fn office_documents_are_rendered_by_libreoffice() {
        if !has("soffice") || !has("pdftoppm") {
            panic!(
                "LibreOffice and poppler are needed for this test: apt-get install libreoffice-writer libreoffice-impress poppler-utils"
            );
        }
        use bureau_formats::office::{WriteBlock, write_docx, write_pptx};
        let docx = write_docx(
            "memo.docx",
            &[
                WriteBlock::Heading {
                    level: 1,
                    text: "Quarterly memo".into(),
                },
                WriteBlock::Paragraph {
                    text: "Sales rose.".into(),
                },
            ],
        )
        .unwrap();
        let out = Renderer::new().render("memo.docx", &docx).unwrap();
        assert_eq!(out.total_pages, Some(1));
        assert_eq!(out.pages.len(), 1);
        let img = image::load_from_memory(&out.pages[0].bytes).unwrap();
        // A portrait A4 or Letter page, mostly white, with some ink.
        assert!(img.height() > img.width());
        let facts = crate::analyze::facts_of("png", &img);
        assert_eq!(facts.colours[0].hex, "#ffffff");
        assert!(facts.colours[0].share < 1.0);

        let pptx = write_pptx(&[
            ("Plan".into(), "First slide".into(), String::new()),
            ("Budget".into(), "Second slide".into(), String::new()),
        ])
        .unwrap();
        let out = Renderer::new().render("deck.pptx", &pptx).unwrap();
        assert_eq!(out.total_pages, Some(2));
        let img = image::load_from_memory(&out.pages[1].bytes).unwrap();
        assert!(img.width() > img.height(), "slides are landscape");
    }

    #[test]
    fn a_damaged_document_is_an_error_naming_it() {
        if !has("soffice") || !has("pdftoppm") {
            panic!("LibreOffice and poppler are needed for this test");
        }
        let e = Renderer::new()
            .render("broken.docx", b"PK\x03\x04 this is no archive")
            .unwrap_err()
            .to_string();
        assert!(e.contains("broken.docx") && e.contains("damaged"), "{e}");
    }

    fn gone(pid: i32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.is_empty()
            || stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    }

    #[test]
    fn a_helper_that_left_the_process_group_is_killed_with_the_tree() {
        // What LibreOffice may do: fork a helper into a session of its own and exit.
        assert!(
            cgroups().kills_all(),
            "this test needs a writable cgroup hierarchy (run as root): {}",
            cgroups().describe()
        );
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!(
            "setsid -f sh -c 'echo $$ > {}; exec sleep 47'; sleep 0.5",
            pid_file.display()
        );
        let run = run_tree(
            Path::new("/bin/sh"),
            &["-c".into(), script.into()],
            dir.path(),
            dir.path(),
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(run.timed_out, None);
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(5);
        while !gone(pid) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(pid), "the helper {pid} outlived the conversion");
    }

    #[test]
    fn a_conversion_past_its_deadline_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let run = run_tree(
            Path::new("/bin/sh"),
            &["-c".into(), "sleep 30 & sleep 30".into()],
            dir.path(),
            dir.path(),
            Duration::from_millis(500),
        )
        .unwrap();
        assert_eq!(run.timed_out, Some(0));
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
