//! The written form of the engine configuration: how [`crate::Config`] reads
//! and writes itself with serde (a Python dict through pythonize, JSON for
//! the emulator), with the dict keys the front end has always written.
//!
//! Most types derive serde directly. Those whose written form is flatter
//! than the engine's type (a link's `buffer_pkts`/`buffer_bytes`, a flow's
//! `app` with `app_bytes`/`app_rate_bps`, a link model's `schedule`/`trace`,
//! jitter's `dist` with its parameters beside it, a TSO host's
//! `max_defer_ns`) go through a form struct here (`#[serde(try_from, into)]`
//! on the engine type); a queue discipline is a map checked against the
//! catalogue as it is read, an algorithm's parameters a map the registry
//! checks when the flow starts. Every form refuses keys it does not know, and
//! [`read_config`] names the path of the first mistake.
//!
//! [`schema`] is the JSON Schema of this form (schemars, from the same
//! derives): Python's typed view of the configuration reads fields by it.

use std::borrow::Cow;
use std::fmt;

use cc::ParamValue;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::config::{FlowConfig, LinkConfig};
use crate::host::{AccessLink, TsoForm};
use crate::linkmodel::{BatchConfig, BucketConfig, CapacityConfig, JitterConfig, JitterDist, LinkModel, TraceConfig};
use crate::net::QueueLimit;
use crate::qdisc::QdiscConfig;
use crate::tcp::sender::{App, Recovery, Tso};
use crate::traffic::LossModel;

/// Deserialises an absent-or-null value as the type's default (the front
/// end writes `None` for a setting it leaves to the engine).
pub(crate) fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `true` when absent or null (the AccECN receiver defaults).
pub(crate) fn null_true<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(true))
}

/// `true`, for `#[serde(default = ...)]`.
pub(crate) fn yes() -> bool {
    true
}

// ------------------------------------------------------------ parameter maps

/// One parameter value: a boolean, an integer, a float or a string.
struct Value(ParamValue);

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a boolean, number or string")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
                Ok(Value(ParamValue::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
                Ok(Value(ParamValue::Int(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
                i64::try_from(v).map(|v| Value(ParamValue::Int(v))).map_err(|_| E::custom("integer out of range"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
                Ok(Value(ParamValue::Float(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
                Ok(Value(ParamValue::Str(v.to_owned())))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            ParamValue::Bool(b) => s.serialize_bool(*b),
            ParamValue::Int(i) => s.serialize_i64(*i),
            ParamValue::Float(x) => s.serialize_f64(*x),
            ParamValue::Str(t) => s.serialize_str(t),
        }
    }
}

/// Reads a map of parameter values in the order written.
fn read_params<'de, A: MapAccess<'de>>(mut m: A) -> Result<Vec<(String, ParamValue)>, A::Error> {
    let mut out = Vec::new();
    while let Some(k) = m.next_key::<String>()? {
        let v: Value = m.next_value()?;
        out.push((k, v.0));
    }
    Ok(out)
}

/// An algorithm's parameters as a map of name → value (`{}` or null: none),
/// kept in the order written; the registry checks them when the flow starts.
pub mod params {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, ParamValue)>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<(String, ParamValue)>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of parameter names to values")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_map(V)
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Self::Value, A::Error> {
                read_params(m)
            }
        }
        d.deserialize_option(V)
    }

    pub fn serialize<S: Serializer>(p: &[(String, ParamValue)], s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(p.len()))?;
        for (k, v) in p {
            m.serialize_entry(k, &Value(v.clone()))?;
        }
        m.end()
    }
}

/// A queue discipline: `{"kind": name, <parameter>: value, …}`, checked
/// against [`crate::qdisc_catalogue`] (unknown parameters and values out of
/// range are refused naming the parameter).
impl<'de> Deserialize<'de> for QdiscConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QdiscConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a queue discipline: a map with `kind` and its parameters")
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<QdiscConfig, A::Error> {
                let mut params = read_params(m)?;
                let kind = match params.iter().position(|(k, _)| k == "kind") {
                    Some(i) => match params.remove(i).1 {
                        ParamValue::Str(s) => s,
                        _ => return Err(de::Error::custom("kind: expected a string")),
                    },
                    None => return Err(de::Error::missing_field("kind")),
                };
                QdiscConfig::from_params(&kind, &params).map_err(de::Error::custom)
            }
        }
        d.deserialize_map(V)
    }
}

