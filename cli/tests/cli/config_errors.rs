//! Bad config files: one line naming the file, the line and what is wrong; exit code 2.

use crate::support::{BASE, Project};

#[track_caller]
fn refused(config: &str, line: usize, expected: &str) {
    let project = Project::new(config);
    let ran = project.run(&["tools", "list"], "").expect(2);
    let error = ran.stderr();
    assert_eq!(error.lines().count(), 1, "one line: {error}");
    assert!(
        error.starts_with(&format!("error: ./toolgate.toml:{line}: "))
            || error.contains(&format!("toolgate.toml:{line}: ")),
        "line {line}: {error}"
    );
    assert!(error.contains(expected), "{expected:?} in {error}");
}

#[test]
fn mistakes_name_their_line() {
    let roles = "roles = [\"public\", \"staff\"]\n";
    refused(
        &format!("{roles}polcy = \"auto\"\n"),
        2,
        "unknown field `polcy`",
    );
    refused(
        &format!("{roles}policy = \"sometimes\"\n"),
        2,
        "unknown variant `sometimes`",
    );
    refused(
        &format!("{roles}default_timeout = \"soon\"\n"),
        2,
        "`soon` is not a duration",
    );
    refused(
        &format!("{roles}\n[callers.ann]\nrole = \"boss\"\n"),
        4,
        "\"boss\" is not a role; the roles are \"public\", \"staff\"",
    );
    refused(
        &format!("{roles}\n[rate_limits]\nper_caller = \"60 a minute\"\n"),
        4,
        "write calls per period",
    );
    refused(
        &format!("{roles}\n[web]\nallow_networks = [\"10.0.0.0/33\"]\n"),
        4,
        "is not a network",
    );
    refused(
        &format!("{roles}\n[ready.files]\npermission = \"staff\"\n"),
        4,
        "the files tools need `[sandbox] root`",
    );
    refused(
        &format!("{roles}\n[sandbox]\nroot = \"nowhere\"\n"),
        4,
        "the sandbox",
    );
    refused(
        &format!("{roles}state = \"sqlite:state.db\"\n"),
        2,
        "shared state needs a shared approval key",
    );
    refused(
        &format!("{roles}state = \"redis://x\"\napproval_key_env = \"HOME\"\n"),
        2,
        "is not a store address",
    );
    refused(
        &format!("{roles}\n[ready.web]\npermission = \"public\"\ntools = [\"fetch\"]\n"),
        5,
        "`fetch` is not a tool of this family",
    );
    refused(
        &format!("{roles}\n[rate_limits.tools]\nread_fil = \"5/min\"\n"),
        4,
        "`[rate_limits.tools]` names `read_fil`, which is no tool",
    );
    refused("roles = []\n", 1, "names at least one role");
    refused("roles = [\"a\"\n", 1, "");
}

#[test]
fn a_missing_config_says_what_to_do() {
    let project = Project::new("roles = [\"public\"]\n");
    let ran = project
        .run(&["--config", "elsewhere.toml", "tools", "list"], "")
        .expect(2);
    assert!(
        ran.stderr().contains("no config at `elsewhere.toml`"),
        "{}",
        ran.stderr()
    );
}

#[test]
fn two_callers_sharing_a_token_is_a_mistake_naming_both() {
    let config = "roles = [\"public\", \"staff\"]\n\n[callers.ann]\nrole = \"staff\"\ntoken_env = \"ANN_TOKEN\"\n\n[callers.bob]\nrole = \"public\"\ntoken_env = \"BOB_TOKEN\"\n";
    let project = Project::new(config);
    let mut command = project.command();
    command
        .args(["tools", "list"])
        .env("ANN_TOKEN", "same-secret-42")
        .env("BOB_TOKEN", "same-secret-42");
    let ran = project.run_with(&mut command, "").expect(2);
    let error = ran.stderr();
    assert!(error.contains("toolgate.toml:8: "), "{error}");
    assert!(
        error.contains("callers \"ann\" and \"bob\" have the same bearer token"),
        "{error}"
    );
    assert!(
        !error.contains("same-secret-42"),
        "the token is never shown: {error}"
    );
    // Tokens of their own: no problem.
    let mut command = project.command();
    command
        .args(["tools", "list"])
        .env("ANN_TOKEN", "ann-secret")
        .env("BOB_TOKEN", "bob-secret");
    project.run_with(&mut command, "").expect(0);
}

