//! `NativeStore`'s calls for settings, instruction files and memory
//! (docs/SETTINGS.md), one for each of the Python module's.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use sessionkit::{InstructionOptions, MemoryScope, SettingSource, SettingsOptions};

use crate::store::NativeStore;
use crate::{parse_arg, text, Job};

#[napi]
impl NativeStore {
    /// The effective settings (`options`: the core's SettingsOptions as
    /// JSON), as JSON: a malformed source is reported in it, not rejected.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn settings(&self, options: Option<String>) -> AsyncTask<Job<String, String>> {
        self.call(move |s| {
            let opts = crate::options(options.as_deref(), SettingsOptions::from_json)?;
            text(&s.settings(&opts))
        })
    }

    /// Set a dotted key (`value` as JSON text) in the file of `source`.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn set_setting(
        &self,
        source: String,
        key: String,
        value: String,
    ) -> AsyncTask<Job<String, String>> {
        self.call(move |s| {
            let source = SettingSource::parse(&source)?;
            let value = parse_arg(&value, "value")?;
            text(&s.set_setting(source, &key, value)?)
        })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn unset_setting(&self, source: String, key: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| text(&s.unset_setting(SettingSource::parse(&source)?, &key)?))
    }

    /// Rewrite the file of `source` in the current shape, backing up an older one.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn migrate_settings(&self, source: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| text(&s.migrate_settings(SettingSource::parse(&source)?)?))
    }

    /// The instruction files that apply to `dir` (`options`: the core's
    /// InstructionOptions as JSON), as JSON.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn instructions(
        &self,
        dir: String,
        options: Option<String>,
    ) -> AsyncTask<Job<String, String>> {
        self.call(move |s| {
            let opts = crate::options(options.as_deref(), InstructionOptions::from_json)?;
            text(&s.instructions(std::path::Path::new(&dir), &opts)?)
        })
    }

    /// Add a memory, or replace its text (`replace`), as the core's entry in JSON.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn memory_write(
        &self,
        scope: String,
        name: String,
        content: String,
        replace: bool,
    ) -> AsyncTask<Job<String, String>> {
        self.call(move |s| {
            let scope = MemoryScope::parse(&scope)?;
            text(&match replace {
                true => s.update_memory(scope, &name, &content)?,
                false => s.add_memory(scope, &name, &content)?,
            })
        })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn memory_delete(&self, scope: String, name: String) -> AsyncTask<Job<(), ()>> {
        self.call(move |s| s.delete_memory(MemoryScope::parse(&scope)?, &name))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn memory_list(&self, scope: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| text(&s.list_memories(MemoryScope::parse(&scope)?)?))
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn memory_read(&self, scope: String, name: String) -> AsyncTask<Job<String, String>> {
        self.call(move |s| s.read_memory(MemoryScope::parse(&scope)?, &name))
    }
}
