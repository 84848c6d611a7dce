//! The picture of a subsystem: its states and transitions as a petgraph graph, written in DOT,
//! with the transitions of the most probable paths highlighted. Only for the small graphs of
//! subsystems and paths (the model's own matrix stays CSR).

use crate::subsystem::SubChain;
use petgraph::dot::{Config, Dot};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashSet;

/// A node of the picture.
#[derive(Clone, Debug)]
pub struct Node {
    /// The text shown.
    pub name: String,
    /// What kind of state it is.
    pub kind: NodeKind,
}

/// What a node of the picture is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// The start state.
    Start,
    /// A ψ-state (the paths end there).
    Target,
    /// Another state of the subsystem.
    Inner,
    /// The added sink (every transition leaving the subsystem).
    Sink,
}

/// An edge of the picture: its probability and whether a highlighted path takes it.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    /// The transition's probability (for the sink, the sum of the transitions leaving the set).
    pub probability: f64,
    /// Whether one of the highlighted paths takes it.
    pub on_path: bool,
}

/// The subsystem as a graph: one node per state of the sub-chain (the sink last), named by
/// `name(model state)`; an edge per transition, those in `taken` (pairs of model states: the
/// transitions of the listed paths) highlighted.
pub fn graph(
    sub: &SubChain,
    is_target: &dyn Fn(u32) -> bool,
    taken: &HashSet<(u32, u32)>,
    name: &dyn Fn(u32) -> String,
) -> DiGraph<Node, Edge> {
    let mut g = DiGraph::new();
    let mut nodes: Vec<NodeIndex> = Vec::with_capacity(sub.states.len() + 1);
    for (i, &s) in sub.states.iter().enumerate() {
        let kind = if i == 0 {
            NodeKind::Start
        } else if is_target(s) {
            NodeKind::Target
        } else {
            NodeKind::Inner
        };
        nodes.push(g.add_node(Node {
            name: name(s),
            kind,
        }));
    }
    let sink_used = (0..sub.states.len()).any(|i| {
        sub.dtmc
            .successors(i)
            .any(|(t, _)| t as usize == sub.sink())
    });
    if sink_used {
        nodes.push(g.add_node(Node {
            name: "sink (leaves the subsystem)".into(),
            kind: NodeKind::Sink,
        }));
    }
    for i in 0..sub.states.len() {
        for (t, p) in sub.dtmc.successors(i) {
            let t = t as usize;
            if t == sub.sink() && !sink_used {
                continue;
            }
            let on_path = t < sub.states.len() && taken.contains(&(sub.states[i], sub.states[t]));
            g.add_edge(
                nodes[i],
                nodes[t],
                Edge {
                    probability: p,
                    on_path,
                },
            );
        }
    }
    g
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The graph in DOT: the start a double circle, ψ-states filled, the sink a grey box, the
/// edges of the highlighted paths red and bold, every edge labelled with its probability.
pub fn to_dot(g: &DiGraph<Node, Edge>) -> String {
    let edge_attrs = |_: &DiGraph<Node, Edge>, e: petgraph::graph::EdgeReference<'_, Edge>| {
        let w = e.weight();
        let label = quote(&augur_dtmc::format_f64(w.probability));
        if w.on_path {
            format!("label={label}, color=red, penwidth=2")
        } else {
            format!("label={label}")
        }
    };
    let node_attrs = |_: &DiGraph<Node, Edge>, (_, n): (NodeIndex, &Node)| {
        let shape = match n.kind {
            NodeKind::Start => "shape=doublecircle",
            NodeKind::Target => "shape=circle, style=filled, fillcolor=orange",
            NodeKind::Inner => "shape=circle",
            NodeKind::Sink => "shape=box, style=filled, fillcolor=lightgrey",
        };
        format!("label={}, {shape}", quote(&n.name))
    };
    let dot = Dot::with_attr_getters(
        g,
        &[Config::NodeNoLabel, Config::EdgeNoLabel],
        &edge_attrs,
        &node_attrs,
    );
    format!("{dot:?}")
}
