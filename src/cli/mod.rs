//! Command-line interface: one file per subcommand.

use std::process::ExitCode;

/// Parses arguments and runs the chosen subcommand.
pub fn main() -> ExitCode {
    ExitCode::SUCCESS
}
