//! Embeds the test library in the binary for `ptxmc serve`'s menu: every
//! `.litmus` and `.test` file under `litmus/` and `tests/peers/`, and the
//! corpus kernels of `kernels/` (each `.ptx` with its `.cu`), as
//! `include_str!` entries in `$OUT_DIR/library.rs`, so the server never
//! reads a file at run time.

use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("litmus" | "test")
        ) && std::fs::read_to_string(&p).is_ok()
        {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut files = Vec::new();
    for dir in ["litmus", "tests/peers"] {
        walk(&root.join(dir), &mut files);
        println!("cargo:rerun-if-changed={dir}");
    }
    files.sort();
    let mut code = String::from(
        "/// Every test file of the library: (path, text).\npub static FILES: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        let rel = f.strip_prefix(&root).expect("under the root");
        let rel = rel.to_string_lossy().replace('\\', "/");
        code.push_str(&format!(
            "    ({rel:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/\", {rel:?}))),\n"
        ));
    }
    code.push_str("];\n");
    // The corpus kernels (`kernels/*.ptx`, not `not-yet/` or `scale/`) with
    // the `.cu` beside each, whose `ptxmc-launch` comment is the launch.
    let mut kernels = Vec::new();
    if let Ok(entries) = std::fs::read_dir(root.join("kernels")) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "ptx") && p.with_extension("cu").is_file() {
                kernels.push(p);
            }
        }
    }
    println!("cargo:rerun-if-changed=kernels");
    kernels.sort();
    code.push_str(
        "/// The corpus kernels: (path of the `.ptx`, its text, the `.cu` beside it).\npub static KERNELS: &[(&str, &str, &str)] = &[\n",
    );
    for f in &kernels {
        let rel = f.strip_prefix(&root).expect("under the root");
        let rel = rel.to_string_lossy().replace('\\', "/");
        let cu = rel.strip_suffix(".ptx").expect("a .ptx").to_string() + ".cu";
        code.push_str(&format!(
            "    ({rel:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/\", {rel:?})), include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/\", {cu:?}))),\n"
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("library.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
