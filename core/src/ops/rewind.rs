//! The preview of a rewind: the file plan and where the conversation head goes,
//! and the rewind mode by name.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::history::{RewindMode, RewindPlan};
use crate::store::session::SessionCore;

impl RewindMode {
    /// The mode's name: "conversation", "files" or "both" (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            RewindMode::Conversation => "conversation",
            RewindMode::Files => "files",
            RewindMode::Both => "both",
        }
    }
}

impl std::str::FromStr for RewindMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<RewindMode> {
        [
            RewindMode::Files,
            RewindMode::Conversation,
            RewindMode::Both,
        ]
        .into_iter()
        .find(|m| m.as_str() == s)
        .ok_or_else(|| {
            Error::invalid(format!(
                "rewind mode {s:?} is not one of \"files\", \"conversation\", \"both\""
            ))
        })
    }
}

impl std::fmt::Display for RewindMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A move of the conversation head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeadMove {
    /// The head before the move; `None` when it was before the first message.
    pub from: Option<String>,
    /// `None`: before the first message (the active path is empty).
    pub to: Option<String>,
}

/// What applying a rewind would do; nothing is changed to make it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindPreview {
    /// The user message rewound to (the state before it).
    pub message_id: String,
    /// What is rewound: files, the conversation, or both.
    pub mode: RewindMode,
    /// The file plan; `None` for a conversation-only rewind.
    pub plan: Option<RewindPlan>,
    /// Where the head goes: to the message's parent, or nowhere for `files`.
    pub head: HeadMove,
}

impl RewindPreview {
    /// Files whose conflict makes applying fail unless forced.
    pub fn forcible_conflicts(&self) -> usize {
        self.plan.as_ref().map_or(0, |p| {
            p.files
                .iter()
                .filter(|f| f.conflict.is_some_and(|c| c.forcible()))
                .count()
        })
    }
}

pub(crate) fn preview(
    s: &SessionCore,
    message_id: &str,
    mode: RewindMode,
) -> Result<RewindPreview> {
    let (parent, _) = s.rewind_target(message_id)?;
    let plan = match mode {
        RewindMode::Conversation => None,
        RewindMode::Files | RewindMode::Both => Some(s.rewind_plan(message_id)?),
    };
    let from = s.head();
    let to = match mode {
        RewindMode::Files => from.clone(),
        RewindMode::Conversation | RewindMode::Both => parent,
    };
    Ok(RewindPreview {
        message_id: message_id.to_string(),
        mode,
        plan,
        head: HeadMove { from, to },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_names_round_trip() {
        for m in [
            RewindMode::Files,
            RewindMode::Conversation,
            RewindMode::Both,
        ] {
            assert_eq!(m.as_str().parse::<RewindMode>().unwrap(), m);
            assert_eq!(serde_json::to_value(m).unwrap(), m.as_str());
            let back: RewindMode = serde_json::from_value(m.as_str().into()).unwrap();
            assert_eq!(back, m);
        }
        let e = "sideways".parse::<RewindMode>().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("\"sideways\""), "{e}");
    }
}
