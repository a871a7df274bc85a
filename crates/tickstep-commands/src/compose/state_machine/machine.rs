//! A built state machine and its body: entering states, checking transitions on their rising
//! edge, following completions, and the `on_exit` hooks on cancel (the rules are the parent
//! module's docs).

use std::cell::Cell;
use std::rc::Rc;

use super::{MAX_STATE_ENTRIES_PER_RUN, StateDef, Target};
use crate::error::{BoxError, StateMachineError};
use crate::scheduler::Coroutine;

/// A built machine, shared by its running instances.
pub(super) struct Machine {
    pub(super) name: String,
    pub(super) tag: u64,
    pub(super) states: Vec<StateDef>,
    pub(super) edges: usize,
    pub(super) initial: usize,
}

/// Runs the current state's `on_exit` hooks if the machine's body is dropped while in a state
/// (the machine was canceled).
struct ExitOnDrop<'a> {
    machine: &'a Machine,
    current: Cell<Option<usize>>,
}

impl ExitOnDrop<'_> {
    fn exit(&self, state: usize) {
        self.current.set(None);
        for hook in &self.machine.states[state].on_exit {
            hook();
        }
    }
}

impl Drop for ExitOnDrop<'_> {
    fn drop(&mut self) {
        if let (Some(state), false) = (self.current.get(), std::thread::panicking()) {
            self.exit(state);
        }
    }
}

impl Machine {
    fn resolve(&self, target: &Target) -> Result<Option<usize>, StateMachineError> {
        let picked = match target {
            Target::State(i) => return Ok(Some(*i)),
            Target::Exit => return Ok(None),
            Target::Pick(pick) => pick(),
        };
        match picked {
            None => Ok(None),
            Some(s) if s.machine == self.tag && s.index < self.states.len() => Ok(Some(s.index)),
            Some(s) => Err(StateMachineError::ForeignState {
                machine: self.name.clone(),
                state: s.index,
            }),
        }
    }

    pub(super) async fn run(self: Rc<Self>, co: Coroutine) -> Result<(), BoxError> {
        let mut previous = vec![false; self.edges];
        let guard = ExitOnDrop {
            machine: &self,
            current: Cell::new(None),
        };
        let mut current = Some(self.initial);
        let mut entries = 0u32;
        'states: while let Some(index) = current {
            entries += 1;
            if entries > MAX_STATE_ENTRIES_PER_RUN {
                return Err(StateMachineError::TooManyEntries {
                    machine: self.name.clone(),
                    limit: MAX_STATE_ENTRIES_PER_RUN,
                }
                .into());
            }
            let state = &self.states[index];
            co.fork([&state.command])?;
            guard.current.set(Some(index));
            for hook in &state.on_enter {
                hook();
            }
            let mut yielded = false;
            while co.scheduler().is_running(&state.command) {
                for t in &state.transitions {
                    let value = (t.condition)();
                    let rose = value && !previous[t.edge];
                    previous[t.edge] = value;
                    if rose {
                        guard.exit(index);
                        co.scheduler().cancel(&state.command);
                        current = self.resolve(&t.target)?;
                        continue 'states;
                    }
                }
                co.yield_now().await;
                yielded = true;
                entries = 0;
            }
            guard.exit(index);
            let next = state
                .completions
                .iter()
                .find(|(condition, _, _)| condition())
                .map_or(&state.on_complete, |(_, target, _)| target);
            current = self.resolve(next)?;
            if !yielded && current.is_some() {
                co.yield_now().await;
                entries = 0;
            }
        }
        Ok(())
    }
}
