//! `toolgate audit verify` on a good and a tampered file, `audit tail`.

use crate::support::{BASE, Project};

#[test]
fn verify_finds_a_tampered_record_and_tail_shows_the_last_ones() {
    let project = Project::new(BASE);
    project.write(
        ".toolgate/tools/say.md",
        "---\nname: say\ndescription: Say a word.\npermission: public\nparameters: {word: string}\ncommand: {program: cat, output: json}\n---\n",
    );
    for word in ["one", "two", "three"] {
        project.run(&["call", "say", "--word", word], "").expect(0);
    }
    let good = project.run(&["audit", "verify"], "").expect(0);
    assert!(
        good.stdout().contains("3 records, chain intact"),
        "{}",
        good.stdout()
    );
    let tail = project
        .run(&["audit", "tail", "-n", "2", "--json"], "")
        .expect(0);
    let records: Vec<serde_json::Value> = tail
        .stdout()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["arguments"]["word"], "three");
    let readable = project
        .run(&["audit", "tail", "-n", "1"], "")
        .expect(0)
        .stdout();
    assert!(
        readable.contains("cli (admin) say allow → ok"),
        "{readable}"
    );

    let log = project.path().join("audit.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text.replacen("\"two\"", "\"TWO\"", 1)).unwrap();
    let tampered = project
        .run(&["audit", "verify", log.to_str().unwrap()], "")
        .expect(1);
    assert!(
        tampered
            .stderr()
            .contains("the record on line 2 was altered"),
        "{}",
        tampered.stderr()
    );

    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&log, format!("{}\n{}\n", lines[0], lines[2])).unwrap();
    let removed = project.run(&["audit", "verify"], "").expect(1);
    assert!(
        removed.stderr().contains("before line 2"),
        "{}",
        removed.stderr()
    );
}

#[test]
fn a_cut_tail_is_found_against_the_last_hash_noted_earlier() {
    let project = Project::new(BASE);
    project.write(
        ".toolgate/tools/say.md",
        "---\nname: say\ndescription: Say a word.\npermission: public\nparameters: {word: string}\ncommand: {program: cat, output: json}\n---\n",
    );
    let last_hash = |ran: &crate::support::Ran| {
        let out = ran.stdout();
        out.split("last hash ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_owned()
    };
    project.run(&["call", "say", "--word", "one"], "").expect(0);
    let noted = last_hash(&project.run(&["audit", "verify"], "").expect(0));
    for word in ["two", "three"] {
        project.run(&["call", "say", "--word", word], "").expect(0);
    }
    let grown = project
        .run(&["audit", "verify", "--expect", &noted], "")
        .expect(0);
    assert!(
        grown.stdout().contains("with 2 records after it"),
        "{}",
        grown.stdout()
    );
    let noted = last_hash(&grown);

    // The last record deleted: the chain alone still verifies; the noted hash catches it.
    let log = project.path().join("audit.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&log, format!("{}\n", kept.join("\n"))).unwrap();
    project.run(&["audit", "verify"], "").expect(0);
    let cut = project
        .run(&["audit", "verify", "--expect", &noted], "")
        .expect(1);
    assert!(
        cut.stderr().contains("records were cut off its end"),
        "{}",
        cut.stderr()
    );
    assert!(cut.stderr().contains("audit.jsonl"), "{}", cut.stderr());
}

#[test]
fn stats_count_the_audit_file_per_tool_and_role() {
    let project = Project::new(&format!(
        "{BASE}\n[callers.ann]\nrole = \"staff\"\ntoken_env = \"ANN_TOKEN\"\n"
    ));
    project.write(
        ".toolgate/tools/say.md",
        "---\nname: say\ndescription: Say a word.\npermission: public\nparameters: {word: string}\ncommand: {program: cat, output: json}\n---\n",
    );
    project.write(
        ".toolgate/tools/idle.md",
        "---\nname: idle\ndescription: Never called.\npermission: public\ncommand: {program: cat, output: json}\n---\n",
    );
    project.write(
        ".toolgate/tools/vault.md",
        "---\nname: vault\ndescription: Staff only.\npermission: staff\ncommand: {program: cat, output: json}\n---\n",
    );
    for word in ["one", "two", "three"] {
        project.run(&["call", "say", "--word", word], "").expect(0);
    }
    project
        .run(&["call", "say", "--word", "x", "--as", "ann"], "")
        .expect(0);
    project.run(&["call", "vault"], "").expect(0);
    project.run(&["call", "say", "--json", "{}"], "").expect(1);
    let report = project.run(&["stats", "--json"], "").expect(0).json();
    assert_eq!(report["calls"], 6);
    let say = &report["by_tool"][0];
    assert_eq!(
        (
            say["name"].as_str(),
            say["calls"].as_u64(),
            say["ok"].as_u64()
        ),
        (Some("say"), Some(5), Some(4))
    );
    assert_eq!(say["errors"]["invalid_arguments"], 1);
    let roles: Vec<(&str, u64)> = report["by_role"]
        .as_array()
        .unwrap()
        .iter()
        .map(|role| {
            (
                role["name"].as_str().unwrap(),
                role["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(roles, [("admin", 5), ("staff", 1)]);
    assert_eq!(report["unused"], serde_json::json!(["idle"]));
    let table = project.run(&["stats"], "").expect(0).stdout();
    assert!(table.starts_with("6 calls in the last 7 days"), "{table}");
    assert!(table.contains("not used: idle"), "{table}");
    // What a role may not see is neither counted nor named for it.
    let public = project
        .run(&["stats", "--json", "--role", "public"], "")
        .expect(0)
        .json();
    assert_eq!(public["calls"], 5);
    assert!(!public.to_string().contains("vault"), "{public}");
}
