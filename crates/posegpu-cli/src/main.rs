//! The `posegpu` command line: a crowd demo on the embedded humanoid, `info`, `eval`, `bench`,
//! `check`, `retarget`, `render`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use posegpu_cli as cli;

#[derive(Parser)]
#[command(version, about = "Skeletal animation poses for huge crowds on the GPU")]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// The embedded demo (also what runs with no arguments): a crowd of procedural humanoids
    /// evaluated on the GPU and checked against the CPU twin.
    Demo(cli::demo::DemoArgs),
    /// Print a file's bone tree and clips, or how another file's bones drive it.
    Info(cli::info::InfoArgs),
    /// Evaluate a model's animation at given times and write JSON.
    Eval(cli::eval::EvalArgs),
    /// Measure the pose pipeline (retargeted clip, additive layer, hierarchy) over instance
    /// counts and skeleton sizes: GPU time per pass, CPU twin, copy-kernel bandwidth; CSV and plot.
    Bench(cli::bench::BenchArgs),
    /// Every GPU stage on this machine's adapter against the CPU twin on the same inputs (data
    /// built in code; files optional): does posegpu compute right on this GPU and driver?
    Check(cli::check::CheckArgs),
    /// Convert clips to another skeleton offline and write them as .glb.
    Retarget(cli::retarget::RetargetArgs),
    /// Draw a skinned crowd headless from the skinning buffers and write PNGs.
    Render(cli::render::RenderArgs),
}

/// `posegpu info FILE | head`: when the reader closes the pipe, `println!` panics on the write.
/// The command ends quietly then, as Unix tools do, with the status a SIGPIPE death gives (141);
/// every other panic keeps the default report. (Rust ignores SIGPIPE, and restoring the signal
/// would need `libc` for this one line.)
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if text.contains("failed printing to stdout") && text.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

/// Vulkan's loader (and Mesa under it) prints "XDG_RUNTIME_DIR is invalid or not set" to a new
/// user's terminal when the variable is missing, as on containers and CI machines: give it a
/// private directory of its own before anything opens a device (still single-threaded here).
fn quiet_vulkan_loader() {
    let valid = std::env::var_os("XDG_RUNTIME_DIR")
        .map(std::path::PathBuf::from)
        .is_some_and(|d| d.is_dir());
    if valid {
        return;
    }
    // One per user (named from the environment: no libc for the uid), reused by later runs.
    let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
    let dir = std::env::temp_dir().join(format!("posegpu-runtime-{user}"));
    let made = {
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new().mode(0o700).create(&dir)
        }
        #[cfg(not(unix))]
        {
            std::fs::create_dir(&dir)
        }
    };
    if made.is_ok() || dir.is_dir() {
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
    }
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    quiet_vulkan_loader();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args = Args::parse();
    let result = match args.command {
        None => cli::demo::run(&cli::demo::DemoArgs::DEFAULT),
        Some(Command::Demo(a)) => cli::demo::run(&a),
        Some(Command::Info(a)) => cli::info::run(&a),
        Some(Command::Eval(a)) => cli::eval::run(&a),
        Some(Command::Bench(a)) => cli::bench::run(&a),
        Some(Command::Check(a)) => cli::check::run(&a),
        Some(Command::Retarget(a)) => cli::retarget::run(&a),
        Some(Command::Render(a)) => cli::render::run(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            // The causes too (wgpu's error behind a failed device request, say).
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            ExitCode::FAILURE
        }
    }
}