impl Serialize for QdiscConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let params = self.params();
        let mut m = s.serialize_map(Some(params.len() + 1))?;
        m.serialize_entry("kind", self.name())?;
        for (k, v) in params {
            m.serialize_entry(&k, &Value(v))?;
        }
        m.end()
    }
}

/// The schema of a parameter map: names to booleans, numbers or strings.
pub struct ParamsSchema;

impl JsonSchema for ParamsSchema {
    fn schema_name() -> Cow<'static, str> {
        "Params".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An algorithm's parameters: name → value, checked against the registry",
            "type": "object",
            "additionalProperties": {"type": ["boolean", "integer", "number", "string"]}
        })
    }
}

/// One variant per discipline of the catalogue: `kind` and its parameters.
impl JsonSchema for QdiscConfig {
    fn schema_name() -> Cow<'static, str> {
        "QdiscConfig".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        use crate::qdisc::ParamType;
        use serde_json::{json, Map, Value};
        let variants: Vec<Value> = crate::qdisc_catalogue()
            .iter()
            .map(|q| {
                let mut props = Map::new();
                props.insert("kind".into(), json!({"const": q.name, "description": q.summary}));
                for p in &q.params {
                    let mut ty = match p.ty {
                        _ if !p.choices.is_empty() => json!({"type": "string", "enum": p.choices}),
                        ParamType::Int => json!({"type": "integer"}),
                        ParamType::Float => json!({"type": "number"}),
                        ParamType::Bool => json!({"type": "boolean"}),
                        ParamType::Str => json!({"type": "string"}),
                    };
                    ty["description"] = p.doc.into();
                    props.insert(p.name.into(), ty);
                }
                json!({"type": "object", "properties": props, "required": ["kind"], "additionalProperties": false})
            })
            .collect();
        json_schema!({"description": "A queue discipline and its parameters", "oneOf": variants})
    }
}

// ------------------------------------------------------------------- links

/// A link as written: `bottleneck`, `reverse` and `network.links[k]`.
#[derive(Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkForm {
    /// Rate, bit/s.
    pub rate_bps: u64,
    /// One-way propagation delay, ns (default 0).
    #[serde(default, deserialize_with = "null_default")]
    pub delay_ns: u64,
    /// Capacity in packets (exactly one of this and `buffer_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_pkts: Option<u64>,
    /// Capacity in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_bytes: Option<u64>,
    /// Bernoulli loss probability of data packets (default 0).
    #[serde(default, deserialize_with = "null_default")]
    pub loss: f64,
    /// A bursty loss process used instead of `loss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_model: Option<LossModel>,
    /// Queue discipline (default drop-tail).
    #[serde(default, deserialize_with = "null_default")]
    pub qdisc: QdiscConfig,
    /// Capacity over time, policer, shaper, batching, jitter (default: an ideal link).
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "LinkModel::is_ideal")]
    pub model: LinkModel,
}

impl TryFrom<LinkForm> for LinkConfig {
    type Error = String;
    fn try_from(f: LinkForm) -> Result<Self, String> {
        let limit = match (f.buffer_pkts, f.buffer_bytes) {
            (Some(p), None) => QueueLimit::Packets(p),
            (None, Some(b)) => QueueLimit::Bytes(b),
            _ => return Err("exactly one of buffer_pkts and buffer_bytes must be given".into()),
        };
        Ok(LinkConfig {
            rate_bps: f.rate_bps,
            delay_ns: f.delay_ns,
            limit,
            loss: f.loss,
            loss_model: f.loss_model,
            qdisc: f.qdisc,
            model: f.model,
        })
    }
}

impl From<LinkConfig> for LinkForm {
    fn from(l: LinkConfig) -> Self {
        let (buffer_pkts, buffer_bytes) = match l.limit {
            QueueLimit::Packets(p) => (Some(p), None),
            QueueLimit::Bytes(b) => (None, Some(b)),
        };
        LinkForm {
            rate_bps: l.rate_bps,
            delay_ns: l.delay_ns,
            buffer_pkts,
            buffer_bytes,
            loss: l.loss,
            loss_model: l.loss_model,
            qdisc: l.qdisc,
            model: l.model,
        }
    }
}

/// A link's models as written (times in ns, rates in bit/s): at most one of
/// `schedule` and `trace`, and any of the others.
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkModelForm {
    /// Capacity changes: (time ns, rate bit/s), the first at 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Vec<(u64, u64)>>,
    /// Capacity from a delivery-opportunity trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policer: Option<BucketConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaper: Option<BucketConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterConfig>,
}

