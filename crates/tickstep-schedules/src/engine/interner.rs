//! Verb names, interned: an entry holds a `u32`, a firing an `Rc<str>` clone.

use std::collections::HashMap;
use std::rc::Rc;

/// Verb names, interned so an entry holds a `u32` instead of a `String`.
#[derive(Default)]
pub(crate) struct Interner {
    names: Vec<Rc<str>>,
    ids: HashMap<Rc<str>, u32>,
}

impl Interner {
    pub(super) fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("more than 4 billion distinct verbs");
        let name: Rc<str> = Rc::from(name);
        self.names.push(Rc::clone(&name));
        self.ids.insert(name, id);
        id
    }

    pub(super) fn name(&self, id: u32) -> &Rc<str> {
        &self.names[id as usize]
    }
}
