//! `policies`, `policy_claims`, `policy_utc_offset`: the Cedar rules of a config (see
//! `toolgate::cedar`). Their own problems name the rule's file and line; these keys' name
//! the config's.

use toolgate::RegistryBuilder;
use toolgate::cedar::CedarPolicies;

use super::Config;
use toolgate_tools::Problem;

impl Config {
    /// The builder, deciding with the config's rules if it names any.
    pub(super) fn rules(&self, builder: RegistryBuilder) -> Result<RegistryBuilder, Problem> {
        let Some(path) = &self.file.policies else {
            if let Some((name, declared)) = self.file.policy_claims.iter().next() {
                return Err(self.problem_at(
                    declared.span(),
                    format!(
                        "`policy_claims` declares `{name}`, but no `policies` are set to read it"
                    ),
                ));
            }
            return Ok(builder);
        };
        let resolved = self.resolve(path.get_ref());
        // Tool files and imported servers are registered after the build.
        let rules = CedarPolicies::new().tools_registered_later();
        let mut policies = match resolved.is_dir() {
            true => rules.folder(&resolved),
            false if resolved.is_file() => rules.file(&resolved),
            false => {
                let shown = resolved.display();
                return Err(self.problem_at(path.span(), format!("`policies` names `{shown}`, which is neither a folder of .cedar files nor a file")));
            }
        };
        for (name, declared) in &self.file.policy_claims {
            policies = policies.claim(name, declared.get_ref());
        }
        if let Some(offset) = &self.file.policy_utc_offset {
            let minutes = utc_offset(offset.get_ref()).ok_or_else(|| {
                self.problem_at(offset.span(), format!("`{}` is not an offset from UTC; write it as \"+01:00\", \"-05:30\" or \"Z\"", offset.get_ref()))
            })?;
            policies = policies.utc_offset_minutes(minutes);
        }
        Ok(builder.cedar(policies))
    }
}

/// `+HH:MM`, `-HH:MM` or `Z`, in minutes.
fn utc_offset(text: &str) -> Option<i32> {
    if text == "Z" {
        return Some(0);
    }
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let (hours, minutes) = rest.split_once(':')?;
    let (hours, minutes): (i32, i32) = (hours.parse().ok()?, minutes.parse().ok()?);
    (hours <= 14 && minutes < 60 && hours.to_string().len() <= 2)
        .then_some(sign * (hours * 60 + minutes))
}

#[cfg(test)]
mod tests {
    use super::utc_offset;

    #[test]
    fn offsets_are_read_as_iso_8601_writes_them() {
        assert_eq!(utc_offset("Z"), Some(0));
        assert_eq!(utc_offset("+01:00"), Some(60));
        assert_eq!(utc_offset("-05:30"), Some(-330));
        assert_eq!(utc_offset("01:00"), None);
        assert_eq!(utc_offset("+1"), None);
        assert_eq!(utc_offset("+25:00"), None);
    }
}
