//! A discipline's parameters: the catalogue entry that states each one's
//! type, unit, range and source ([`QdiscInfo`], read by the Python front end
//! too), and [`Fields`], through which a configuration is both read from
//! checked parameters and written back out, so the two cannot disagree.

pub use cc::ParamValue;

/// Type of a discipline parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    Float,
    Int,
    Bool,
    Str,
}

impl ParamType {
    pub fn name(self) -> &'static str {
        match self {
            ParamType::Float => "float",
            ParamType::Int => "int",
            ParamType::Bool => "bool",
            ParamType::Str => "str",
        }
    }
}

/// Default value of a discipline parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    Float(f64),
    Int(i64),
    Bool(bool),
    Str(&'static str),
}

/// The unit an integer parameter is counted in; the experiment file writes
/// these with a unit (`target = "5ms"`, `mtu = "1514B"`) and the name ends
/// in `_ns` or `_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A plain number (packets, a probability, a gain, ...; the doc says which).
    Plain,
    /// Nanoseconds.
    Ns,
    /// Bytes.
    Bytes,
}

impl Unit {
    /// `None`, `"ns"` or `"bytes"`, as the Python front end reads it.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Unit::Plain => None,
            Unit::Ns => Some("ns"),
            Unit::Bytes => Some("bytes"),
        }
    }
}

/// One parameter of a discipline: the single statement of its type, unit
/// and range, which [`super::QdiscConfig::from_params`] (and so the engine's own
/// check of a configuration) and the Python validation both apply.
#[derive(Clone, Debug)]
pub struct QdiscParam {
    pub name: &'static str,
    pub ty: ParamType,
    pub default: DefaultValue,
    /// Bounds of a number (every number has both; none for bools and strings),
    /// in the parameter's unit.
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The bound itself is outside the range: min < x rather than min ≤ x.
    pub min_open: bool,
    pub max_open: bool,
    pub unit: Unit,
    /// The value must be greater than this other parameter's (RED's max_th > min_th).
    pub exceeds: Option<&'static str>,
    pub choices: &'static [&'static str],
    pub doc: &'static str,
}

impl QdiscParam {
    /// Whether the number `x` lies in the range.
    pub fn admits(&self, x: f64) -> bool {
        let above = self.min.is_none_or(|m| if self.min_open { x > m } else { x >= m });
        let below = self.max.is_none_or(|m| if self.max_open { x < m } else { x <= m });
        x.is_finite() && above && below
    }

    /// The range as text: `(0, 10000000000000]`, `[0, 1]`.
    pub fn range(&self) -> String {
        let lo = self.min.map_or("-inf".to_string(), |m| m.to_string());
        let hi = self.max.map_or("inf".to_string(), |m| m.to_string());
        let (l, r) = (if self.min_open { "(" } else { "[" }, if self.max_open { ")" } else { "]" });
        format!("{l}{lo}, {hi}{r}")
    }

    pub(super) fn open_min(self) -> QdiscParam {
        QdiscParam { min_open: true, ..self }
    }

    pub(super) fn open_max(self) -> QdiscParam {
        QdiscParam { max_open: true, ..self }
    }

    pub(super) fn unit(self, unit: Unit) -> QdiscParam {
        QdiscParam { unit, ..self }
    }

    pub(super) fn exceeds(self, other: &'static str) -> QdiscParam {
        QdiscParam { exceeds: Some(other), ..self }
    }
}

/// One discipline: its name (the `kind` key), summary, sources and parameters.
#[derive(Clone, Debug)]
pub struct QdiscInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub params: Vec<QdiscParam>,
}

/// A parameter with an inclusive range `[min, max]` (open ends, a unit and
/// relations are added with the builder methods above).
pub(super) const fn p(
    name: &'static str,
    ty: ParamType,
    default: DefaultValue,
    min: Option<f64>,
    max: Option<f64>,
    doc: &'static str,
) -> QdiscParam {
    QdiscParam {
        name,
        ty,
        default,
        min,
        max,
        min_open: false,
        max_open: false,
        unit: Unit::Plain,
        exceeds: None,
        choices: &[],
        doc,
    }
}

/// Longest time parameter, ns: 10^4 s, far beyond any sensible target or
/// interval and 100 times below the engine's limit on any time.
pub(super) const MAX_PARAM_NS: f64 = 1e13;
/// Largest size parameter (MTU, average packet), bytes.
pub(super) const MAX_PARAM_BYTES: f64 = 1e6;

/// A time in (0, 10^4 s], written with a unit in the experiment file.
pub(super) fn ns(name: &'static str, default: i64, doc: &'static str) -> QdiscParam {
    p(name, ParamType::Int, DefaultValue::Int(default), Some(0.0), Some(MAX_PARAM_NS), doc).open_min().unit(Unit::Ns)
}

/// A size in [1 B, 1 MB], written with a unit in the experiment file.
pub(super) fn bytes(name: &'static str, default: i64, doc: &'static str) -> QdiscParam {
    p(name, ParamType::Int, DefaultValue::Int(default), Some(1.0), Some(MAX_PARAM_BYTES), doc).unit(Unit::Bytes)
}

