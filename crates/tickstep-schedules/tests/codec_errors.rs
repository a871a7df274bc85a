//! A stored value the codec cannot read fails the open with an error naming the schedule, the
//! column and a bounded excerpt of the value (docs/schedules.md §12.3); a bad options map names a
//! bounded excerpt of the value, not the whole of it (docs/schedules.md §12.3).

mod common;

use common::Host;
use tickstep_schedules::{Options, Value};

on_both_stores! {
    fn a_corrupt_stored_value_names_the_schedule_the_column_and_an_excerpt(store) {
        let h = Host::on(store);
        let id = h.every(10.0, Options::new().state(Value::Int(1)));
        h.engine.flush().unwrap();
        drop(h);
        let huge = format!("{{\"not json{}", "x".repeat(10_000));
        store.execute(&format!("UPDATE schedules SET state = '{huge}' WHERE id = {}", id.get()));
        let text = common::open_refusal(store.path());
        assert!(text.contains(&format!("schedule {}", id.get())), "{text}");
        assert!(text.contains("bad state"), "{text}");
        assert!(text.contains("{\\\"not json") && text.contains("(10010 bytes)"), "{text}");
        assert!(!text.contains("index: 0"), "{text}");
        assert!(text.len() < 600, "bounded: {} bytes", text.len());
    }
}

on_both_stores! {
    /// Both stores read rows with one decoder (`store/decode.rs`): a stored integer too large for
    /// the field it is kept for is refused naming the schedule, the column and the value.
    fn a_stored_integer_too_large_for_its_field_names_the_schedule_and_the_column(store) {
        for (column, value) in [("max_faults", "5000000000"), ("consecutive_faults", "-1"), ("backlog", "70000")] {
            let h = Host::on(store);
            let id = h.every(10.0, Options::new());
            h.engine.flush().unwrap();
            drop(h);
            store.execute(&format!("UPDATE schedules SET {column} = {value} WHERE id = {}", id.get()));
            let text = common::open_refusal(store.path());
            assert!(text.contains(&format!("schedule {}", id.get())), "{text}");
            assert!(text.contains(&format!("bad {column}")) && text.contains(value), "{text}");
            store.execute(&format!("DELETE FROM schedules WHERE id = {}", id.get()));
        }
    }
}

#[test]
fn a_bad_options_map_names_a_bounded_excerpt_of_the_value() {
    let big = Value::List(vec![Value::Str("y".repeat(5_000))]);
    for map in [
        Value::Map(vec![(Value::from("catchup"), big.clone())]),
        Value::Map(vec![(big.clone(), Value::Int(1))]),
        big.clone(),
    ] {
        let err = Options::from_map(&map).unwrap_err();
        let text = err.to_string();
        assert_eq!(err.code(), "E_INVARG");
        assert!(text.contains("yyyy") && text.contains(" bytes)"), "{text}");
        assert!(text.len() < 300, "bounded: {} bytes: {text}", text.len());
    }
    let err = Options::from_map(&Value::Map(vec![(Value::from("catchup"), big)])).unwrap_err();
    assert!(err.to_string().contains("\"catchup\""), "{err}");
}
