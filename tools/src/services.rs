//! Services the application watches: `check_service_health` over configured HTTP or TCP
//! endpoints, and `restart_service` through a configured command per service. The model
//! names a service; addresses and commands come only from the application.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use toolgate::prelude::*;

use crate::programs::{SAFE_PATH, locate};

/// Most bytes of a restart command's output kept.
const OUTPUT_TAIL: usize = 2000;

/// How a service's health is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealthCheck {
    /// `GET url` answers with `expect_status` (default: any 2xx).
    Http {
        /// The address.
        url: String,
        /// The status that means healthy.
        expect_status: Option<u16>,
    },
    /// A TCP connection to `address` (`host:port`) opens.
    Tcp {
        /// The address.
        address: String,
    },
}

/// One service: its check, and how to restart it.
#[derive(Debug, Clone)]
struct Service {
    check: HealthCheck,
    restart: Option<(PathBuf, Vec<String>)>,
}

/// The services, by name.
#[derive(Debug, Clone)]
pub struct ServicesConfig {
    services: BTreeMap<String, Service>,
    /// Time limit of a health check (default 5 s).
    pub check_timeout: Duration,
    /// Time limit of a restart command (default 60 s); it is killed after it.
    pub restart_timeout: Duration,
}

impl Default for ServicesConfig {
    fn default() -> Self {
        ServicesConfig::new()
    }
}

impl ServicesConfig {
    /// No services yet.
    pub fn new() -> Self {
        ServicesConfig {
            services: BTreeMap::new(),
            check_timeout: Duration::from_secs(5),
            restart_timeout: Duration::from_secs(60),
        }
    }

    /// Adds a service with its health check.
    pub fn service(mut self, name: impl Into<String>, check: HealthCheck) -> Self {
        self.services.insert(
            name.into(),
            Service {
                check,
                restart: None,
            },
        );
        self
    }

    /// How `name` is restarted: a program (an absolute path, or a name on
    /// `/usr/local/bin:/usr/bin:/bin`) and its fixed arguments, started without a shell.
    /// Panics if `name` was not added first (a mistake in the application's setup).
    pub fn restart_with<I, S>(mut self, name: &str, program: impl Into<PathBuf>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let service = self
            .services
            .get_mut(name)
            .unwrap_or_else(|| panic!("add the service `{name}` before its restart command"));
        service.restart = Some((program.into(), args.into_iter().map(Into::into).collect()));
        self
    }

    fn get(&self, name: &str) -> Result<&Service, ToolError> {
        self.services.get(name).ok_or_else(|| {
            let names: Vec<&str> = self.services.keys().map(String::as_str).collect();
            ToolError::new(
                "unknown_service",
                format!(
                    "`{name}` is not a service here; the services are {}",
                    names.join(", ")
                ),
            )
        })
    }
}

/// Check whether a service is up: its status, how long it took to answer, and why it is
/// down if it is.
#[tool(manual, group = "services", read_only, idempotent)]
pub async fn check_service_health(
    /// The service's name.
    service: String,
    #[ctx] config: State<ServicesConfig>,
) -> Result<Value, ToolError> {
    let checked = config.get(&service)?;
    Ok(health(&service, &checked.check, config.check_timeout).await)
}

async fn health(name: &str, check: &HealthCheck, limit: Duration) -> Value {
    let started = Instant::now();
    let outcome = tokio::time::timeout(limit, probe(check)).await;
    let latency_ms = (started.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0;
    let (up, reason, http_status) = match outcome {
        Ok(Ok(status)) => (true, None, status),
        Ok(Err((reason, status))) => (false, Some(reason), status),
        Err(_) => (
            false,
            Some(format!("no answer within {} s", limit.as_secs_f64())),
            None,
        ),
    };
    json!({
        "service": name,
        "status": if up { "up" } else { "down" },
        "latency_ms": latency_ms,
        "reason": reason,
        "http_status": http_status,
    })
}

/// `Ok(http status)` when healthy, `Err((reason, http status))` when not.
async fn probe(check: &HealthCheck) -> Result<Option<u16>, (String, Option<u16>)> {
    match check {
        HealthCheck::Tcp { address } => tokio::net::TcpStream::connect(address.as_str())
            .await
            .map(|_| None)
            .map_err(|error| (format!("connecting to {address} failed: {error}"), None)),
        HealthCheck::Http { url, expect_status } => {
            let client = reqwest::Client::builder()
                .no_proxy()
                .build()
                .map_err(|error| (error.to_string(), None))?;
            let response = client
                .get(url)
                .send()
                .await
                .map_err(|error| (format!("{url} could not be reached: {error}"), None))?;
            let status = response.status().as_u16();
            let healthy = match expect_status {
                Some(expected) => status == *expected,
                None => response.status().is_success(),
            };
            if healthy {
                Ok(Some(status))
            } else {
                Err((
                    format!("{url} answered {}", response.status()),
                    Some(status),
                ))
            }
        }
    }
}

/// Restart a service with the command the application configured for it, then check its
/// health. Interrupts whatever the service is doing.
#[tool(manual, group = "services", risk = "high", destructive)]
pub async fn restart_service(
    /// The service's name.
    service: String,
    #[ctx] config: State<ServicesConfig>,
) -> Result<Value, ToolError> {
    let found = config.get(&service)?;
    let Some((program, args)) = &found.restart else {
        return Err(ToolError::new(
            "not_supported",
            format!(
                "`{service}` cannot be restarted here: no restart command is configured for it"
            ),
        ));
    };
    let executable = if program.is_absolute() {
        program.clone()
    } else {
        locate(&program.to_string_lossy()).ok_or_else(|| {
            ToolError::execution(format!(
                "the restart command `{}` is not installed here",
                program.display()
            ))
        })?
    };
    let mut child = tokio::process::Command::new(&executable)
        .args(args)
        .env_clear()
        .env("PATH", SAFE_PATH)
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| {
            ToolError::execution(format!("the restart command could not be started: {error}"))
        })?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let finished = async {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        if let Some(stream) = stdout.as_mut() {
            let _ = stream.read_to_end(&mut out).await;
        }
        if let Some(stream) = stderr.as_mut() {
            let _ = stream.read_to_end(&mut err).await;
        }
        (child.wait().await, out, err)
    };
    let Ok((status, out, err)) = tokio::time::timeout(config.restart_timeout, finished).await
    else {
        return Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "restarting `{service}` took over {} s and was stopped",
                config.restart_timeout.as_secs_f64()
            ),
        ));
    };
    let status = status
        .map_err(|error| ToolError::execution(format!("the restart command failed: {error}")))?;
    let output = crate::quote::ending(&String::from_utf8_lossy(&[out, err].concat()), OUTPUT_TAIL)
        .to_owned();
    if !status.success() {
        return Err(ToolError::execution(format!(
            "restarting `{service}` failed ({status}): {output}"
        ))
        .with_details(json!({"exit_code": status.code()})));
    }
    let after = health(&service, &found.check, config.check_timeout).await;
    Ok(json!({"service": service, "restarted": true, "output": output, "health_after": after}))
}