impl TryFrom<LinkModelForm> for LinkModel {
    type Error = String;
    fn try_from(f: LinkModelForm) -> Result<Self, String> {
        let capacity = match (f.schedule, f.trace) {
            (Some(_), Some(_)) => return Err("schedule and trace: expected at most one of them".into()),
            (Some(s), None) => Some(CapacityConfig::Schedule(s)),
            (None, Some(t)) => Some(CapacityConfig::Trace(t)),
            (None, None) => None,
        };
        Ok(LinkModel { capacity, policer: f.policer, shaper: f.shaper, batch: f.batch, jitter: f.jitter })
    }
}

impl From<LinkModel> for LinkModelForm {
    fn from(m: LinkModel) -> Self {
        let (schedule, trace) = match m.capacity {
            Some(CapacityConfig::Schedule(s)) => (Some(s), None),
            Some(CapacityConfig::Trace(t)) => (None, Some(t)),
            None => (None, None),
        };
        LinkModelForm { schedule, trace, policer: m.policer, shaper: m.shaper, batch: m.batch, jitter: m.jitter }
    }
}

/// The name of a jitter distribution.
#[derive(Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JitterKind {
    Uniform,
    Exponential,
    Normal,
}

/// Jitter as written: `dist` with its parameters beside it.
#[derive(Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JitterForm {
    /// The distribution of the extra delay; none: only `delay_steps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<JitterKind>,
    /// Uniform: the largest extra delay, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ns: Option<u64>,
    /// Exponential and normal: the mean extra delay, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ns: Option<u64>,
    /// Normal: the standard deviation, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sd_ns: Option<u64>,
    /// Whether packets may overtake one another.
    #[serde(default, deserialize_with = "null_default")]
    pub reorder: bool,
    /// Steps of the base delay: (time ns, extra delay ns).
    #[serde(default, deserialize_with = "null_default")]
    pub delay_steps: Vec<(u64, u64)>,
}

impl TryFrom<JitterForm> for JitterConfig {
    type Error = String;
    fn try_from(f: JitterForm) -> Result<Self, String> {
        let need = |v: Option<u64>, key: &str| v.ok_or_else(|| format!("{key}: missing for this dist"));
        let dist = match f.dist {
            None => None,
            Some(JitterKind::Uniform) => Some(JitterDist::Uniform { max_ns: need(f.max_ns, "max_ns")? }),
            Some(JitterKind::Exponential) => Some(JitterDist::Exponential { mean_ns: need(f.mean_ns, "mean_ns")? }),
            Some(JitterKind::Normal) => {
                Some(JitterDist::Normal { mean_ns: need(f.mean_ns, "mean_ns")?, sd_ns: need(f.sd_ns, "sd_ns")? })
            }
        };
        Ok(JitterConfig { dist, reorder: f.reorder, delay_steps: f.delay_steps })
    }
}

impl From<JitterConfig> for JitterForm {
    fn from(j: JitterConfig) -> Self {
        let mut f = JitterForm { reorder: j.reorder, delay_steps: j.delay_steps, ..Default::default() };
        match j.dist {
            None => {}
            Some(JitterDist::Uniform { max_ns }) => {
                f.dist = Some(JitterKind::Uniform);
                f.max_ns = Some(max_ns);
            }
            Some(JitterDist::Exponential { mean_ns }) => {
                f.dist = Some(JitterKind::Exponential);
                f.mean_ns = Some(mean_ns);
            }
            Some(JitterDist::Normal { mean_ns, sd_ns }) => {
                f.dist = Some(JitterKind::Normal);
                f.mean_ns = Some(mean_ns);
                f.sd_ns = Some(sd_ns);
            }
        }
        f
    }
}

// ------------------------------------------------------------------- flows

/// What a flow's application sends.
#[derive(Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    /// Always has data.
    Bulk,
    /// `app_bytes`, then stops.
    Fixed,
    /// At `app_rate_bps`.
    Rate,
}

