//! The command line: global options and commands (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "sessionkit",
    version,
    about = "See, fork, undo, export and repair coding-agent sessions stored by sessionkit",
    after_help = crate::ctx::exit_codes_help()
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Args)]
pub struct Global {
    /// Root of all stores [default: $SESSIONKIT_HOME, else ~/.sessionkit]
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// The project whose sessions to use [default: the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print machine-readable JSON (shapes in bindings/cli/README.md)
    #[arg(long, global = true)]
    pub json: bool,
    /// Reproducible clock and ids starting at this time (ms since the epoch); for tests
    #[arg(
        long,
        global = true,
        hide = true,
        value_name = "START_MS",
        env = "SESSIONKIT_DETERMINISTIC"
    )]
    pub deterministic: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The project's sessions, newest first
    List,
    /// A session's transcript
    Show {
        /// Session id or a unique prefix of it
        id: String,
        /// Tool calls, results and long messages in full
        #[arg(long)]
        full: bool,
        /// What the model would get on resume, instead of the transcript
        #[arg(long)]
        model_view: bool,
    },
    /// The branches of a session's message tree
    Tree {
        /// Session id or a unique prefix of it
        id: String,
    },
    /// Start a new session, e.g. for a script that then appends to it
    New {
        /// Title [default: the first 100 characters of the first user message]
        #[arg(long)]
        title: Option<String>,
        /// The session id [default: a fresh UUIDv7]
        #[arg(long)]
        id: Option<String>,
    },
    /// Append one message to a session
    Append {
        /// Session id or a unique prefix of it
        id: String,
        /// The message, a JSON object such as '{"role":"user","content":"hi"}'; - reads it from stdin
        message: String,
    },
    /// Copy a session (up to a message) into a new session
    Fork {
        /// Session id or a unique prefix of it
        id: String,
        /// Message to fork at (id or unique prefix) [default: the head]
        #[arg(long, value_name = "MSG")]
        at: Option<String>,
        /// Title of the new session [default: the source's]
        #[arg(long)]
        title: Option<String>,
    },
    /// Move a session's head so the conversation resumes from a message
    ResumeAt {
        /// Session id or a unique prefix of it
        id: String,
        /// Message id or a unique prefix of it
        msg: String,
    },
    /// Rename a session
    Rename {
        /// Session id or a unique prefix of it
        id: String,
        title: String,
    },
    /// Delete a session: its log, sidecars, quarantine file and file history
    Delete {
        /// Session id or a unique prefix of it
        id: String,
    },
    /// The user messages a session can be rewound to, with the file changes since
    Undo {
        /// Session id or a unique prefix of it
        id: String,
    },
    /// Rewind files and/or conversation to before a user message
    Rewind(RewindArgs),
    /// A session's active path as seed-style JSONL or a Markdown transcript
    Export {
        /// Session id or a unique prefix of it
        id: String,
        #[arg(long, value_enum, default_value = "jsonl")]
        format: ExportFormat,
    },
    /// Full-text search over the project's sessions (or every project's, with --all)
    Search(SearchArgs),
    /// Verify the project's store; with --repair, fix what can be fixed without loss
    Doctor {
        #[arg(long)]
        repair: bool,
    },
    /// Remove file-history objects no session reaches
    Gc,
    /// Run a scripted agent session in a temporary project and show the result
    Demo,
    /// Print a shell completion script
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Words (all must match), "quoted phrases", prefix*, OR between two terms
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// Search every project in the home, not only this one
    #[arg(long)]
    pub all: bool,
    /// Only messages of this role (user, assistant, tool, system)
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
    /// Only this session (id or a prefix of it)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only messages at or after this time (RFC 3339 or YYYY-MM-DD)
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only messages at or before this time (RFC 3339 or YYYY-MM-DD, its end)
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Only messages that call this tool
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
    /// At most this many hits [default: 20]
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("mode").args(["files", "conversation", "both"])))]
pub struct RewindArgs {
    /// Session id or a unique prefix of it
    pub id: String,
    /// The user message to rewind to (the state before it); id or unique prefix
    #[arg(long, value_name = "MSG")]
    pub to: String,
    /// Restore the files only
    #[arg(long)]
    pub files: bool,
    /// Move the conversation head only
    #[arg(long)]
    pub conversation: bool,
    /// Restore the files, then move the head (the default)
    #[arg(long)]
    pub both: bool,
    /// Print the plan and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Overwrite files changed outside the agent since the last snapshot
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Jsonl,
    Markdown,
}
