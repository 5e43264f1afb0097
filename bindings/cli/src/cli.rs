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
    /// Store options as a JSON object, as the C ABI takes them (`--home` and
    /// `--deterministic` win over theirs); for tests
    #[arg(long, global = true, hide = true, value_name = "JSON")]
    pub store_options: Option<String>,
    /// A deterministic run kept in FILE (JSON, as `deterministic` in the store
    /// options): read before the command and written back after it, so that one
    /// run of clock and ids spans many commands; for tests
    #[arg(long, global = true, hide = true, value_name = "FILE")]
    pub deterministic_state: Option<PathBuf>,
}

/// Where the shared database is and who takes leases on it.
#[derive(Debug, Clone, Args)]
pub struct RemoteArgs {
    /// The PostgreSQL database, a libpq connection string
    /// [default: $SESSIONKIT_REMOTE, else the setting remote.url]
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
    /// Who takes the sessions' leases, shown to others who find them busy
    /// [default: <host name>:<process id>]
    #[arg(long, value_name = "NAME")]
    pub holder: Option<String>,
    /// This project sat under OLD on the machines that share it and sits under NEW
    /// here: the remote name is that of the path under OLD; repeatable
    #[arg(long = "map-path", value_name = "OLD=NEW")]
    pub map_paths: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The project's sessions, newest first
    List {
        /// The sessions of every project in the home
        #[arg(long)]
        all: bool,
        /// At most N sessions, the newest first (a page; the rest are counted)
        #[arg(long, value_name = "N", conflicts_with_all = ["all", "remote"])]
        limit: Option<usize>,
        /// Skip the N newest sessions (the next page)
        #[arg(long, value_name = "N", default_value_t = 0, conflicts_with_all = ["all", "remote"])]
        offset: usize,
        /// The project's sessions on the shared PostgreSQL database instead, from URL
        /// [default: $SESSIONKIT_REMOTE, else the setting remote.url]
        #[arg(long, value_name = "URL", num_args = 0..=1, conflicts_with = "all")]
        remote: Option<Option<String>>,
    },
    /// Copy sessions to the shared PostgreSQL database (only the bytes it lacks)
    Push {
        /// Session ids or unique prefixes [default: every session of the project]
        #[arg(value_name = "ID")]
        ids: Vec<String>,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Copy a session from the shared PostgreSQL database into this store (only new bytes)
    Pull {
        /// The full session id
        id: String,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Print a session's log lines as another machine pushes them (until Ctrl-C)
    Follow {
        /// The full session id
        id: String,
        /// Start at this byte of the log (0: from the beginning) [default: the end]
        #[arg(long, value_name = "BYTES")]
        from: Option<u64>,
        /// Stop once no line came for this many seconds
        #[arg(long, value_name = "SECS")]
        until_idle: Option<f64>,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Import Claude Code, Codex, pi, Gemini CLI or seed-style transcripts (files or
    /// directories); with --watch, keep importing them as they grow
    Import {
        /// Transcript files or opencode databases, or directories searched for *.jsonl
        /// and opencode*.db [default: every tool's own session directory that
        /// exists, e.g. ~/.claude/projects]
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// After the import, watch the paths (recursively) and import what grows or
        /// appears, until SIGINT or SIGTERM
        #[arg(long)]
        watch: bool,
        /// Print nothing unless a source failed (for cron)
        #[arg(long, short)]
        quiet: bool,
        /// The format of every source [default: detected per file]
        #[arg(long, value_enum)]
        from: Option<ImportFrom>,
        /// Take a recorded working directory under OLD as the same path under NEW
        /// (another machine's home, a moved checkout); repeatable, the longest OLD wins
        #[arg(long = "map-path", value_name = "OLD=NEW")]
        map_paths: Vec<String>,
    },
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
        /// With --model-view: only the last N messages after the leading system ones
        #[arg(long, value_name = "N", requires = "model_view")]
        last: Option<usize>,
        /// With --model-view: only the trailing messages that fit this many tokens
        #[arg(long, value_name = "TOKENS", requires = "model_view")]
        token_budget: Option<u64>,
        /// The active path (root to head) instead of the transcript
        #[arg(long, conflicts_with = "model_view")]
        active_path: bool,
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
    /// Append a message (or a batch, written as one) to a session
    Append {
        /// Session id or a unique prefix of it
        id: String,
        /// The message, a JSON object such as '{"role":"user","content":"hi"}', or an array of
        /// them appended as one batch; - reads it from stdin
        message: String,
    },
    /// Append a user message with a snapshot of the files the session tracks (an undo point)
    UserInput {
        /// Session id or a unique prefix of it
        id: String,
        /// The message, a JSON object; - reads it from stdin
        message: String,
    },
    /// Snapshot files around an edit, so that a rewind can restore them
    #[command(group(clap::ArgGroup::new("when").args(["before", "after"]).required(true)))]
    Snapshot {
        /// Session id or a unique prefix of it
        id: String,
        /// Before the edit: the files as they are now become tracked
        #[arg(long)]
        before: bool,
        /// After the edit
        #[arg(long)]
        after: bool,
        /// The edited files, relative to the project
        #[arg(required = true)]
        paths: Vec<String>,
    },
    /// Set fields of a session's state (docs/FORMAT.md §10)
    State {
        /// Session id or a unique prefix of it
        id: String,
        /// The fields, a JSON object such as '{"model":"m1"}'; - reads it from stdin
        set: String,
    },
    /// Choose messages to compact, or replace them with a summary (originals kept)
    #[command(subcommand)]
    Compact(CompactCommand),
    /// Subagents: spawn one, append to its sidechain, finish it, show it
    #[command(subcommand)]
    Subagent(SubagentCommand),
    /// A graph checkpointer's threads (LangGraph's): store, read and remove checkpoints
    #[command(subcommand)]
    Checkpoint(CheckpointCommand),
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
    /// The sessions pruned into the trash (beyond maxSessions), until gc purges them
    Trash,
    /// Move a session back from the trash, with its subagents and file history
    Restore {
        /// The trashed session's id (as `sessionkit trash` shows it)
        id: String,
    },
    /// The user messages a session can be rewound to, with the file changes since
    Undo {
        /// Session id or a unique prefix of it
        id: String,
    },
    /// Rewind files and/or conversation to before a user message
    Rewind(RewindArgs),
    /// A session's active path as seed-style JSONL, a Markdown transcript or JSON
    /// on stdout; with --to, written into another agent's own store
    Export {
        /// Session id or a unique prefix of it
        id: String,
        #[arg(long, value_enum, default_value = "jsonl", conflicts_with = "to")]
        format: ExportFormat,
        /// Write the session where that agent keeps its own, instead of printing
        /// it: claude-code (a transcript under $CLAUDE_CONFIG_DIR/projects that
        /// `claude --resume` resumes) or codex (a rollout under
        /// $CODEX_HOME/sessions that `codex resume` lists)
        #[arg(long, value_enum)]
        to: Option<ExportTarget>,
        /// The agent's home for --to (absolute; default $CLAUDE_CONFIG_DIR, else
        /// ~/.claude; $CODEX_HOME, else ~/.codex). Not --home: that is
        /// sessionkit's own store
        #[arg(long, value_name = "DIR", requires = "to", alias = "codex-home")]
        agent_home: Option<std::path::PathBuf>,
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
    /// Layered settings: user, project, local (docs/SETTINGS.md)
    #[command(subcommand)]
    Config(ConfigCommand),
    /// The instruction files (AGENTS.md, CLAUDE.md, ...) that apply to a directory
    Instructions(InstructionsArgs),
    /// The project's (or with --user, your) memories: Markdown files with an index
    #[command(subcommand)]
    Memory(MemoryCommand),
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

#[derive(Debug, Subcommand)]
pub enum CompactCommand {
    /// Print the messages a compaction to this budget would replace (changes nothing)
    Select {
        /// Session id or a unique prefix of it
        id: String,
        /// The model view should fit in this many tokens
        #[arg(long, value_name = "TOKENS")]
        token_budget: u64,
        /// Turns at the end never compacted [default: 2]
        #[arg(long, value_name = "N")]
        keep_last_turns: Option<usize>,
        /// Tokens reserved for the summary [default: 1000]
        #[arg(long, value_name = "TOKENS")]
        summary_tokens: Option<u64>,
    },
    /// Replace messages with a summary in the model's view; the originals stay in the log
    Apply {
        /// Session id or a unique prefix of it
        id: String,
        /// The summary, a JSON string or an array of content blocks; - reads it from stdin
        summary: String,
        /// The ids of the messages it replaces (a contiguous run of the model view)
        #[arg(required = true)]
        replaces: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SubagentCommand {
    /// Start a subagent's sidechain; prints its id
    Spawn {
        /// Session id or a unique prefix of it
        id: String,
        /// The subagent id [default: a fresh one]
        #[arg(long)]
        agent: Option<String>,
        /// Its metadata, a JSON object [default: {}]
        #[arg(long, value_name = "JSON")]
        meta: Option<String>,
    },
    /// Append a message to a subagent's sidechain
    Append {
        /// Session id or a unique prefix of it
        id: String,
        agent: String,
        /// The message, a JSON object; - reads it from stdin
        message: String,
    },
    /// Record a subagent's result and close its sidechain
    Finish {
        /// Session id or a unique prefix of it
        id: String,
        agent: String,
        /// The result, any JSON value; - reads it from stdin
        result: String,
        /// The subagent failed
        #[arg(long)]
        failed: bool,
    },
    /// A subagent's sidechain, root to head
    Show {
        /// Session id or a unique prefix of it
        id: String,
        agent: String,
    },
}

/// The checkpoint commands take and print the JSON of the C ABI's
/// `sk_checkpoint_*` (docs/FORMAT.md §24): values as `{"type", "bytes"}`, the
/// bytes in base64.
#[derive(Debug, Subcommand)]
pub enum CheckpointCommand {
    /// Store a checkpoint with the values of its new channel versions
    Put {
        /// The thread id (any string; the thread is the session it maps to)
        thread: String,
        /// {"ns", "checkpoint" (with "id", without channel_values), "metadata", "parentId",
        /// "values": [{"channel", "version", "value": {"type", "bytes"} | null}]}; - reads stdin
        #[arg(value_name = "JSON")]
        put: String,
    },
    /// Store the writes a task made, pending on a checkpoint
    Writes {
        /// The thread id
        thread: String,
        /// {"ns", "checkpointId", "taskId", "taskPath", "writes": [{"channel", "value":
        /// {"type", "bytes"}}]}; - reads stdin
        #[arg(value_name = "JSON")]
        writes: String,
    },
    /// A checkpoint with its values and pending writes (the newest of the namespace by default)
    Get {
        /// The thread id
        thread: String,
        /// The namespace [default: "", the graph itself]
        #[arg(long, default_value = "")]
        ns: String,
        /// The checkpoint id [default: the newest]
        #[arg(long)]
        id: Option<String>,
    },
    /// Checkpoints, newest first in each thread and namespace
    List {
        /// {"threadId", "ns", "checkpointId", "filter", "before", "limit"}, each optional
        /// [default: every checkpoint of every thread]; - reads stdin
        #[arg(value_name = "QUERY_JSON")]
        query: Option<String>,
    },
    /// Copy every checkpoint, write and value of a thread into another
    Copy {
        /// The thread to copy
        source: String,
        /// The thread to copy into (created if needed)
        target: String,
    },
    /// Keep only each namespace's newest checkpoint, or move the threads to the trash
    Prune {
        /// keep_latest (each namespace's newest checkpoint) or delete (the whole thread)
        #[arg(long, value_name = "S")]
        strategy: String,
        /// The thread ids
        #[arg(required = true, value_name = "THREAD")]
        threads: Vec<String>,
    },
    /// Remove, in every thread, the checkpoints of these runs (metadata.run_id)
    DeleteRuns {
        /// The run ids
        #[arg(required = true, value_name = "RUN")]
        runs: Vec<String>,
    },
    /// Move a thread's session to the trash (`sessionkit restore` brings it back)
    Delete {
        /// The thread id
        thread: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Jsonl,
    Markdown,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportTarget {
    ClaudeCode,
    Codex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportFrom {
    ClaudeCode,
    Codex,
    Deepcode,
    Pi,
    GeminiCli,
    CopilotCli,
    Opencode,
}

/// Which settings sources to read.
#[derive(Debug, Clone, Args)]
pub struct SourcesArg {
    /// The sources to load, comma-separated: user,project,local [default: all]
    #[arg(long, value_name = "LIST")]
    pub setting_sources: Option<String>,
}

/// The settings file to write.
#[derive(Debug, Clone, Args)]
pub struct TargetArg {
    /// The file to change: user, project or local
    #[arg(long, default_value = "local", value_name = "SOURCE")]
    pub source: String,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The effective value of a dotted key
    Get {
        key: String,
        /// Also print the source that set it
        #[arg(long)]
        show_origin: bool,
        #[command(flatten)]
        sources: SourcesArg,
    },
    /// Set a dotted key in one file; VALUE is JSON, or else a string (null removes the key from the sources below)
    Set {
        key: String,
        value: String,
        #[command(flatten)]
        target: TargetArg,
    },
    /// Remove a dotted key from one file
    Unset {
        key: String,
        #[command(flatten)]
        target: TargetArg,
    },
    /// Every effective setting, and the state of each source
    List {
        /// Also print the source of each value
        #[arg(long)]
        show_origin: bool,
        #[command(flatten)]
        sources: SourcesArg,
    },
    /// Rewrite a settings file in the current shape (an older one is backed up first)
    Migrate {
        #[command(flatten)]
        target: TargetArg,
    },
}

#[derive(Debug, Args)]
pub struct InstructionsArgs {
    /// The working directory [default: the current directory]
    pub dir: Option<PathBuf>,
    /// The file names recognised, comma-separated [default: the settings', else AGENTS.md,CLAUDE.md]
    #[arg(long, value_name = "LIST")]
    pub names: Option<String>,
    /// How many levels of @path includes to follow [default: the settings', else 5]
    #[arg(long, value_name = "N")]
    pub max_include_depth: Option<usize>,
    /// Print each file's contents too
    #[arg(long)]
    pub full: bool,
}

/// Whose memories.
#[derive(Debug, Clone, Args)]
pub struct ScopeArg {
    /// Your own memories, for every project, instead of the project's
    #[arg(long)]
    pub user: bool,
}

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Add a memory; TEXT - (or none) reads it from stdin
    Add {
        name: String,
        text: Option<String>,
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// Replace a memory's text; TEXT - (or none) reads it from stdin
    Update {
        name: String,
        text: Option<String>,
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// Delete a memory
    Rm {
        name: String,
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// The memories, by name, with their first line
    List {
        #[command(flatten)]
        scope: ScopeArg,
    },
    /// A memory's text
    Show {
        name: String,
        #[command(flatten)]
        scope: ScopeArg,
    },
}
