//! `ptxmc serve`: the playground in a browser.

use clap::Args;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::Exit;
use crate::serve::{self, Config, api::ServerLimits};

/// Arguments of `ptxmc serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// TCP port (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8077)]
    pub port: u16,
    /// Address to listen on. The default serves this machine only; give
    /// `0.0.0.0` to serve a classroom network.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// The most seconds one request may compute (a request may ask for less).
    #[arg(long, default_value_t = 5.0, value_name = "SECS", value_parser = super::common::parse_seconds)]
    pub timeout: f64,
    /// The most states one exploration may visit (a request may ask for fewer).
    #[arg(long, default_value_t = ServerLimits::default().max_states, value_name = "N")]
    pub max_states: u64,
    /// The largest request body in bytes.
    #[arg(long, default_value_t = Config::default().max_body, value_name = "BYTES")]
    pub max_body: usize,
    /// How many computations may run at once; more are answered "busy" (default: the cores).
    #[arg(long, value_name = "N")]
    pub max_running: Option<usize>,
    /// Stop a computation when the server's resident memory exceeds this many MiB.
    #[arg(long, value_name = "MIB")]
    pub max_memory: Option<u64>,
    /// Compile `.cu` kernels that requests send with this nvcc (without it the
    /// playground takes kernels as PTX only). nvcc reads every file a request's
    /// `#include` names: give it on a trusted network only.
    #[arg(long, value_name = "PATH")]
    pub nvcc: Option<std::path::PathBuf>,
}

/// Run `ptxmc serve` until Ctrl-C.
pub fn run(args: &ServeArgs) -> Exit {
    let Some(timeout) = Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|t| !t.is_zero())
    else {
        eprintln!(
            "error: expected a positive --timeout, found {}",
            args.timeout
        );
        return Exit::BadInput;
    };
    let default = Config::default();
    let config = Config {
        limits: ServerLimits {
            timeout,
            max_states: args.max_states,
            max_memory: args.max_memory.map(|m| m << 20),
            nvcc: args.nvcc.clone(),
            ..ServerLimits::default()
        },
        max_body: args.max_body,
        max_running: args.max_running.unwrap_or(default.max_running).max(1),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(config.max_running + 2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the server's runtime: {e}");
            return Exit::BadInput;
        }
    };
    runtime.block_on(async {
        let addr = SocketAddr::new(args.bind, args.port);
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: cannot listen on {addr}: {e}");
                return Exit::BadInput;
            }
        };
        let local = listener.local_addr().unwrap_or(addr);
        println!("ptxmc playground: http://{local}/  (Ctrl-C stops it)");
        let _ = std::io::stdout().flush();
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        match serve::serve(listener, config, shutdown).await {
            Ok(()) => {
                println!("ptxmc playground: stopped");
                Exit::Success
            }
            Err(e) => {
                eprintln!("error: the server stopped: {e}");
                Exit::BadInput
            }
        }
    })
}
