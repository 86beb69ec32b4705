//! The `shed` binary: runs the host and administers it.

use clap::{Parser, Subcommand};

/// shed: a self-hosted platform of spaces and small apps whose commands reach
/// your AI agent — typed, listed, checked and attributed.
#[derive(Parser)]
#[command(name = "shed", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print shed's version.
    Version,
}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        Command::Version => println!("shed {}", env!("CARGO_PKG_VERSION")),
    }
}
