//! Groups: sequence, parallel, race, deadline; and the `wait` command.

use std::rc::Rc;
use std::time::Duration;

use crate::error::CompositionError;
use crate::scheduler::Mechanism;
use crate::scheduler::command::{BodyFn, BodyFuture, Command, build};
use crate::scheduler::inner::conflicting_pairs;

/// The union of the children's requirements, in first-seen order.
fn union(children: &[Command]) -> Vec<Mechanism> {
    let mut all: Vec<Mechanism> = Vec::new();
    for child in children {
        for m in child.requirements() {
            if !all.contains(m) {
                all.push(m.clone());
            }
        }
    }
    all
}

fn max_priority(children: &[Command]) -> i32 {
    children.iter().map(Command::priority).max().unwrap_or(0)
}

fn names(children: &[Command], separator: &str) -> String {
    children
        .iter()
        .map(Command::name)
        .collect::<Vec<_>>()
        .join(separator)
}

/// Children that run at the same time must be distinct and share no mechanism.
fn check_concurrent(kind: &'static str, children: &[Command]) -> Result<(), CompositionError> {
    if children.is_empty() {
        return Err(CompositionError::Empty { kind });
    }
    for (i, a) in children.iter().enumerate() {
        if children[i + 1..].iter().any(|b| a.same_as(b)) {
            return Err(CompositionError::Duplicate {
                kind,
                command: a.name().to_owned(),
            });
        }
    }
    let refs: Vec<&Command> = children.iter().collect();
    let pairs = conflicting_pairs(&refs);
    if pairs.is_empty() {
        Ok(())
    } else {
        Err(CompositionError::ConflictingChildren { kind, pairs })
    }
}

pub(crate) fn group(name: String, children: &[Command], body: BodyFn) -> Command {
    build(name, max_priority(children), union(children), body)
}

/// Runs the commands one after another; each starts in the cycle the previous one ends. Named
/// `A -> B -> C`; an empty sequence is named `""` and completes in its first cycle (as in the
/// reference, so a sequence built from a list that happens to be empty needs no special case).
///
/// # Errors
///
/// None today; the `Result` keeps the signature of the other groups.
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
/// use tickstep_commands::{compose, Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let log = Rc::new(RefCell::new(Vec::new()));
/// let step = |name: &'static str| {
///     let log = log.clone();
///     Command::no_requirements()
///         .executing(move |co| { let log = log.clone(); async move { log.borrow_mut().push(name); co.yield_now().await; } })
///         .named(name)
/// };
/// let both = compose::sequence([&step("a"), &step("b")]).unwrap();
/// assert_eq!(both.name(), "a -> b");
/// scheduler.schedule(&both);
/// for _ in 0..3 { scheduler.run().unwrap(); }
/// assert_eq!(*log.borrow(), ["a", "b"]);
/// assert!(!scheduler.is_running(&both));
/// ```
pub fn sequence<'a>(
    commands: impl IntoIterator<Item = &'a Command>,
) -> Result<Command, CompositionError> {
    let children: Rc<[Command]> = commands.into_iter().cloned().collect();
    Ok(sequence_of(&children))
}

/// A sequence of any number of commands.
pub(crate) fn sequence_of(children: &Rc<[Command]>) -> Command {
    let name = names(children, " -> ");
    let list = children.clone();
    let body: BodyFn = Rc::new(move |co| -> BodyFuture {
        let list = list.clone();
        BodyFuture::fallible(async move {
            for child in list.iter() {
                co.await_cmd(child).await?;
            }
            Ok(())
        })
    });
    group(name, children, body)
}

/// Runs the commands side by side until all have ended. Named `(A & B)`.
///
/// # Errors
///
/// [`CompositionError::ConflictingChildren`] listing every pair that shares a mechanism;
/// [`CompositionError::Duplicate`]; [`CompositionError::Empty`].
///
/// ```
/// use tickstep_commands::{compose, Command};
/// let a = Command::no_requirements().executing(|_co| async {}).named("A");
/// let b = Command::no_requirements().executing(|_co| async {}).named("B");
/// assert_eq!(compose::parallel([&a, &b]).unwrap().name(), "(A & B)");
/// ```
pub fn parallel<'a>(
    commands: impl IntoIterator<Item = &'a Command>,
) -> Result<Command, CompositionError> {
    let children: Rc<[Command]> = commands.into_iter().cloned().collect();
    check_concurrent("parallel", &children)?;
    let name = format!("({})", names(&children, " & "));
    let list = children.clone();
    let body: BodyFn = Rc::new(move |co| -> BodyFuture {
        let list = list.clone();
        BodyFuture::fallible(async move { co.await_all(list.iter()).await.map_err(Into::into) })
    });
    Ok(group(name, &children, body))
}