/// A foreground flow as written.
#[derive(Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowForm {
    /// The algorithm's registry name.
    pub cc: String,
    /// Its parameters (name → value).
    #[serde(default, with = "params")]
    #[schemars(with = "crate::config_form::ParamsSchema")]
    pub params: Vec<(String, ParamValue)>,
    pub start_ns: u64,
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Round-trip propagation delay, ns.
    pub rtt_ns: u64,
    pub mss: u32,
    pub header_bytes: u32,
    pub init_cwnd: u32,
    #[serde(default)]
    pub rwnd_bytes: Option<u64>,
    pub pacing: bool,
    /// `prr` or `newreno`; none: the algorithm's default.
    #[serde(default)]
    pub recovery: Option<Recovery>,
    /// `bulk`, `fixed` (with `app_bytes`) or `rate` (with `app_rate_bps`).
    pub app: AppKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_rate_bps: Option<u64>,
    #[serde(default, deserialize_with = "null_default")]
    pub reverse: bool,
    #[serde(default, deserialize_with = "null_default")]
    pub ecn: bool,
    #[serde(default, deserialize_with = "null_default")]
    pub accecn: bool,
    #[serde(default = "yes", deserialize_with = "null_true")]
    pub receiver_accecn: bool,
    #[serde(default = "yes", deserialize_with = "null_true")]
    pub accecn_option: bool,
    /// Linux's receiver-side SACK compression; none: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack_compression: Option<crate::config::SackCompression>,
    /// Linux's receive window at the receiver; none: not advertised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_window: Option<crate::tcp::rcvwnd::RcvBufConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tso: Option<TsoForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<AccessLink>,
}

impl TryFrom<FlowForm> for FlowConfig {
    type Error = String;
    fn try_from(f: FlowForm) -> Result<Self, String> {
        let app = match f.app {
            AppKind::Bulk => App::Bulk,
            AppKind::Fixed => App::Fixed { bytes: f.app_bytes.ok_or("app_bytes: missing for app \"fixed\"")? },
            AppKind::Rate => App::Rate { bps: f.app_rate_bps.ok_or("app_rate_bps: missing for app \"rate\"")? },
        };
        Ok(FlowConfig {
            cc: f.cc,
            params: f.params,
            start_ns: f.start_ns,
            stop_ns: f.stop_ns,
            rtt_ns: f.rtt_ns,
            mss: f.mss,
            header_bytes: f.header_bytes,
            init_cwnd: f.init_cwnd,
            rwnd_bytes: f.rwnd_bytes,
            pacing: f.pacing,
            recovery: f.recovery,
            app,
            reverse: f.reverse,
            ecn: f.ecn,
            accecn: f.accecn,
            receiver_accecn: f.receiver_accecn,
            accecn_option: f.accecn_option,
            sack_compression: f.sack_compression,
            receive_window: f.receive_window,
            tso: f.tso.map(Tso::from),
            access: f.access,
        })
    }
}

impl From<FlowConfig> for FlowForm {
    fn from(f: FlowConfig) -> Self {
        let (app, app_bytes, app_rate_bps) = match f.app {
            App::Bulk => (AppKind::Bulk, None, None),
            App::Fixed { bytes } => (AppKind::Fixed, Some(bytes), None),
            App::Rate { bps } => (AppKind::Rate, None, Some(bps)),
        };
        FlowForm {
            cc: f.cc,
            params: f.params,
            start_ns: f.start_ns,
            stop_ns: f.stop_ns,
            rtt_ns: f.rtt_ns,
            mss: f.mss,
            header_bytes: f.header_bytes,
            init_cwnd: f.init_cwnd,
            rwnd_bytes: f.rwnd_bytes,
            pacing: f.pacing,
            recovery: f.recovery,
            app,
            app_bytes,
            app_rate_bps,
            reverse: f.reverse,
            ecn: f.ecn,
            accecn: f.accecn,
            receiver_accecn: f.receiver_accecn,
            accecn_option: f.accecn_option,
            sack_compression: f.sack_compression,
            receive_window: f.receive_window,
            tso: f.tso.map(TsoForm::from),
            access: f.access,
        }
    }
}

// ------------------------------------------------------------------ reading

/// The JSON Schema of the configuration's written form (what [`read_config`] takes).
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(crate::Config)).expect("a schema is JSON")
}

/// Reads a configuration from any serde source; an error names the field
/// path of the first thing wrong (`flows[2].recovery: unknown variant …`).
pub fn read_config<'de, D: Deserializer<'de>>(d: D) -> Result<crate::Config, String> {
    read(d)
}

/// Any part of the engine configuration (a [`LinkConfig`], a [`FlowConfig`], ...) from its form, with
/// the same one-line errors as [`read_config`].
pub fn read<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<T, String> {
    serde_path_to_error::deserialize(d).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("{path}: {}", e.inner())
        }
    })
}
