//! The manifests of the checkout's runtime folders, and bad ones.

use super::*;

#[test]
fn every_runtime_folder_has_a_valid_manifest() {
    let root = find_root().unwrap();
    let names = available(&root);
    assert!(names.contains(&"jvm".to_string()), "{names:?}");
    for name in names {
        let m = Manifest::load_from(&root, &Runtime::named(&name).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.name, name);
        assert!(!m.models.is_empty(), "{name}");
        for (model, entry) in &m.models {
            let kind: ModelKind = model.parse().unwrap();
            let p = m.effective(kind, &ModelParams::default(), 2);
            for k in entry.defaults.keys() {
                let def = iolab_model::knob::knob(k).unwrap();
                assert!((def.get)(&p).is_some_and(|v| v >= 1), "{name} {model} {k}");
            }
            // Every knob it reads or defaults is named, valued and unset.
            let named = m.knobs(kind, &ModelParams::default(), 2);
            for k in entry.knobs.iter().chain(entry.defaults.keys()) {
                let o = named.get(k).unwrap_or_else(|| panic!("{name} {model} {k}"));
                assert!(!o.set && !o.setting.is_empty() && !o.default.is_empty());
            }
        }
    }
}

#[test]
fn kind_is_one_name_or_a_list() {
    let root = find_root().unwrap();
    let go = Manifest::load_from(&root, &Runtime::named("go").unwrap()).unwrap();
    assert!(go.runs(RuntimeKind::Http) && go.runs(RuntimeKind::Batch));
    let scala = Manifest::load_from(&root, &Runtime::named("scala").unwrap()).unwrap();
    assert!(!scala.runs(RuntimeKind::Http) && scala.runs(RuntimeKind::Batch));
    let text = "name = 'x'\nabout = 'x'\nstart = ['./s']\nbackends = []\n[models]\n";
    let plain: Manifest = toml::from_str(text).unwrap();
    assert_eq!(plain.kinds, vec![RuntimeKind::Http]);
    let e = toml::from_str::<Manifest>(&format!("kind = []\n{text}")).unwrap_err();
    assert!(e.to_string().contains("name what it runs"), "{e}");
}

#[test]
fn a_knob_or_option_the_runtime_lacks_is_named() {
    let m = Manifest::load(&Runtime::named("jvm").unwrap()).unwrap();
    let p = ModelParams {
        threads: Some(2),
        ..Default::default()
    };
    let e = m
        .check(ModelKind::LoopAsync, &p, &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("threads does not apply to jvm model 'loop-async'"),
        "{e}"
    );
    let e = m
        .check(ModelKind::ThreadPerRequest, &ModelParams::default(), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("has no jvm target"), "{e}");
    let e = m
        .check(
            ModelKind::LoopAsync,
            &ModelParams::default(),
            &["synchronized".into()],
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("synchronized does not apply") && e.contains("virtual"),
        "{e}"
    );
    assert!(m
        .check(
            ModelKind::Virtual,
            &ModelParams::default(),
            &["synchronized".into()]
        )
        .is_ok());
    let e = m.check_backend(BackendKind::Mc).map(|_| ());
    assert!(e.is_ok());
}

#[test]
fn held_lists_the_routes_served_and_a_kind_not_listed_is_refused_in_one_line() {
    let text = "name = 'x'\nabout = 'x'\nstart = ['./s']\nbackends = []\n[models]\n";
    let none: Manifest = toml::from_str(text).unwrap();
    let e = none.check_held(HeldKind::Ws).unwrap_err().to_string();
    assert_eq!(e.lines().count(), 1);
    assert!(
        e.starts_with("runtime x does not serve held connections of kind 'ws' (GET /ws; its runtime.toml says held = [])"),
        "{e}"
    );
    let ws: Manifest = toml::from_str(&format!("held = ['ws']\n{text}")).unwrap();
    assert!(ws.check_held(HeldKind::Ws).is_ok());
    assert!(ws
        .check_held(HeldKind::Sse)
        .unwrap_err()
        .to_string()
        .contains("'sse' (GET /events"));
    let e = toml::from_str::<Manifest>(&format!("held = ['grpc']\n{text}"))
        .unwrap()
        .validate()
        .unwrap_err();
    assert!(e.contains("held lists the contract's routes"), "{e}");
}
