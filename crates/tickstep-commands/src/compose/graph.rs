//! A state machine's graph: its states and transitions as data, drawn as Graphviz DOT or as a
//! Mermaid state diagram (docs/commands.md §14).
//!
//! Both drawings are deterministic: states in the order they were added, then each state's
//! transitions in the order the machine checks them (its own and those from several or any states
//! by declaration, then `on_completion_if` in order, then the completion transition), so a graph
//! can be kept as golden text and diffed.

use std::fmt::Write as _;

/// A [`StateMachine`](crate::compose::StateMachine)'s graph, from
/// [`StateMachine::graph`](crate::compose::StateMachine::graph).
///
/// ```
/// use tickstep_commands::{compose::StateMachine, Command};
///
/// let park = |name: &str| Command::no_requirements().executing(|co| async move { co.park().await; }).named(name);
/// let mut machine = StateMachine::new("door");
/// let closed = machine.state(&park("closed"));
/// let open = machine.state(&park("open"));
/// machine.when(closed, open, || false).labeled("push");
/// machine.when(open, closed, || false).labeled("release");
/// assert_eq!(
///     machine.graph().to_mermaid(),
///     "stateDiagram-v2\n    s0: closed\n    s1: open\n    [*] --> s0\n    s0 --> s1: push\n    s0 --> [*]: completed\n    s1 --> s0: release\n    s1 --> [*]: completed\n"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StateGraph {
    /// The machine's name.
    pub name: String,
    /// Each state's name (its command's), indexed by state number.
    pub states: Vec<String>,
    /// The initial state's number.
    pub initial: usize,
    /// Every transition, in the order the machine checks them (see the module docs).
    pub edges: Vec<GraphEdge>,
}

/// One transition of a [`StateGraph`].
///
/// ```
/// use tickstep_commands::compose::{EdgeKind, GraphEdge, GraphTarget};
/// let edge = GraphEdge { from: 0, to: GraphTarget::Exit, kind: EdgeKind::Completed, label: None };
/// assert_eq!(edge.text(), "completed");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphEdge {
    /// The state it leaves.
    pub from: usize,
    /// Where it goes.
    pub to: GraphTarget,
    /// What fires it.
    pub kind: EdgeKind,
    /// Its name, if given with [`StateMachine::labeled`](crate::compose::StateMachine::labeled).
    pub label: Option<String>,
}

/// Where a transition goes.
///
/// ```
/// use tickstep_commands::compose::GraphTarget;
/// assert_ne!(GraphTarget::State(0), GraphTarget::Exit);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphTarget {
    /// The state numbered so.
    State(usize),
    /// The machine ends.
    Exit,
    /// A state chosen when the transition fires (`when_pick`, `on_completion_pick`): unknown
    /// until then.
    Picked,
}

/// What fires a transition.
///
/// ```
/// use tickstep_commands::compose::EdgeKind;
/// assert_ne!(EdgeKind::When, EdgeKind::Completed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// A condition's rising edge while in the state (`when`, `when_pick`, `exit_when`,
    /// `switch_from`, `switch_from_any`).
    When,
    /// The state's command ended on its own and a condition holds (`on_completion_if`).
    CompletedIf,
    /// The state's command ended on its own (`on_completion`, `on_completion_pick`,
    /// `exit_on_completion`, or no declaration: the machine ends).
    Completed,
}

impl GraphEdge {
    /// The text drawn on the edge: the label for a condition (none without one); `completed`
    /// or `completed if`, followed by the label, for a completion (docs/commands.md §14.2).
    ///
    /// ```
    /// use tickstep_commands::compose::{EdgeKind, GraphEdge, GraphTarget};
    /// let edge = GraphEdge { from: 0, to: GraphTarget::State(1), kind: EdgeKind::CompletedIf, label: Some("aimed".into()) };
    /// assert_eq!(edge.text(), "completed if aimed");
    /// ```
    pub fn text(&self) -> String {
        let label = self.label.as_deref();
        match (self.kind, label) {
            (EdgeKind::When, label) => label.unwrap_or("").to_owned(),
            (EdgeKind::CompletedIf, Some(label)) => format!("completed if {label}"),
            (EdgeKind::CompletedIf, None) => "completed if".to_owned(),
            (EdgeKind::Completed, Some(label)) => format!("completed: {label}"),
            (EdgeKind::Completed, None) => "completed".to_owned(),
        }
    }
}

