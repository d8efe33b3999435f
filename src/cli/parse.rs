//! `ptxmc parse`: print tests as IR JSON or canonical litmus text.

use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

use super::Exit;
use crate::litmus::{self, print};

/// Output formats of `ptxmc parse`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ParseFormat {
    /// The program IR as JSON, one object per test.
    Json,
    /// Canonical litmus text (Dat3M dialect) that parses back to the same IR.
    Text,
}

/// Arguments of `ptxmc parse`.
#[derive(Args, Debug)]
pub struct ParseArgs {
    /// Test files or directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ParseFormat,
}

/// Run `ptxmc parse`.
pub fn run(args: &ParseArgs) -> Exit {
    let files = match litmus::collect_files(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: cannot read a directory: {e}");
            return Exit::BadInput;
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut exit = Exit::Success;
    let mut json = Vec::new();
    for f in files {
        let read = if crate::ptx::is_kernel_path(&f) {
            // A kernel, lowered under the launch beside it.
            crate::ptx::load_file(&f, None, None).map(|t| vec![t])
        } else {
            litmus::parse_file(&f)
        };
        match read {
            Ok(tests) => {
                for t in tests {
                    match args.format {
                        ParseFormat::Text => {
                            let _ = write!(out, "{}", print::to_litmus(&t.program));
                            let _ = writeln!(out);
                        }
                        ParseFormat::Json => json.push(serde_json::json!({
                            "file": t.path,
                            "instance": t.instance,
                            "program": t.program,
                        })),
                    }
                }
            }
            Err(e) => {
                eprint!("{}", e.rendered());
                exit = Exit::BadInput;
            }
        }
    }
    if args.format == ParseFormat::Json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        );
    }
    exit
}
