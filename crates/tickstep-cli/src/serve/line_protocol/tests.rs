//! The line protocol's tests: every command parsed, every refusal worded (docs/serve.md §3).

use super::*;

fn secs(value: f64, typed: &str) -> Seconds {
    Seconds {
        value,
        typed: typed.to_owned(),
    }
}

#[test]
fn ping_keeps_its_word_and_is_not_a_name() {
    assert_eq!(parse("ping"), Ok(Request::Ping(String::new())));
    assert_eq!(parse("PING 42"), Ok(Request::Ping("42".into())));
    assert_eq!(
        parse_name("ping"),
        Err(ProtocolError::CommandName("ping".into()))
    );
}

#[test]
fn policy_words_come_before_the_verb_and_the_text_after_it_is_text() {
    let word = |name: &str, value: &str| PolicyWord {
        name: name.into(),
        value: value.into(),
    };
    assert_eq!(
        parse("every 60 Overlap=cancel_other remaining_runs=3 say a=b as beat"),
        Ok(Request::Every {
            seconds: secs(60.0, "60"),
            action: Action {
                verb: WorldVerb::Say,
                arg: "a=b".into()
            },
            key: Some("beat".into()),
            policies: vec![word("overlap", "cancel_other"), word("remaining_runs", "3")],
        })
    );
    assert!(matches!(
        parse("cron @hourly UTC catchup=all ring"),
        Ok(Request::Cron { policies, .. }) if policies == vec![word("catchup", "all")]
    ));
    assert_eq!(
        parse("at 1900000000 =skip ring").unwrap_err().to_string(),
        "at policy word \"=skip\" is not name=value, as catchup_window=300 (type help)"
    );
    assert_eq!(
        parse("every 60 overlap=skip").unwrap_err().to_string(),
        "every needs a verb (tell, say or ring) (type help)"
    );
}

#[test]
fn every_command_of_the_help_parses() {
    assert_eq!(
        parse("remind 2 tea is ready"),
        Ok(Request::Remind {
            seconds: secs(2.0, "2"),
            text: "tea is ready".into()
        })
    );
    assert_eq!(
        parse("EVERY 10 say hello all"),
        Ok(Request::Every {
            seconds: secs(10.0, "10"),
            action: Action {
                verb: WorldVerb::Say,
                arg: "hello all".into()
            },
            key: None,
            policies: Vec::new(),
        })
    );
    assert_eq!(
        parse("every 60 say top of the hour AS hourly"),
        Ok(Request::Every {
            seconds: secs(60.0, "60"),
            action: Action {
                verb: WorldVerb::Say,
                arg: "top of the hour".into()
            },
            key: Some("hourly".into()),
            policies: Vec::new(),
        })
    );
    assert_eq!(
        parse("at 1900000000 ring"),
        Ok(Request::At {
            unix_seconds: secs(1.9e9, "1900000000"),
            action: Action {
                verb: WorldVerb::Ring,
                arg: "0".into()
            },
            key: None,
            policies: Vec::new(),
        })
    );
    assert_eq!(
        parse("at 1900000000 ring 3 as alarm"),
        Ok(Request::At {
            unix_seconds: secs(1.9e9, "1900000000"),
            action: Action {
                verb: WorldVerb::Ring,
                arg: "3".into()
            },
            key: Some("alarm".into()),
            policies: Vec::new(),
        })
    );
    // A number is kept as typed for the reply (docs/serve.md §4.9).
    assert_eq!(
        parse("remind 1e-300 x"),
        Ok(Request::Remind {
            seconds: secs(1e-300, "1e-300"),
            text: "x".into()
        })
    );
    assert_eq!(parse("stop #12"), Ok(Request::Stop(12)));
    assert_eq!(parse("info 3"), Ok(Request::Info(3)));
    assert_eq!(
        parse("pause #4 deploying v2"),
        Ok(Request::Pause {
            id: 4,
            note: "deploying v2".to_owned()
        })
    );
    assert_eq!(
        parse("PAUSE 4"),
        Ok(Request::Pause {
            id: 4,
            note: String::new()
        })
    );
    assert_eq!(parse("resume 4"), Ok(Request::Resume(4)));
    assert_eq!(parse("trigger #4"), Ok(Request::Trigger(4)));
    assert!(matches!(
        parse("pause"),
        Err(ProtocolError::Missing {
            command: "pause",
            ..
        })
    ));
    assert!(matches!(
        parse("trigger soon"),
        Err(ProtocolError::BadNumber { .. })
    ));
    assert_eq!(parse("ring 5"), Ok(Request::Ring(5)));
    assert_eq!(parse("   "), Ok(Request::Nothing));
    assert_eq!(parse("wizard bob"), Ok(Request::Wizard("bob".into())));
    for word in ["schedules", "who", "help", "quit", "shutdown", "stats"] {
        assert!(parse(word).is_ok());
    }
}

