//! The terminal picture of the live view (docs/serve.md §14.1): a step-time chart against the
//! budget line with overload markers, then the counts — frames over budget, overload events,
//! tasks waiting per priority, running commands, live schedules (and how many are paused) and
//! players online.
//!
//! A pure function of the [`History`], drawn the same on a real terminal and on ratatui's
//! `TestBackend`. Text the server sent (priority names, commands) is shown with its control
//! characters as visible escapes: a server's strings never drive this terminal.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::symbols::Marker;
use ratatui::text::Line;
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, List, Paragraph, Row, Table};

use tickstep::dashboard::{Listed, LiveCommand, LiveHotTask, LiveSnapshot};

use super::snapshot::{History, worst_us};
use super::visible;
use crate::units::ms;

/// Draws the whole view; `addr` and `note` go in the title line.
pub(crate) fn draw(frame: &mut Frame<'_>, history: &History, addr: &str, note: &str) {
    let s = &history.latest;
    let [title, chart, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(12),
    ])
    .areas(frame.area());
    frame.render_widget(
        Line::from(format!(
            " tickstep top · {addr} · budget {} · {} snapshots{note} · q quits",
            ms_of(s.period_us),
            history.snapshots
        ))
        .bold(),
        title,
    );
    draw_chart(frame, chart, history);
    let [counts, pending, lists] = Layout::horizontal([
        Constraint::Percentage(34),
        Constraint::Percentage(22),
        Constraint::Percentage(44),
    ])
    .areas(bottom);
    let [commands, hot] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(lists);
    draw_counts(frame, counts, s);
    draw_pending(frame, pending, s);
    draw_commands(frame, commands, s);
    draw_hot(frame, hot, s);
}

fn ms_of(us: u64) -> String {
    ms(std::time::Duration::from_micros(us))
}

fn draw_chart(frame: &mut Frame<'_>, area: Rect, history: &History) {
    let budget = history.latest.period_us as f64 / 1000.0;
    let steps: Vec<(f64, f64)> = history
        .steps_us
        .iter()
        .enumerate()
        .map(|(i, &us)| (i as f64, us as f64 / 1000.0))
        .collect();
    let over: Vec<(f64, f64)> = steps.iter().copied().filter(|p| p.1 > budget).collect();
    let worst = steps.iter().map(|p| p.1).fold(0.0, f64::max);
    let top = (budget * 1.25).max(worst * 1.05).max(0.001);
    let width = (History::KEPT as f64).max(steps.len() as f64);
    let budget_line = [(0.0, budget), (width, budget)];
    let marks: Vec<(f64, f64)> = history
        .overloads_at
        .iter()
        .map(|&at| (at as f64, top * 0.95))
        .collect();
    // Drawn in this order, so an overload's mark stays on top of the frames around it.
    let datasets = vec![
        series(&budget_line, Marker::Braille, Color::Yellow).graph_type(GraphType::Line),
        series(&steps, Marker::Braille, Color::Green),
        series(&over, Marker::Dot, Color::Red),
        series(&marks, Marker::Block, Color::Magenta),
    ];
    let chart = Chart::new(datasets)
        .block(
            Block::bordered()
                .title(format!(
                    " step time vs budget · last {} frames · worst {} ",
                    steps.len(),
                    ms_of((worst * 1000.0) as u64)
                ))
                .title_bottom(Line::from(vec![
                    " budget ".yellow(),
                    "· step ".green(),
                    "· over budget ".red(),
                    "· overload event ".magenta(),
                ])),
        )
        .legend_position(None)
        .x_axis(Axis::default().bounds([0.0, width]))
        .y_axis(
            Axis::default()
                .bounds([0.0, top])
                .labels(["0".to_owned(), ms_of((top * 1000.0) as u64)]),
        );
    frame.render_widget(chart, area);
}

/// Points of one colour on the chart (its key is the chart's bottom title).
fn series(points: &[(f64, f64)], marker: Marker, color: Color) -> Dataset<'_> {
    Dataset::default()
        .marker(marker)
        .graph_type(GraphType::Scatter)
        .style(Style::new().fg(color))
        .data(points)
}

fn draw_counts(frame: &mut Frame<'_>, area: Rect, s: &LiveSnapshot) {
    let text = vec![
        Line::from(format!("frames last second {:>6}", s.frames.len())),
        Line::from(format!("over budget        {:>6}", s.over_budget)),
        Line::from(format!("worst step         {:>9}", ms_of(worst_us(s)))),
        Line::from(format!("overload events    {:>6}", s.overloads)),
        Line::from(format!("deferred last step {:>6}", s.deferred_last_step)),
        Line::from(format!("live schedules     {:>6}", s.schedules_live)),
        // Of the live ones; `-` from a server that does not count them (docs/serve.md §14.3).
        Line::from(format!(
            "  of them paused   {:>6}",
            s.schedules_paused
                .map_or_else(|| "-".to_owned(), |n| n.to_string())
        )),
        Line::from(format!("firings started    {:>6}", s.firings)),
        Line::from(format!(
            "players online     {:>6}",
            s.online.map_or_else(|| "-".to_owned(), |n| n.to_string())
        )),
    ];
    let style = if s.over_budget > 0 {
        Style::new().fg(Color::Red)
    } else {
        Style::new()
    };
    frame.render_widget(
        Paragraph::new(text).block(Block::bordered().title(" frames ").border_style(style)),
        area,
    );
}

