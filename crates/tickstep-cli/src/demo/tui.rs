//! `demo --tui`: the same world as a live terminal view (ratatui on crossterm), redrawn four
//! times a second. `q`, Esc or Ctrl-C quits; the runtime then stops cleanly as in line mode.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::{Block, Gauge, List, Paragraph, Row, Table};
use ratatui::{DefaultTerminal, Frame};
use tickstep::Runtime;
use tickstep::kernel::clock::Clock;

use super::demo_world::DemoWorldState;
use super::status::{Sampler, Second};
use crate::units::ms;

/// How often the view is redrawn.
const REDRAW: Duration = Duration::from_millis(250);

/// Runs the live view until the duration has passed, or `q`/Esc/Ctrl-C.
pub(crate) fn run(
    rt: &Runtime,
    world: &DemoWorldState,
    duration: Option<Duration>,
    stop: &AtomicBool,
) -> Result<(), String> {
    if !std::io::stdout().is_terminal() {
        return Err(
            "--tui needs a terminal; without --tui the demo prints one status line per second"
                .into(),
        );
    }
    let mut terminal =
        ratatui::try_init().map_err(|e| format!("cannot start the live view: {e}"))?;
    let result = drive(&mut terminal, rt, world, duration, stop);
    ratatui::restore();
    result
}

fn drive(
    terminal: &mut DefaultTerminal,
    rt: &Runtime,
    world: &DemoWorldState,
    duration: Option<Duration>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let clock = rt.clock().clone();
    let start = clock.now();
    let end = duration.map(|d| start.saturating_add(d));
    let mut sampler = Sampler::new(rt);
    let mut last = Second::default();
    let mut next_second = start.saturating_add(Duration::from_secs(1));
    loop {
        let due = clock.now().saturating_add(REDRAW);
        let until = end.map_or(due, |end| due.min(end));
        rt.run_until(|| {
            sampler.frame(rt);
            stop.load(Ordering::SeqCst) || clock.now() >= until
        })
        .map_err(|e| e.to_string())?;
        if clock.now() >= next_second {
            last = sampler.second(rt);
            next_second = next_second.saturating_add(Duration::from_secs(1));
            world.keep_lockup_armed(rt.schedules())?;
            // The engine dropped operator-stopped schedules itself; the live view only drains
            // the list (the line mode prints it).
            let _ = rt.schedules().take_operator_stops();
        }
        let elapsed = clock.now() - start;
        terminal
            .draw(|frame| draw(frame, rt, world, &last, elapsed))
            .map_err(|e| e.to_string())?;
        while event::poll(Duration::ZERO).map_err(|e| e.to_string())? {
            if let Event::Key(key) = event::read().map_err(|e| e.to_string())?
                && key.kind == KeyEventKind::Press
                && (matches!(key.code, KeyCode::Char('q') | KeyCode::Esc)
                    || (key.code == KeyCode::Char('c')
                        && key.modifiers.contains(KeyModifiers::CONTROL)))
            {
                stop.store(true, Ordering::SeqCst);
            }
        }
        if stop.load(Ordering::SeqCst) || end.is_some_and(|end| clock.now() >= end) {
            return Ok(());
        }
    }
}

fn draw(frame: &mut Frame<'_>, rt: &Runtime, world: &DemoWorldState, s: &Second, at: Duration) {
    let [title, gauges, middle, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(3),
        Constraint::Min(7),
        Constraint::Min(6),
    ])
    .areas(frame.area());
    let store = rt
        .store_path()
        .map_or_else(|| "memory".to_owned(), crate::store::shown);
    frame.render_widget(
        Line::from(format!(
            " tickstep demo · store {store} · {:.0}s · q quits",
            at.as_secs_f64()
        ))
        .bold(),
        title,
    );
    draw_gauges(frame, gauges, world, s);
    let [rooms, commands] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(middle);
    draw_rooms(frame, rooms, world);
    let running: Vec<String> = s.commands.clone();
    frame.render_widget(
        List::new(running).block(Block::bordered().title(" running commands ")),
        commands,
    );
    let [schedules, numbers] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(bottom);
    draw_schedules(frame, schedules, rt, world);
    let tally = &world.tally;
    let text = vec![
        Line::from(format!("tasks run        {:>6}/s", s.tasks_run)),
        Line::from(format!("tasks deferred   {:>6}/s", s.deferred)),
        Line::from(format!(
            "firings          {:>6}/s ({} faulted)",
            s.fired, s.faulted
        )),
        Line::from(format!("players admitted {:>6}", tally.admitted.get())),
        Line::from(format!("lockdowns        {:>6}", tally.lockdowns.get())),
        Line::from(format!("bell rings       {:>6}", tally.bell_rings.get())),
        Line::from(format!("guest-book flushes {:>4}", tally.flushes.get())),
    ];
    frame.render_widget(
        Paragraph::new(text).block(Block::bordered().title(" last second ")),
        numbers,
    );
}