#[test]
fn bad_lines_name_the_value_and_the_rule() {
    let err = |line| parse(line).unwrap_err().to_string();
    assert_eq!(err("dance"), "unknown command \"dance\" (type help)");
    let delay = "is not a delay in seconds from 0 to 3153600000 (100 years)";
    assert_eq!(err("remind soon hi"), format!("\"soon\" {delay}"));
    assert_eq!(err("remind -1 hi"), format!("\"-1\" {delay}"));
    assert_eq!(
        err("remind 1e20 hi"),
        format!("\"1e20\" {delay}"),
        "a delay, not a date"
    );
    assert_eq!(
        err("every 1e-300 say hi"),
        "every needs at least 1 s between firings (got 1e-300)",
        "as typed, not 300 digits"
    );
    assert_eq!(
        err("at 1e11 ring"),
        "\"1e11\" is not a Unix time in seconds from 0 to 18446744073 (July 2554)"
    );
    assert_eq!(
        err("remind 5"),
        "remind needs a text after the seconds (type help)"
    );
    assert_eq!(
        err("every 0.01 say hi"),
        "every needs at least 1 s between firings (got 0.01)"
    );
    assert_eq!(
        err("every 5 dance"),
        "unknown verb \"dance\": schedules may run tell, say or ring"
    );
    assert_eq!(err("ring 10"), "\"10\" is not a bell priority from 0 to 9");
    assert_eq!(
        err("every 5 say hi as"),
        "every needs a name after 'as' (type help)"
    );
    assert_eq!(
        err("every 5 as hourly"),
        "every needs a verb (tell, say or ring) (type help)"
    );
    assert_eq!(
        err("stop 0"),
        "\"0\" is not a schedule id (a positive whole number)"
    );
    assert_eq!(err("remind NaN x"), format!("\"NaN\" {delay}"));
}

#[test]
fn names_are_short_and_plain() {
    assert_eq!(parse_name("alice\r"), Ok("alice".into()));
    assert_eq!(parse_name("login bob"), Ok("bob".into()));
    assert!(parse_name("").is_err());
    assert!(parse_name("has space").is_err());
    assert!(parse_name(&"x".repeat(25)).is_err());
    assert_eq!(
        parse_name("Help"),
        Err(ProtocolError::CommandName("Help".into())),
        "help at the name prompt is not a name"
    );
}

#[test]
fn cron_takes_a_quoted_expression_or_an_alias_then_a_zone() {
    let say = |arg: &str| Action {
        verb: WorldVerb::Say,
        arg: arg.into(),
    };
    assert_eq!(
        parse("cron \"0 * * * *\" Europe/London say top of the hour as hourly"),
        Ok(Request::Cron {
            expr: "0 * * * *".into(),
            zone: "Europe/London".into(),
            action: say("top of the hour"),
            key: Some("hourly".into()),
            policies: Vec::new(),
        })
    );
    assert_eq!(
        parse("CRON @daily UTC say morning"),
        Ok(Request::Cron {
            expr: "@daily".into(),
            zone: "UTC".into(),
            action: say("morning"),
            key: None,
            policies: Vec::new(),
        })
    );
    // What is inside the quotes is the engine's to check (docs/serve.md §3.8).
    assert!(matches!(
        parse("cron \"61 * * * *\" UTC say x"),
        Ok(Request::Cron { .. })
    ));
    for (line, what) in [
        ("cron", "a cron expression"),
        ("cron 0 * * * * UTC say x", "a cron expression"),
        ("cron \"0 * * * * UTC say x", "closing double quote"),
        ("cron \"0 * * * *\"", "an IANA time zone"),
        ("cron \"0 * * * *\" UTC", "a verb"),
    ] {
        let err = parse(line).unwrap_err().to_string();
        assert!(
            err.starts_with("cron needs") && err.contains(what),
            "{line}: {err}"
        );
    }
    assert_eq!(
        parse_name("cron"),
        Err(ProtocolError::CommandName("cron".into()))
    );
}
