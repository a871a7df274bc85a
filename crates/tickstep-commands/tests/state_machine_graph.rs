//! A state machine's graph as Graphviz DOT and Mermaid (docs/commands.md §14), checked as golden
//! text on a machine with every kind of transition: conditions, completions with and without a
//! condition, a switch from several states, a switch from any state, a picked target and an exit.

use tickstep_commands::Command;
use tickstep_commands::compose::{EdgeKind, GraphTarget, StateMachine};

fn park(name: &str) -> Command {
    Command::no_requirements()
        .executing(|co| async move {
            co.park().await;
        })
        .named(name)
}

fn arm_and_elevator() -> StateMachine {
    let never = || false;
    let mut m = StateMachine::new("arm and elevator");
    let home = m.state(&park("home"));
    let to_pickup = m.state(&park("to pickup"));
    let picking = m.state(&park("picking"));
    let to_score = m.state(&park("to score"));
    let scoring = m.state(&park("scoring \"high\""));
    m.when(home, to_pickup, never).labeled("pickup requested");
    m.when(home, to_score, never).labeled("score requested");
    m.on_completion(to_pickup, picking);
    m.on_completion_if(picking, to_score, never)
        .labeled("has piece");
    m.on_completion(picking, home).labeled("missed");
    m.switch_from(&[to_pickup, to_score], home, never)
        .labeled("stow");
    m.on_completion(to_score, scoring);
    m.on_completion_pick(scoring, move || Some(home))
        .labeled("next cycle");
    m.when(scoring, home, never);
    m.exit_when(home, never).labeled("match over");
    m.switch_from_any(home, never).labeled("reset");
    m
}

#[test]
fn the_graph_lists_every_transition_in_the_order_the_machine_checks_them() {
    let graph = arm_and_elevator().graph();
    assert_eq!(graph.name, "arm and elevator");
    assert_eq!(graph.states.len(), 5);
    assert_eq!(graph.initial, 0);
    let home: Vec<_> = graph
        .edges
        .iter()
        .filter(|e| e.from == 0)
        .map(|e| (e.to, e.kind, e.text()))
        .collect();
    assert_eq!(
        home,
        [
            (
                GraphTarget::State(1),
                EdgeKind::When,
                "pickup requested".to_owned()
            ),
            (
                GraphTarget::State(3),
                EdgeKind::When,
                "score requested".to_owned()
            ),
            (GraphTarget::Exit, EdgeKind::When, "match over".to_owned()),
            (GraphTarget::State(0), EdgeKind::When, "reset".to_owned()),
            (
                GraphTarget::Exit,
                EdgeKind::Completed,
                "completed".to_owned()
            ),
        ]
    );
}

#[test]
fn graphviz_dot() {
    let expected = r#"digraph "arm and elevator" {
    rankdir=LR;
    start [shape=point];
    exit [shape=doublecircle, label=""];
    s0 [shape=box, style=rounded, label="home"];
    s1 [shape=box, style=rounded, label="to pickup"];
    s2 [shape=box, style=rounded, label="picking"];
    s3 [shape=box, style=rounded, label="to score"];
    s4 [shape=box, style=rounded, label="scoring \"high\""];
    start -> s0;
    s0 -> s1 [label="pickup requested"];
    s0 -> s3 [label="score requested"];
    s0 -> exit [label="match over"];
    s0 -> s0 [label="reset"];
    s0 -> exit [label="completed"];
    s1 -> s0 [label="stow"];
    s1 -> s0 [label="reset"];
    s1 -> s2 [label="completed"];
    s2 -> s0 [label="reset"];
    s2 -> s3 [label="completed if has piece"];
    s2 -> s0 [label="completed: missed"];
    s3 -> s0 [label="stow"];
    s3 -> s0 [label="reset"];
    s3 -> s4 [label="completed"];
    s4 -> s0;
    s4 -> s0 [label="reset"];
    pick0 [shape=diamond, label="?"];
    s4 -> pick0 [label="completed: next cycle"];
}
"#;
    assert_eq!(arm_and_elevator().graph().to_dot(), expected);
}

#[test]
fn mermaid_state_diagram() {
    let expected = r#"stateDiagram-v2
    s0: home
    s1: to pickup
    s2: picking
    s3: to score
    s4: scoring "high"
    [*] --> s0
    s0 --> s1: pickup requested
    s0 --> s3: score requested
    s0 --> [*]: match over
    s0 --> s0: reset
    s0 --> [*]: completed
    s1 --> s0: stow
    s1 --> s0: reset
    s1 --> s2: completed
    s2 --> s0: reset
    s2 --> s3: completed if has piece
    s2 --> s0: completed: missed
    s3 --> s0: stow
    s3 --> s0: reset
    s3 --> s4: completed
    s4 --> s0
    s4 --> s0: reset
    state pick0 <<choice>>
    s4 --> pick0: completed: next cycle
"#;
    assert_eq!(arm_and_elevator().graph().to_mermaid(), expected);
}

#[test]
fn a_label_names_only_the_transition_declared_last() {
    let mut m = StateMachine::new("m");
    let a = m.state(&park("a"));
    let b = m.state(&park("b"));
    m.labeled("ignored: nothing declared yet");
    m.when(a, b, || false);
    m.when(b, a, || false).labeled("back");
    let texts: Vec<_> = m
        .graph()
        .edges
        .iter()
        .map(tickstep_commands::compose::GraphEdge::text)
        .collect();
    assert_eq!(texts, ["", "completed", "back", "completed"]);
}