fn draw_pending(frame: &mut Frame<'_>, area: Rect, s: &LiveSnapshot) {
    let rows = s
        .pending
        .iter()
        .map(|(name, count)| Row::new(vec![visible(name), count.to_string()]));
    frame.render_widget(
        Table::new(rows, [Constraint::Min(10), Constraint::Length(8)])
            .header(Row::new(["priority", "waiting"]).bold())
            .block(Block::bordered().title(" waiting ")),
        area,
    );
}

fn draw_commands(frame: &mut Frame<'_>, area: Rect, s: &LiveSnapshot) {
    let items: Vec<String> = s
        .commands
        .iter()
        .map(|command| match command {
            Listed::Known(command) => visible(&command_line(command)),
            Listed::Other(other) => described(other),
        })
        .collect();
    frame.render_widget(
        List::new(items)
            .block(Block::bordered().title(format!(" running commands: {} ", s.commands_running))),
        area,
    );
}

/// The hot tasks: where the frames' task time went (origin, total, calls, longest).
fn draw_hot(frame: &mut Frame<'_>, area: Rect, s: &LiveSnapshot) {
    let rows = s.hot_tasks.iter().map(|task| {
        let cells: Vec<String> = match task {
            Listed::Known(LiveHotTask(origin, total, calls, max)) => vec![
                origin.clone(),
                total.to_string(),
                calls.to_string(),
                max.to_string(),
            ],
            Listed::Other(serde_json::Value::Array(cells)) => cells.iter().map(plain).collect(),
            Listed::Other(other) => vec![plain(other)],
        };
        Row::new(cells.into_iter().map(|cell| visible(&cell)))
    });
    frame.render_widget(
        Table::new(
            rows,
            [
                Constraint::Min(12),
                Constraint::Length(9),
                Constraint::Length(6),
                Constraint::Length(7),
            ],
        )
        .header(Row::new(["hot task", "total µs", "calls", "max µs"]).bold())
        .block(Block::bordered().title(" hot tasks ")),
        area,
    );
}