/// Runs the commands side by side until any one ends; the others are canceled. Named `(A | B)`.
///
/// # Errors
///
/// As [`parallel`].
///
/// ```
/// use tickstep_commands::{compose, Command};
/// let a = Command::no_requirements().executing(|_co| async {}).named("A");
/// let b = Command::no_requirements().executing(|_co| async {}).named("B");
/// assert_eq!(compose::race([&a, &b]).unwrap().name(), "(A | B)");
/// ```
pub fn race<'a>(
    commands: impl IntoIterator<Item = &'a Command>,
) -> Result<Command, CompositionError> {
    let children: Rc<[Command]> = commands.into_iter().cloned().collect();
    check_concurrent("race", &children)?;
    Ok(race_of(&children))
}

/// A race of distinct, non-conflicting commands.
pub(crate) fn race_of(children: &Rc<[Command]>) -> Command {
    let name = format!("({})", names(children, " | "));
    let list = children.clone();
    let body: BodyFn = Rc::new(move |co| -> BodyFuture {
        let list = list.clone();
        BodyFuture::fallible(async move { co.await_any(list.iter()).await.map_err(Into::into) })
    });
    group(name, children, body)
}

/// Runs all commands side by side until every `required` one has ended; the `optional` ones
/// still running are then canceled. Named `[(A & B) * (C | D)]`.
///
/// # Errors
///
/// As [`parallel`] over all the commands; [`CompositionError::Empty`] without a required one.
///
/// ```
/// use tickstep_commands::{compose, Command, CommandScheduler};
/// use tickstep_commands::kernel::clock::ManualClock;
///
/// let scheduler = CommandScheduler::new(ManualClock::new());
/// let drive = Command::no_requirements().executing(|co| async move { co.yield_now().await; }).named("A");
/// let lights = Command::no_requirements().executing(|co| async move { co.park().await; }).named("B");
/// let spin = Command::no_requirements().executing(|co| async move { co.park().await; }).named("C");
/// let auto = compose::deadline([&drive], [&lights, &spin]).unwrap();
/// assert_eq!(auto.name(), "[(A) * (B | C)]");
/// scheduler.schedule(&auto);
/// scheduler.run().unwrap();
/// scheduler.run().unwrap();
/// assert!(!scheduler.is_running(&auto) && !scheduler.is_running(&lights));
/// ```
pub fn deadline<'a, 'b>(
    required: impl IntoIterator<Item = &'a Command>,
    optional: impl IntoIterator<Item = &'b Command>,
) -> Result<Command, CompositionError> {
    let required: Rc<[Command]> = required.into_iter().cloned().collect();
    let optional: Vec<Command> = optional.into_iter().cloned().collect();
    if required.is_empty() {
        return Err(CompositionError::Empty {
            kind: "deadline (required commands)",
        });
    }
    let all: Rc<[Command]> = required.iter().chain(optional.iter()).cloned().collect();
    check_concurrent("deadline", &all)?;
    let name = format!(
        "[({}) * ({})]",
        names(&required, " & "),
        names(&optional, " | ")
    );
    let (req, every) = (required.clone(), all.clone());
    let body: BodyFn = Rc::new(move |co| -> BodyFuture {
        let (req, every) = (req.clone(), every.clone());
        BodyFuture::fallible(async move {
            co.start_or_join(every.iter())?;
            co.await_all(req.iter()).await?;
            Ok(())
        })
    });
    Ok(group(name, &all, body))
}

/// A command that requires nothing and ends once `duration` has passed (one cycle at least,
/// unless zero). Named `wait 250ms`.
///
/// ```
/// use std::time::Duration;
/// use tickstep_commands::compose;
/// assert_eq!(compose::wait(Duration::from_millis(250)).name(), "wait 250ms");
/// ```
pub fn wait(duration: Duration) -> Command {
    Command::no_requirements()
        .executing(move |co| async move { co.wait(duration).await })
        .named(format!("wait {duration:?}"))
}
