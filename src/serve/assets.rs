//! The playground page's files, embedded in the binary: plain HTML, CSS and
//! JavaScript with no build step and nothing fetched from elsewhere, so the
//! page works offline.

const INDEX: &str = include_str!("assets/index.html");
const APP: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/style.css");

/// The asset called `name` with its MIME type.
pub fn get(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "index.html" => Some(("text/html; charset=utf-8", INDEX)),
        "app.js" => Some(("text/javascript; charset=utf-8", APP)),
        "style.css" => Some(("text/css; charset=utf-8", STYLE)),
        _ => None,
    }
}

/// The page's total size in bytes (HTML, CSS and JavaScript).
pub fn page_bytes() -> usize {
    INDEX.len() + APP.len() + STYLE.len()
}
