//! A bot that is a service: each decision is one HTTP POST of the request's JSON to its
//! URL, answered by a reply's JSON in the body, within the time limit (plain `http://`;
//! put a TLS service behind a local proxy).

use std::time::Duration;

use crate::bot::{Bot, NoReply};
use crate::protocol::{BotFault, Reply, Request};

pub struct HttpBot {
    url: String,
    limit: Duration,
    agent: ureq::Agent,
}

impl HttpBot {
    /// The bot at `url`, answering each decision within `limit`.
    pub fn new(url: &str, limit: Duration) -> HttpBot {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(limit))
            .build()
            .into();
        HttpBot {
            url: url.to_string(),
            limit,
            agent,
        }
    }
}

impl Bot for HttpBot {
    fn decide(&mut self, request: &Request) -> Result<Reply, NoReply> {
        Ok(self.post(request)?)
    }
}

impl HttpBot {
    /// One request posted, and its answer read.
    fn post(&self, request: &Request) -> Result<Reply, BotFault> {
        let body = serde_json::to_string(request).expect("a request serialises");
        let fault = |e: ureq::Error| match e {
            ureq::Error::Timeout(_) => BotFault::TimedOut(self.limit),
            other => BotFault::Transport(format!("POST {}: {other}", self.url)),
        };
        let mut response = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json")
            .send(body.as_str())
            .map_err(fault)?;
        let text = response
            .body_mut()
            .with_config()
            .limit(1 << 16)
            .read_to_string()
            .map_err(fault)?;
        Reply::parse(&text)
    }
}
