//! The role hierarchy an application configures.

/// Roles from lowest to highest; a role may do everything the roles below it may.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roles {
    names: Vec<String>,
}

impl Roles {
    /// Roles lowest first, e.g. `["public", "customer", "staff", "admin"]`.
    pub fn new<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Roles {
            names: names.into_iter().map(Into::into).collect(),
        }
    }

    /// The rank of a role (0 is the lowest), or `None` if it is not configured.
    pub fn rank(&self, role: &str) -> Option<usize> {
        self.names.iter().position(|name| name == role)
    }

    /// The role names, lowest first.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Role names that appear more than once.
    pub(crate) fn duplicates(&self) -> Vec<&str> {
        let mut seen = Vec::new();
        let mut duplicates = Vec::new();
        for name in &self.names {
            if seen.contains(&name.as_str()) && !duplicates.contains(&name.as_str()) {
                duplicates.push(name.as_str());
            }
            seen.push(name.as_str());
        }
        duplicates
    }
}
