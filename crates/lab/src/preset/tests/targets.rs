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