impl StateGraph {
    /// The graph in Graphviz DOT (`dot -Tsvg`): a point for the start, one node per state
    /// (`s0`, `s1`, … labeled with the state's name), a double circle `exit` for the end, and a
    /// diamond per picked target (docs/commands.md §14.3).
    ///
    /// ```
    /// use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("one");
    /// m.state(&Command::no_requirements().executing(|_co| async {}).named("only"));
    /// assert_eq!(
    ///     m.graph().to_dot(),
    ///     "digraph \"one\" {\n    rankdir=LR;\n    start [shape=point];\n    exit [shape=doublecircle, label=\"\"];\n    s0 [shape=box, style=rounded, label=\"only\"];\n    start -> s0;\n    s0 -> exit [label=\"completed\"];\n}\n"
    /// );
    /// ```
    pub fn to_dot(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "digraph \"{}\" {{", dot_escape(&self.name));
        out.push_str("    rankdir=LR;\n    start [shape=point];\n");
        if self.edges.iter().any(|e| e.to == GraphTarget::Exit) {
            out.push_str("    exit [shape=doublecircle, label=\"\"];\n");
        }
        for (i, name) in self.states.iter().enumerate() {
            let _ = writeln!(
                out,
                "    s{i} [shape=box, style=rounded, label=\"{}\"];",
                dot_escape(name)
            );
        }
        let _ = writeln!(out, "    start -> s{};", self.initial);
        let mut picks = 0;
        for edge in &self.edges {
            let to = match edge.to {
                GraphTarget::State(i) => format!("s{i}"),
                GraphTarget::Exit => "exit".to_owned(),
                GraphTarget::Picked => {
                    let _ = writeln!(out, "    pick{picks} [shape=diamond, label=\"?\"];");
                    picks += 1;
                    format!("pick{}", picks - 1)
                }
            };
            let text = edge.text();
            if text.is_empty() {
                let _ = writeln!(out, "    s{} -> {to};", edge.from);
            } else {
                let _ = writeln!(
                    out,
                    "    s{} -> {to} [label=\"{}\"];",
                    edge.from,
                    dot_escape(&text)
                );
            }
        }
        out.push_str("}\n");
        out
    }

    /// The graph as a Mermaid state diagram (`stateDiagram-v2`), the text `AdvantageScope`'s
    /// proposed diagram view and Markdown renderers draw: `[*]` for the start and the end, one
    /// state per machine state (`s0: name`), and a `<<choice>>` state per picked target
    /// (docs/commands.md §14.3).
    ///
    /// ```
    /// use tickstep_commands::{compose::StateMachine, Command};
    /// let mut m = StateMachine::new("one");
    /// m.state(&Command::no_requirements().executing(|_co| async {}).named("only; really"));
    /// assert_eq!(
    ///     m.graph().to_mermaid(),
    ///     "stateDiagram-v2\n    s0: only#59; really\n    [*] --> s0\n    s0 --> [*]: completed\n"
    /// );
    /// ```
    pub fn to_mermaid(&self) -> String {
        let mut out = String::from("stateDiagram-v2\n");
        for (i, name) in self.states.iter().enumerate() {
            let _ = writeln!(out, "    s{i}: {}", mermaid_escape(name));
        }
        let _ = writeln!(out, "    [*] --> s{}", self.initial);
        let mut picks = 0;
        for edge in &self.edges {
            let to = match edge.to {
                GraphTarget::State(i) => format!("s{i}"),
                GraphTarget::Exit => "[*]".to_owned(),
                GraphTarget::Picked => {
                    let _ = writeln!(out, "    state pick{picks} <<choice>>");
                    picks += 1;
                    format!("pick{}", picks - 1)
                }
            };
            let text = edge.text();
            if text.is_empty() {
                let _ = writeln!(out, "    s{} --> {to}", edge.from);
            } else {
                let _ = writeln!(
                    out,
                    "    s{} --> {to}: {}",
                    edge.from,
                    mermaid_escape(&text)
                );
            }
        }
        out
    }
}

/// A DOT string's contents: backslashes and quotes escaped, line breaks as `\n`.
fn dot_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// Mermaid text: the characters that end or break a statement (`;`, `#`, line breaks) as
/// Mermaid entity codes or spaces.
fn mermaid_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            ';' => out.push_str("#59;"),
            '#' => out.push_str("#35;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
