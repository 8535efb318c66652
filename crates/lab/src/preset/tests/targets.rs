//! Targets other than a built-in model: custom commands, labels, runtimes.

use iolab_model::experiment::Work;

use super::*;

#[test]
fn custom_commands_and_labels() {
    let text = format!(
        "{BASE}\n[[targets]]\nmodel = \"pool\"\nlabel = \"tomcat\"\nruntime = \"jvm\"\ncommand = [\"java\", \"-jar\", \"t.jar\", \"--port={{port}}\"]\n"
    );
    let p = plan(&text);
    assert_eq!(p.runs[1].name, "tomcat");
    assert_eq!(p.runs[1].coordinates["target"], "tomcat");
    let Work::Http(w) = &p.runs[1].work else {
        panic!()
    };
    assert_eq!(w.command.as_ref().unwrap()[3], "--port={port}");
    // runtime = "jvm" without a command: the runner starts runtimes/jvm.
    let p = plan(&format!(
        "{BASE}\n[[targets]]\nmodel = \"virtual\"\nruntime = \"jvm\"\nsynchronized = [false, true]\n"
    ));
    assert_eq!(p.runs[2].name, "virtual-synchronized=true");
    assert_eq!(p.runs[2].coordinates["synchronized"], true);
    let Work::Http(w) = &p.runs[2].work else {
        panic!()
    };
    assert!(w.command.is_none());
    let e = err(&format!(
        "{BASE}\n[[targets]]\nmodel = \"thread-per-request\"\nruntime = \"jvm\"\n"
    ));
    assert!(
        e.contains("field 'targets[1].model'") && e.contains("has no jvm target"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}\n[[targets]]\nmodel = \"loop-async\"\nruntime = \"jvm\"\nsynchronized = true\n"
    ));
    assert!(e.contains("synchronized does not apply"), "{e}");
}

/// 4,000 `[[targets]]` tables, each labelled `t{i}`; `last` labels the last.
fn many_targets(last: &str) -> String {
    let mut text = BASE.replace("[[targets]]\nmodel = \"pool\"\nthreads = 20\n", "");
    for i in 0..3_999 {
        text.push_str(&format!(
            "[[targets]]\nmodel = \"pool\"\nlabel = \"t{i}\"\n"
        ));
    }
    text.push_str(&format!(
        "[[targets]]\nmodel = \"pool\"\nlabel = \"{last}\"\n"
    ));
    text
}

/// Issue 30, finding 15: whether an axis sweeps was asked per run and per
/// axis by walking every target again, so 4,000 targets took 24 s to check
/// (a 1 MiB preset about 15 minutes). The swept axes are now collected once
/// (`swept_names`); this test finishing at all is the hang guard, it asserts
/// no time.
#[test]
fn r30_15_thousands_of_targets_are_checked_in_one_pass() {
    let p = plan(&many_targets("t3999"));
    assert_eq!(p.runs.len(), 4_000);
    assert_eq!(p.runs[3_999].name, "t3999");
    let e = err(&many_targets("t0"));
    assert!(e.contains("two runs would both be named 't0'"), "{e}");
}

#[test]
fn r30_15_swept_names_are_collected_from_every_target_and_the_load() {
    let text = format!(
        "{BASE}\n[[targets]]\nmodel = \"pool\"\nlabel = \"b\"\nthreads = [1, 2]\n[[targets]]\nmodel = [\"pool\", \"loop-async\"]\n"
    )
    .replace("rate = 200", "rate = [100, 200]");
    let file: crate::preset::file::PresetFile = toml::from_str(&text).unwrap();
    let common = expand::common_axes(&file).unwrap();
    let mut names: Vec<String> = expand::swept_names(&file.targets, &common)
        .into_iter()
        .collect();
    names.sort();
    // `model` sweeps in the last target; it is named by the model itself.
    assert_eq!(names, ["model", "rate", "threads"]);
    // Every run of a preset that sweeps threads anywhere names it.
    let p = plan(&text);
    assert_eq!(p.runs[0].name, "pool-threads=20-rate=100");
}
