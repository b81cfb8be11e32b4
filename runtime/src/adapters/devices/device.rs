//! What the hub accepts of one device: its token, the tools it may offer, the role they
//! need, which of them need approval, and the values its arguments may take.

use std::fmt;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use sha2::{Digest, Sha256};

/// One device the hub accepts, by its id (`laptop-123`): what it may offer and to whom.
///
/// Its tools are named `<id>__<tool>` at the hub (`laptop-123__make_folder`), in the group
/// `device:<id>` and tagged so: ordinary registry rules (roles, the policy, Cedar's
/// `resource.group`) decide them like any other tool.
///
/// ```
/// use toolgate::devices::Device;
///
/// let laptop = Device::new("laptop-123")
///     .token_sha256("5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8")
///     .permission("staff")
///     .accept(["make_folder", "list_folder", "delete_folder"])
///     .read_only(["list_folder"])
///     .approve(["delete_folder"])
///     .allow_values("path", ["/home/ada/Documents/**"]);
/// # let _ = laptop;
/// ```
#[derive(Clone)]
pub struct Device {
    pub(super) id: String,
    pub(super) token: Option<[u8; 32]>,
    pub(super) permission: String,
    /// Tools that need a higher role than the device's (by the device's names).
    pub(super) tool_permissions: Vec<(String, String)>,
    pub(super) accept: Vec<String>,
    pub(super) approve: Vec<String>,
    pub(super) read_only: Vec<String>,
    pub(super) values: Vec<AllowedValues>,
    /// A setting that could not be taken, reported when the hub is built.
    pub(super) misuse: Option<String>,
}

/// The values one argument of a device's tools may take.
#[derive(Clone)]
pub(super) struct AllowedValues {
    pub(super) argument: String,
    pub(super) patterns: Vec<String>,
    pub(super) set: GlobSet,
}

impl Device {
    /// A device known by `id`: letters, digits, `-` and `_`, at most 32 characters.
    pub fn new(id: impl Into<String>) -> Self {
        Device {
            id: id.into(),
            token: None,
            permission: String::new(),
            tool_permissions: Vec::new(),
            accept: Vec::new(),
            approve: Vec::new(),
            read_only: Vec::new(),
            values: Vec::new(),
            misuse: None,
        }
    }

    /// The device's token, of which only its SHA-256 digest is kept. At least
    /// [`MIN_TOKEN_LENGTH`](Self::MIN_TOKEN_LENGTH) characters: it is all that stands
    /// between a stranger and the device's place at the hub (`toolgate devices token` makes
    /// one of 64).
    pub fn token(mut self, token: impl AsRef<str>) -> Self {
        let token = token.as_ref();
        if token.chars().count() < Self::MIN_TOKEN_LENGTH {
            self.misuse = Some(format!(
                "its token has {} characters; a device token has at least {} (`toolgate devices token` makes one)",
                token.chars().count(),
                Self::MIN_TOKEN_LENGTH
            ));
        }
        self.token = Some(Sha256::digest(token.as_bytes()).into());
        self
    }

    /// The shortest token [`token`](Self::token) takes.
    pub const MIN_TOKEN_LENGTH: usize = 16;

    /// The SHA-256 digest of the device's token, in hex (what a config file holds, so that
    /// the token itself is on the device only).
    pub fn token_sha256(mut self, hex: &str) -> Self {
        match digest_of(hex) {
            Some(digest) => self.token = Some(digest),
            None => {
                self.misuse = Some(format!(
                    "`token_sha256` must be 64 hex digits (the SHA-256 of the token, e.g. from `printf %s \"$TOKEN\" | sha256sum`), not {} characters",
                    hex.len()
                ))
            }
        }
        self
    }

    /// The role a caller needs to see and call the device's tools (required).
    pub fn permission(mut self, role: impl Into<String>) -> Self {
        self.permission = role.into();
        self
    }

    /// A higher role for one accepted tool than the device's [`permission`](Self::permission)
    /// (`delete_folder` for admins only, the rest for staff).
    pub fn tool_permission(mut self, tool: impl Into<String>, role: impl Into<String>) -> Self {
        self.tool_permissions.push((tool.into(), role.into()));
        self
    }

    /// The role a caller needs for the device's tool `tool`.
    pub(super) fn permission_of(&self, tool: &str) -> &str {
        self.tool_permissions
            .iter()
            .find(|(name, _)| name == tool)
            .map_or(self.permission.as_str(), |(_, role)| role.as_str())
    }