#[test]
fn a_limit_counts_a_tool_under_every_spelling() {
    // A file tool named with a dot; the limit is written as a provider spells it.
    let project = Project::new(&format!(
        "user_tools = false\n{BASE}\n[rate_limits.tools]\nops_ping = \"1/min\"\n"
    ));
    project.write(
        ".toolgate/tools/ping.md",
        "---\nname: ops.ping\ndescription: Ping.\npermission: public\ncommand: {program: echo, args: [\"pong\"]}\n---\n",
    );
    project.run(&["tools", "list"], "").expect(0);
}

#[test]
fn budget_mistakes_name_their_line_and_the_fix() {
    let roles = "roles = [\"public\", \"staff\"]\n";
    refused(
        &format!("{roles}\n[budgets.per_caller]\ntokens = 1000\n"),
        3,
        "add e.g. `every = \"1day\"`",
    );
    refused(
        &format!("{roles}\n[budgets.per_run]\nevery = \"1h\"\ntokens = 1000\n"),
        3,
        "`every` belongs in `[budgets.per_caller]`",
    );
    refused(
        &format!("{roles}\n[budgets.per_run]\ntokns = 10\n"),
        4,
        "unknown field `tokns`",
    );
    refused(
        &format!("{roles}\n[budgets.per_run]\n"),
        3,
        "sets no ceiling",
    );
    refused(
        &format!("{roles}\n[budgets.per_run]\ncost = -2.0\n"),
        3,
        "write a positive number",
    );
    refused(
        &format!("{roles}\n[budgets.per_run]\ncost = 1.0\n"),
        3,
        "add `price = {input = 0.15, output = 0.60}`",
    );
}

#[test]
fn device_mistakes_name_their_line() {
    let roles = "roles = [\"public\", \"staff\"]\n";
    let device = |keys: &str| format!("{roles}\n[devices.laptop]\n{keys}");
    let digest = format!("token_sha256 = \"{}\"\n", "ab".repeat(32));
    refused(
        &device(&format!("{digest}permission = \"boss\"\ntools = [\"a\"]\n")),
        5,
        "\"boss\" is not a role",
    );
    refused(
        &device("permission = \"staff\"\ntools = [\"a\"]\n"),
        3,
        "give the device's token as `token_env",
    );
    refused(
        &device("token_sha256 = \"abc\"\npermission = \"staff\"\ntools = [\"a\"]\n"),
        4,
        "must be 64 hex digits",
    );
    refused(
        &device("token_env = \"NO_SUCH_DEVICE_TOKEN\"\npermission = \"staff\"\ntools = [\"a\"]\n"),
        4,
        "`NO_SUCH_DEVICE_TOKEN` (the device's token) is not set",
    );
    refused(
        &device(&format!(
            "{digest}permission = \"staff\"\ntools = [\"a\"]\napprove = [\"b\"]\n"
        )),
        3,
        "`b` needs approval but is not one of the device's accepted tools",
    );
    refused(
        &device(&format!(
            "{digest}permission = \"staff\"\ntools = [\"a\"]\npermissions = {{a = \"public\"}}\n"
        )),
        7,
        "`a` needs \"public\", below the device's \"staff\"",
    );
    refused(
        &device(&format!(
            "{digest}permission = \"staff\"\ntools = [\"a\"]\npermissions = {{a = \"boss\"}}\n"
        )),
        7,
        "\"boss\" is not a role",
    );
    refused(
        &device(&format!("{digest}permission = \"staff\"\ntool = [\"a\"]\n")),
        6,
        "unknown field `tool`",
    );
    refused(
        &device(&format!(
            "{digest}permission = \"staff\"\ntools = [\"a\"]\nallow = {{path = [\"[\"]}}\n"
        )),
        3,
        "the pattern `[` for `path`",
    );
}