fn draw_gauges(frame: &mut Frame<'_>, area: Rect, world: &DemoWorldState, s: &Second) {
    let [budget, vitality] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
    let used = if s.budget.is_zero() {
        0.0
    } else {
        (s.longest_step.as_secs_f64() / s.budget.as_secs_f64()).clamp(0.0, 1.0)
    };
    frame.render_widget(
        Gauge::default()
            .block(Block::bordered().title(" frame budget used (longest step) "))
            .gauge_style(Style::new().fg(Color::Cyan))
            .ratio(used)
            .label(format!("{} of {}", ms(s.longest_step), ms(s.budget))),
        budget,
    );
    let v = world.tally.vitality.get();
    frame.render_widget(
        Gauge::default()
            .block(Block::bordered().title(" garden vitality (regenerate × elapsed) "))
            .gauge_style(Style::new().fg(Color::Green))
            .ratio((v / 100.0).clamp(0.0, 1.0))
            .label(format!("{v:.1}")),
        vitality,
    );
}

fn draw_rooms(frame: &mut Frame<'_>, area: Rect, world: &DemoWorldState) {
    let rows = world.rooms.iter().map(|room| {
        let door = if room.open.get() { "open" } else { "SHUT" };
        Row::new(vec![
            room.name.to_owned(),
            door.to_owned(),
            room.inside.get().to_string(),
            room.waiting.get().to_string(),
        ])
    });
    let alarm = if world.alarm.get() { " · ALARM" } else { "" };
    frame.render_widget(
        Table::new(rows, [Constraint::Length(8); 4])
            .header(Row::new(["room", "door", "inside", "waiting"]).bold())
            .block(Block::bordered().title(format!(" rooms{alarm} "))),
        area,
    );
}

fn draw_schedules(frame: &mut Frame<'_>, area: Rect, rt: &Runtime, world: &DemoWorldState) {
    let engine = rt.schedules();
    let txn = engine.begin(super::demo_world::WIZARD);
    let now = engine.now_unix_seconds();
    let ids = world
        .schedules
        .iter()
        .map(|(name, id, _)| (*name, *id))
        .chain(world.lockup.get().map(|id| ("lockup", id)));
    let mut seen = Vec::new();
    let rows: Vec<Row<'_>> = ids
        .filter(|(_, id)| {
            let fresh = !seen.contains(id);
            seen.push(*id);
            fresh
        })
        .filter_map(|(name, id)| {
            let info = txn.schedule_info(id).ok()?;
            let next = if info.next_run > 0.0 {
                format!("{:.1}s", (info.next_run - now).max(0.0))
            } else {
                "-".into()
            };
            Some(Row::new(vec![
                id.get().to_string(),
                name.to_owned(),
                info.run_count.to_string(),
                info.fault_count.to_string(),
                if info.retired { "retired".into() } else { next },
            ]))
        })
        .collect();
    frame.render_widget(
        Table::new(
            rows,
            [
                Constraint::Length(6),
                Constraint::Length(11),
                Constraint::Length(6),
                Constraint::Length(7),
                Constraint::Length(8),
            ],
        )
        .header(Row::new(["id", "schedule", "runs", "faults", "next"]).bold())
        .block(Block::bordered().title(" durable schedules ")),
        area,
    );
}