use DefaultValue as D;
use ParamType as T;

/// Looks up `name` in `given`, checks its type and range against the
/// catalogue entry, and falls back to the default.
pub struct Args<'a> {
    pub(super) info: &'a QdiscInfo,
    pub(super) given: &'a [(String, ParamValue)],
}

impl Args<'_> {
    fn raw(&self, name: &str) -> Result<(ParamValue, &QdiscParam), String> {
        let spec = self.info.params.iter().find(|q| q.name == name).expect("parameter missing from catalogue");
        let v = match self.given.iter().find(|(k, _)| k == name) {
            Some((_, v)) => v.clone(),
            None => match spec.default {
                D::Float(x) => ParamValue::Float(x),
                D::Int(i) => ParamValue::Int(i),
                D::Bool(b) => ParamValue::Bool(b),
                D::Str(s) => ParamValue::Str(s.into()),
            },
        };
        Ok((v, spec))
    }

    /// A number, checked against its type, its range and the parameter it
    /// must exceed (the messages match the Python validation's).
    fn num(&self, name: &str) -> Result<f64, String> {
        let (v, spec) = self.raw(name)?;
        let (x, what) = match (&v, spec.ty) {
            (ParamValue::Float(x), T::Float) => (*x, "a number"),
            (ParamValue::Int(i), T::Float) => (*i as f64, "a number"),
            (ParamValue::Int(i), T::Int) => (*i as f64, "an integer"),
            (v, t) => return Err(format!("{name}: expected {}, got {v}", t.name())),
        };
        if !spec.admits(x) {
            return Err(format!("{name}: expected {what} in {}, got {v}", spec.range()));
        }
        if let Some(other) = spec.exceeds {
            let y = self.num(other)?;
            if x <= y {
                return Err(format!("{name}: must exceed {other} ({y}), got {v}"));
            }
        }
        Ok(x)
    }

    fn f(&self, name: &str) -> Result<f64, String> {
        self.num(name)
    }

    fn u(&self, name: &str) -> Result<u64, String> {
        Ok(self.num(name)? as u64)
    }

    fn b(&self, name: &str) -> Result<bool, String> {
        match self.raw(name)?.0 {
            ParamValue::Bool(b) => Ok(b),
            v => Err(format!("{name}: expected bool, got {v}")),
        }
    }

    fn s(&self, name: &str) -> Result<String, String> {
        let (v, spec) = self.raw(name)?;
        match v {
            ParamValue::Str(s) if spec.choices.contains(&s.as_str()) => Ok(s),
            v => Err(format!("{name}: expected one of {:?}, got {v}", spec.choices)),
        }
    }
}

/// A configuration's fields visited by name, in one of two directions:
/// [`Fields::Read`] sets each from the given parameters (checked against
/// the catalogue, falling back to its default), [`Fields::Write`] lists
/// each as a parameter. A discipline's `fields` names every field once, in
/// the order errors are reported.
pub enum Fields<'a> {
    Read(Args<'a>),
    Write(Vec<(String, ParamValue)>),
}

impl Fields<'_> {
    pub fn float(&mut self, name: &'static str, v: &mut f64) -> Result<(), String> {
        match self {
            Fields::Read(a) => *v = a.f(name)?,
            Fields::Write(out) => out.push((name.into(), ParamValue::Float(*v))),
        }
        Ok(())
    }

    /// An integer (times in ns, sizes in bytes, counts). Written out, a value
    /// too large for the parameter's integer comes out as `i64::MAX`, which
    /// no range admits.
    pub fn int(&mut self, name: &'static str, v: &mut u64) -> Result<(), String> {
        match self {
            Fields::Read(a) => *v = a.u(name)?,
            Fields::Write(out) => out.push((name.into(), ParamValue::Int((*v).min(i64::MAX as u64) as i64))),
        }
        Ok(())
    }

    pub fn int32(&mut self, name: &'static str, v: &mut u32) -> Result<(), String> {
        let mut x = *v as u64;
        self.int(name, &mut x)?;
        *v = x as u32;
        Ok(())
    }

    pub fn flag(&mut self, name: &'static str, v: &mut bool) -> Result<(), String> {
        match self {
            Fields::Read(a) => *v = a.b(name)?,
            Fields::Write(out) => out.push((name.into(), ParamValue::Bool(*v))),
        }
        Ok(())
    }

    /// One of `names`' values, written as its name.
    pub fn choice<X: Copy + PartialEq>(
        &mut self,
        name: &'static str,
        v: &mut X,
        names: &[(&'static str, X)],
    ) -> Result<(), String> {
        match self {
            Fields::Read(a) => {
                let s = a.s(name)?;
                *v = names.iter().find(|(n, _)| *n == s).expect("a choice without a value").1;
            }
            Fields::Write(out) => {
                let n = names.iter().find(|(_, x)| x == v).expect("a value without a name").0;
                out.push((name.into(), ParamValue::Str(n.into())));
            }
        }
        Ok(())
    }
}