/// A JSON value as text: a string without its quotes, anything else as JSON.
fn plain(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A running command as one line: `#id name · priority P · mechanisms`.
fn command_line(c: &LiveCommand) -> String {
    let mut line = format!("#{} {} · priority {}", c.id, c.name, c.priority);
    if !c.mechanisms.is_empty() {
        line.push_str(" · ");
        line.push_str(&c.mechanisms.join(", "));
    }
    line
}

/// A listed entry of another shape as one line: an object with a name as a command is shown
/// (its fields where present), a string as itself, another object's values joined by ` · `.
fn described(value: &serde_json::Value) -> String {
    let text = match value {
        serde_json::Value::Object(fields) if fields.contains_key("name") => {
            let mechanisms = match fields.get("mechanisms") {
                Some(serde_json::Value::Array(all)) => {
                    all.iter().map(plain).collect::<Vec<_>>().join(", ")
                }
                Some(other) => plain(other),
                None => String::new(),
            };
            let mut parts = vec![match fields.get("id") {
                Some(id) => format!("#{} {}", plain(id), plain(&fields["name"])),
                None => plain(&fields["name"]),
            }];
            if let Some(priority) = fields.get("priority") {
                parts.push(format!("priority {}", plain(priority)));
            }
            if !mechanisms.is_empty() {
                parts.push(mechanisms);
            }
            parts.join(" · ")
        }
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Object(fields) => {
            fields.values().map(plain).collect::<Vec<_>>().join(" · ")
        }
        other => other.to_string(),
    };
    visible(&text)
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::super::snapshot::parse;
    use super::*;

    /// A snapshot as serve sent it (recorded from `/dashboard/events`), with a frame over budget.
    const RECORDED: &str = r#"{"period_us":16666,"frames":[[41,38],[39,37],[20500,19800],[45,40]],"over_budget":1,"overloads":0,"deferred_last_step":0,"pending":[["kernel",0],["high",0],["normal",2],["low",0],["background",7]],"commands_running":1,"schedules_live":3,"schedules_paused":1,"firings":12,"online":2}"#;

    fn screen(history: &History) -> String {
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        terminal
            .draw(|frame| draw(frame, history, "127.0.0.1:8080", ""))
            .unwrap();
        let buffer = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buffer.area.height {
            for x in 0..buffer.area.width {
                out.push_str(buffer[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    #[test]
    fn a_recorded_snapshot_shows_the_budget_the_counts_and_the_waiting() {
        // docs/serve.md §14.1
        let mut history = History::default();
        history.push(parse(RECORDED).unwrap());
        let shown = screen(&history);
        assert!(
            shown.contains("tickstep top · 127.0.0.1:8080 · budget 16.67ms · 1 snapshots"),
            "{shown}"
        );
        assert!(shown.contains("frames last second      4"), "{shown}");
        assert!(shown.contains("over budget             1"), "{shown}");
        assert!(shown.contains("worst step           20.50ms"), "{shown}");
        assert!(shown.contains("live schedules          3"), "{shown}");
        assert!(shown.contains("  of them paused        1"), "{shown}");
        assert!(shown.contains("players online          2"), "{shown}");
        assert!(shown.contains("background  7"), "{shown}");
        assert!(shown.contains("running commands: 1"), "{shown}");
        assert!(shown.contains("last 4 frames"), "{shown}");
    }

    /// A snapshot of the dashboard as the `tickstep` crate's host sends it: the running
    /// commands listed, the hot tasks, no players.
    const RECORDED_HOST: &str = r#"{"period_us":20000,"frames":[[900,850]],"over_budget":0,"overloads":3,"deferred_last_step":1,"pending":[["kernel",0],["high",1],["normal",0],["low",0],["background",0]],"commands_running":1,"commands":[{"id":7,"name":"intake","priority":2,"mechanisms":["arm","roller"]}],"hot_tasks":[["drive.rs:40",812,60,30],["vision",95,3,40]],"schedules_live":0,"firings":0}"#;

    #[test]
    fn a_hosts_snapshot_lists_its_commands_and_hot_tasks() {
        // docs/serve.md §14.1, §14.3
        let mut history = History::default();
        history.push(parse(RECORDED_HOST).unwrap());
        let shown = screen(&history);
        assert!(shown.contains("budget 20.00ms"), "{shown}");
        assert!(
            shown.contains("#7 intake · priority 2 · arm, roller"),
            "{shown}"
        );
        assert!(shown.contains("drive.rs:40"), "{shown}");
        assert!(shown.contains("812"), "{shown}");
        assert!(shown.contains("players online          -"), "{shown}");
        assert!(
            shown.contains("  of them paused        -"),
            "not sent: not claimed 0"
        );
        assert!(shown.contains("overload events         3"), "{shown}");
    }

    #[test]
    fn overloads_are_marked_and_over_budget_frames_drawn_red() {
        // docs/serve.md §14.1
        // Two seconds of frames: one over budget early in the first, an overload event
        // arriving with the second.
        let mut first = parse(RECORDED).unwrap();
        first.frames = vec![(40, 40); 60];
        first.frames[10] = (20_500, 19_800);
        let mut second = first.clone();
        second.frames[10] = (40, 40);
        second.overloads = 1;
        let mut history = History::default();
        history.push(first);
        history.push(second);
        assert_eq!(history.overloads_at, [60]);
        let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
        terminal
            .draw(|frame| draw(frame, &history, "a", ""))
            .unwrap();
        let buffer = terminal.backend().buffer();
        let cells: Vec<_> = buffer.content().iter().collect();
        assert!(
            cells
                .iter()
                .any(|c| c.fg == Color::Magenta && c.symbol() == "█")
        );
        assert!(
            cells
                .iter()
                .any(|c| c.fg == Color::Red && c.symbol() == "•")
        );
        assert!(
            cells.iter().any(|c| c.fg == Color::Yellow),
            "the budget line"
        );
    }

    #[test]
    fn the_servers_text_cannot_drive_the_terminal() {
        // docs/serve.md §14.1, §11.1
        let hostile = r#"{"pending":[["\u001b[2Jkernel",1]],"commands":["bell \u001b]0;pwned\u0007",{"name":"ring","priority":"high"}],"commands_running":2,"hot_tasks":[["\u001b[31mhot",1,1,1]]}"#;
        let mut history = History::default();
        history.push(parse(hostile).unwrap());
        let shown = screen(&history);
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown}"
        );
        assert!(shown.contains("\\x1b[2Jkern"), "{shown}");
        assert!(shown.contains("\\x1b[31mhot"), "{shown}");
        assert!(shown.contains("bell \\x1b]0;pwned\\x07"), "{shown}");
        assert!(shown.contains("ring · priority high"), "{shown}");
    }

    #[test]
    fn an_empty_history_draws_without_dividing_by_zero() {
        let shown = screen(&History::default());
        assert!(
            shown.contains("budget 0 µs") || shown.contains("budget 0"),
            "{shown}"
        );
    }
}