    /// The device's tools the hub offers (by the device's names); anything else it
    /// announces is left out.
    pub fn accept<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.accept.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Accepted tools whose every call a person approves at the hub first, whatever the
    /// device says of them and whatever the policy's mode.
    pub fn approve<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.approve.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Accepted tools the hub vouches only read: under the default policy they run without
    /// approval. A device's own word that a tool is read-only or harmless is not taken: the
    /// other tools count as destructive, and the `prompt` policy asks a person first.
    pub fn read_only<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.read_only.extend(tools.into_iter().map(Into::into));
        self
    }

    /// The values the argument `argument` of any of the device's tools may take: glob
    /// patterns (`/home/ada/Documents/**`, `firefox`), where `*` stays within one part of a
    /// path and `**` crosses parts. A call whose `argument` (a string, or
    /// each string of a list) matches none is refused at the hub; so is a path with a `..`
    /// part, which no pattern admits, and any value that is not text or a list of texts.
    pub fn allow_values<I, S>(mut self, argument: impl Into<String>, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let argument = argument.into();
        let patterns: Vec<String> = patterns.into_iter().map(Into::into).collect();
        let mut set = GlobSetBuilder::new();
        for pattern in &patterns {
            // `*` stays within one part of a path; `**` crosses them.
            match GlobBuilder::new(pattern).literal_separator(true).build() {
                Ok(glob) => {
                    set.add(glob);
                }
                Err(error) => {
                    self.misuse =
                        Some(format!("the pattern `{pattern}` for `{argument}`: {error}"));
                }
            }
        }
        match set.build() {
            Ok(set) => self.values.push(AllowedValues {
                argument,
                patterns,
                set,
            }),
            Err(error) => self.misuse = Some(format!("the patterns for `{argument}`: {error}")),
        }
        self
    }

    /// Checks the settings that do not depend on the registry: the id, the token, the
    /// patterns, and that the tools named for approval or as read-only are accepted. (The
    /// permission is checked against the roles when the hub's routes are made.)
    pub fn check(&self) -> Result<(), String> {
        match self.problem(None) {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// What is wrong with the device's settings, if anything (its permission too, given the
    /// roles).
    pub(super) fn problem(&self, roles: Option<&crate::Roles>) -> Option<String> {
        let valid_id = !self.id.is_empty()
            && self.id.len() <= 32
            && self
                .id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid_id {
            return Some("its id must be 1 to 32 letters, digits, `-` or `_`".into());
        }
        if let Some(misuse) = &self.misuse {
            return Some(misuse.clone());
        }
        if self.token.is_none() {
            return Some("it has no token: give `.token(..)` or `.token_sha256(..)`".into());
        }
        if let Some(problem) = roles.and_then(|roles| self.role_problem(roles)) {
            return Some(problem);
        }
        let permitted: Vec<String> = self
            .tool_permissions
            .iter()
            .map(|(tool, _)| tool.clone())
            .collect();
        let lists = [
            ("needs approval", &self.approve),
            ("is read-only", &self.read_only),
            ("has a permission of its own", &permitted),
        ];
        for (what, list) in lists {
            if let Some(tool) = list.iter().find(|tool| !self.accept.contains(tool)) {
                return Some(format!(
                    "`{tool}` {what} but is not one of the device's accepted tools; accept it too"
                ));
            }
        }
        if let Some(tool) = self
            .approve
            .iter()
            .find(|tool| self.read_only.contains(tool))
        {
            return Some(format!(
                "`{tool}` cannot both need approval and be read-only"
            ));
        }
        None
    }
}

impl Device {
    /// What is wrong with the roles the device's settings name, if anything: each must be
    /// one of `roles`, and a tool's own at or above the device's.
    fn role_problem(&self, roles: &crate::Roles) -> Option<String> {
        let Some(base) = roles.rank(&self.permission) else {
            return Some(format!(
                "its permission `{}` is not one of the roles {:?}",
                self.permission,
                roles.names()
            ));
        };
        for (tool, role) in &self.tool_permissions {
            match roles.rank(role) {
                None => {
                    return Some(format!(
                        "`{tool}`'s permission `{role}` is not one of the roles {:?}",
                        roles.names()
                    ));
                }
                Some(rank) if rank < base => {
                    return Some(format!(
                        "`{tool}`'s permission `{role}` is below the device's `{}`: a tool's own permission can only raise it",
                        self.permission
                    ));
                }
                Some(_) => {}
            }
        }
        None
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token's digest is left out: it is what an attacker would try tokens against.
        f.debug_struct("Device")
            .field("id", &self.id)
            .field("permission", &self.permission)
            .field("accept", &self.accept)
            .field("approve", &self.approve)
            .field("read_only", &self.read_only)
            .finish_non_exhaustive()
    }
}

impl AllowedValues {
    /// Whether `value` is one the argument may take.
    pub(super) fn admits(&self, value: &str) -> bool {
        let climbs = value.split(['/', '\\']).any(|part| part == "..");
        !climbs && !value.contains('\0') && self.set.is_match(value)
    }
}

/// 32 bytes from 64 hex digits.
fn digest_of(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.trim();
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut digest = [0u8; 32];
    for (index, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[index * 2..index * 2 + 2], 16).ok()?;
    }
    Some(digest)
}
