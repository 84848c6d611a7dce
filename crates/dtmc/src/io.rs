//! Format dispatch: [`read_model`] by extension, [`write_model`] by [`Format`].

/// Options for reading models.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Give states without successors a self-loop (listed in the [`crate::BuildReport`])
    /// instead of failing. Default `true`, as in PRISM.
    pub fix_deadlocks: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            fix_deadlocks: true,
        }
    }
}
