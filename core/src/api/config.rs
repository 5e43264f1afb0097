//! The [`Store`] methods for what an agent keeps besides its sessions: layered
//! settings, the instruction files that apply to a directory, and memory
//! (docs/SETTINGS.md). Each delegates to `settings`, `instructions` or `memory`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::api::Store;
use crate::error::{Error, Result};
use crate::instructions::{
    self, InstructionOptions, Instructions, DEFAULT_INSTRUCTION_NAMES, DEFAULT_MAX_INCLUDE_DEPTH,
    MAX_INCLUDE_DEPTH_LIMIT,
};
use crate::memory::{MemoryDir, MemoryEntry, MemoryScope};
use crate::settings::{SettingSource, Settings, SettingsFiles, SettingsOptions, SettingsWrite};

impl Store {
    /// The sessionkit home: the store directory is `<home>/projects/<code>/`.
    fn home(&self) -> PathBuf {
        let dir = self.core.dir();
        dir.parent()
            .and_then(Path::parent)
            .unwrap_or(dir)
            .to_path_buf()
    }

    fn settings_files(&self) -> SettingsFiles {
        SettingsFiles {
            home: self.home(),
            project: self.core.project_root().to_path_buf(),
        }
    }

    /// The effective settings of this user and project: the selected sources
    /// merged (user, project, local, then the host's overrides; the nearer
    /// wins), each leaf with the source that set it. A source that cannot be
    /// read is reported in `sources` (file, line, column) and the others still
    /// load, so this never fails.
    ///
    /// ```
    /// # use sessionkit::{SettingSource, SettingsOptions, Store, StoreOptions};
    /// # use serde_json::json;
    /// # fn main() -> sessionkit::Result<()> {
    /// # let tmp = tempfile::tempdir().expect("temp dir");
    /// # let options = StoreOptions { home: Some(tmp.path().join("home")), ..StoreOptions::default() };
    /// # let store = Store::open(tmp.path(), options)?;
    /// store.set_setting(SettingSource::User, "model", json!("small"))?;
    /// store.set_setting(SettingSource::Project, "model", json!("large"))?;
    /// let settings = store.settings(&SettingsOptions::default());
    /// let model = settings.get("model").expect("set");
    /// assert_eq!((model.value, model.origin), (json!("large"), Some(SettingSource::Project)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn settings(&self, options: &SettingsOptions) -> Settings {
        self.settings_files().load(options)
    }

    /// Set a dotted key in the settings file of `source` (user, project or
    /// local; `InvalidInput` for host). A `null` value is written as it is: it
    /// removes the key from the sources below. The write is atomic and locked;
    /// a file of an older shape is backed up once, then rewritten in the
    /// current one; a newer one is `Unsupported` and left untouched; a
    /// malformed one is `Corrupt` (file, line, column).
    pub fn set_setting(
        &self,
        source: SettingSource,
        key: &str,
        value: Value,
    ) -> Result<SettingsWrite> {
        self.settings_files().set(source, key, value)
    }

    /// Remove a dotted key from the settings file of `source`, so the sources
    /// below show through; `existed` says whether it was there.
    pub fn unset_setting(&self, source: SettingSource, key: &str) -> Result<SettingsWrite> {
        self.settings_files().unset(source, key)
    }

    /// Rewrite the settings file of `source` in the current shape (backing up
    /// an older one first); nothing else changes.
    pub fn migrate_settings(&self, source: SettingSource) -> Result<SettingsWrite> {
        self.settings_files().migrate(source)
    }

    /// The instruction files that apply to `dir`, in order: the user's (in the
    /// sessionkit home), then from the repository root down to `dir`, each
    /// followed by what it includes with `@path`. The names and the include
    /// depth come from `options`, else the settings (`instructions.names`,
    /// `instructions.maxIncludeDepth`), else `AGENTS.md`, `CLAUDE.md` and 5.
    /// Files outside the repository root and the home, cycles, and includes
    /// too deep are reported in `problems`, never read. A `dir` that does not
    /// exist or is not a directory is `NotFound`; a name that is not a plain
    /// file name (or holds a control character such as NUL) is `InvalidInput`.
    pub fn instructions(&self, dir: &Path, options: &InstructionOptions) -> Result<Instructions> {
        let settings = self.settings(&SettingsOptions::default());
        let names = options.names.clone().unwrap_or_else(|| {
            settings
                .get("instructions.names")
                .and_then(|v| serde_json::from_value::<Vec<String>>(v.value).ok())
                .unwrap_or_else(|| DEFAULT_INSTRUCTION_NAMES.map(String::from).to_vec())
        });
        let (depth, from) = match options.max_include_depth {
            Some(d) => (d as u64, "option maxIncludeDepth"),
            None => (
                settings
                    .get("instructions.maxIncludeDepth")
                    .and_then(|v| v.value.as_u64())
                    .unwrap_or(DEFAULT_MAX_INCLUDE_DEPTH as u64),
                "setting instructions.maxIncludeDepth",
            ),
        };
        if depth > MAX_INCLUDE_DEPTH_LIMIT as u64 {
            return Err(Error::InvalidInput(format!(
                "the {from} must be at most {MAX_INCLUDE_DEPTH_LIMIT}, not {depth}"
            )));
        }
        let depth = depth as usize;
        instructions::collect(dir, &self.home(), self.core.project_root(), names, depth)
    }

    fn memory_dir(&self, scope: MemoryScope) -> MemoryDir {
        MemoryDir::new(&self.home(), scope, self.core.project_code())
    }

    /// The directory holding the memories of `scope`.
    pub fn memory_path(&self, scope: MemoryScope) -> PathBuf {
        self.memory_dir(scope).path()
    }

    /// Add a memory `<name>.md`; `Conflict` if the name is taken, `InvalidInput`
    /// for a name that could leave the directory (see [`crate::validate_memory_name`]).
    pub fn add_memory(&self, scope: MemoryScope, name: &str, content: &str) -> Result<MemoryEntry> {
        self.memory_dir(scope).add(name, content)
    }

    /// Replace a memory's text; `NotFound` if there is none by that name.
    pub fn update_memory(
        &self,
        scope: MemoryScope,
        name: &str,
        content: &str,
    ) -> Result<MemoryEntry> {
        self.memory_dir(scope).update(name, content)
    }

    /// Delete a memory; `NotFound` if there is none by that name.
    pub fn delete_memory(&self, scope: MemoryScope, name: &str) -> Result<()> {
        self.memory_dir(scope).delete(name)
    }

    /// Every memory of `scope`, by name.
    pub fn list_memories(&self, scope: MemoryScope) -> Result<Vec<MemoryEntry>> {
        self.memory_dir(scope).list()
    }

    /// A memory's text; `NotFound` if there is none by that name.
    pub fn read_memory(&self, scope: MemoryScope, name: &str) -> Result<String> {
        self.memory_dir(scope).read(name)
    }
}
