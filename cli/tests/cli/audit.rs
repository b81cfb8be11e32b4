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
