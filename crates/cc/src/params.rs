//! Typed algorithm parameters: the kinds and defaults an algorithm declares
//! in its `PARAMS` table, the values an experiment file gives, and the
//! resolved set an algorithm's config reads.
//!
//! Every algorithm imports these types, and [`crate::registry`] checks given
//! values against them, so this module imports nothing of the crate: it sits
//! below both.

/// A parameter value as given in an experiment file.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Str(s) => write!(f, "\"{s}\""),
        }
    }
}

/// The type and range a parameter accepts.
#[derive(Clone, Copy, Debug)]
pub enum ParamKind {
    Bool,
    Int { min: i64, max: i64 },
    Float { min: f64, max: f64 },
    Choice(&'static [&'static str]),
}

/// A parameter's default, stored statically.
#[derive(Clone, Copy, Debug)]
pub enum ParamDefault {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'static str),
}

impl ParamDefault {
    /// The default as a value, as resolution fills it in.
    pub(crate) fn value(self) -> ParamValue {
        match self {
            ParamDefault::Bool(b) => ParamValue::Bool(b),
            ParamDefault::Int(i) => ParamValue::Int(i),
            ParamDefault::Float(x) => ParamValue::Float(x),
            ParamDefault::Str(s) => ParamValue::Str(s.to_string()),
        }
    }
}

/// One typed parameter of an algorithm.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub default: ParamDefault,
    /// What it does, its unit, and where the default comes from.
    pub doc: &'static str,
}

/// Resolved parameters: every parameter of the algorithm, in the registry's
/// order, with the given value or the default.
#[derive(Clone, Debug, PartialEq)]
pub struct Params(pub Vec<(String, ParamValue)>);

impl Params {
    fn get(&self, name: &str) -> &ParamValue {
        &self.0.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("parameter {name} missing after resolution")).1
    }
    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            ParamValue::Bool(b) => *b,
            v => panic!("parameter {name} resolved to {v}, not a bool"),
        }
    }
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            ParamValue::Int(i) => *i,
            v => panic!("parameter {name} resolved to {v}, not an integer"),
        }
    }
    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            ParamValue::Float(x) => *x,
            ParamValue::Int(i) => *i as f64,
            v => panic!("parameter {name} resolved to {v}, not a number"),
        }
    }
    pub fn str(&self, name: &str) -> &str {
        match self.get(name) {
            ParamValue::Str(s) => s,
            v => panic!("parameter {name} resolved to {v}, not a string"),
        }
    }
}

/// A parameter error: which parameter (if one) and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// `None` when the algorithm name itself is wrong.
    pub param: Option<String>,
    pub message: String,
}
