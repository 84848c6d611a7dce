//! The abstract syntax of a PRISM-language model (DTMC subset), as parsed and before
//! constants are given values.

use augur_expr::{ConstDecl, Expr};

/// A position in the model file (1-based line and column, byte offsets for the extent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelSpan {
    /// 1-based line of the start.
    pub line: usize,
    /// 1-based column (in characters) of the start.
    pub col: usize,
    /// Byte offset of the start.
    pub start: usize,
    /// Byte offset just past the end.
    pub end: usize,
}

/// The declared model type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelType {
    /// `dtmc` or `probabilistic`.
    Dtmc,
}

/// The type and range of a state variable.
#[derive(Clone, Debug, PartialEq)]
pub enum VarType {
    /// `[lo..hi]` (bounds are constant expressions).
    Int {
        /// Lower bound.
        lo: Expr,
        /// Upper bound.
        hi: Expr,
    },
    /// `bool`.
    Bool,
}

/// A state variable declaration: `x : [lo..hi] init e;` or `b : bool init e;`.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// The variable's name.
    pub name: String,
    /// Its type and range.
    pub kind: VarType,
    /// The initial value (a constant expression); `None` means the lower bound / `false`.
    pub init: Option<Expr>,
    /// Where it is declared.
    pub span: ModelSpan,
}

/// One assignment `x' = e` of an update.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The updated variable.
    pub var: String,
    /// Its new value, evaluated in the current state.
    pub value: Expr,
}

/// One probabilistic branch `p : (x'=e) & ...` of a command (`true` = no assignment).
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// The branch's probability (`1` when the command has a single branch without one).
    pub prob: Expr,
    /// For an interval update `[lo, hi] : ...`, the upper bound `hi` (`prob` is then `lo`).
    pub upper: Option<Expr>,
    /// The assignments (empty for `true`).
    pub assignments: Vec<Assignment>,
}

/// A guarded command `[action] guard -> updates;`.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    /// The action label (`None` for `[]`).
    pub action: Option<String>,
    /// The guard.
    pub guard: Expr,
    /// The probabilistic branches.
    pub updates: Vec<Update>,
    /// Where the command is written (for renamed modules: the original command).
    pub span: ModelSpan,
}

/// A module: local variables and commands.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// The module's name.
    pub name: String,
    /// Local variables.
    pub vars: Vec<VarDecl>,
    /// Commands, in file order.
    pub commands: Vec<Command>,
    /// Where the module is declared.
    pub span: ModelSpan,
    /// For a module made by renaming: the name of the module it copies.
    pub renamed_from: Option<String>,
}

/// `module B = A [old=new, ...] endmodule` before it is expanded.
#[derive(Clone, Debug, PartialEq)]
pub struct RenamedModule {
    /// The new module's name.
    pub name: String,
    /// The module copied.
    pub base: String,
    /// The renamings `old = new`.
    pub renaming: Vec<(String, String)>,
    /// Where it is declared.
    pub span: ModelSpan,
}

/// `formula NAME = expr;`
#[derive(Clone, Debug, PartialEq)]
pub struct FormulaDef {
    /// The formula's name.
    pub name: String,
    /// Its body.
    pub body: Expr,
    /// Where it is declared.
    pub span: ModelSpan,
}

/// `label "NAME" = expr;`
#[derive(Clone, Debug, PartialEq)]
pub struct ModelLabelDef {
    /// The label's name (without quotes).
    pub name: String,
    /// Its defining boolean expression.
    pub body: Expr,
    /// Where it is declared.
    pub span: ModelSpan,
}

/// One item of a reward structure.
#[derive(Clone, Debug, PartialEq)]
pub struct RewardItem {
    /// `None` for a state reward `guard : value;`; `Some(None)` for a transition reward of
    /// unlabelled commands `[] guard : value;`; `Some(Some(a))` for `[a] guard : value;`.
    pub action: Option<Option<String>>,
    /// The states where the item applies.
    pub guard: Expr,
    /// The reward.
    pub value: Expr,
    /// Where it is written.
    pub span: ModelSpan,
}

/// `rewards "NAME" ... endrewards`
#[derive(Clone, Debug, PartialEq)]
pub struct RewardsDef {
    /// The name, if any.
    pub name: Option<String>,
    /// The items, in order.
    pub items: Vec<RewardItem>,
    /// Where it is declared.
    pub span: ModelSpan,
}

/// A constant declaration with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstDef {
    /// The declaration (name, type, optional value).
    pub decl: ConstDecl,
    /// Where it is declared.
    pub span: ModelSpan,
}

/// A parsed PRISM model file (the syntax tree, renamed modules already expanded).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelAst {
    /// The model type.
    pub model_type: ModelType,
    /// Constants, in file order.
    pub constants: Vec<ConstDef>,
    /// Global variables.
    pub globals: Vec<VarDecl>,
    /// Modules, in file order (renamed modules expanded in place).
    pub modules: Vec<Module>,
    /// Formulas, in file order.
    pub formulas: Vec<FormulaDef>,
    /// Labels, in file order.
    pub labels: Vec<ModelLabelDef>,
    /// Reward structures, in file order.
    pub rewards: Vec<RewardsDef>,
    /// The `init ... endinit` predicate, if given.
    pub init: Option<(Expr, ModelSpan)>,
}
