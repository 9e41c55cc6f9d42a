//! A bot that is a program: started through `sh -c CMD`, asked one JSON line on its
//! stdin per decision, answering one line on its stdout within the time limit. Its
//! stderr goes to the arena's. A bot that crashes, closes its output or runs past the
//! limit is stopped, and started again for the next game.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use crate::bot::{Bot, NoReply};
use crate::protocol::{BotFault, Reply, Request};

/// The bot program and, while it runs, its process.
pub struct ProcessBot {
    command: String,
    limit: Duration,
    running: Option<Running>,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    /// The lines of its stdout, read by a thread of their own (a pipe has no read with
    /// a deadline).
    lines: Receiver<std::io::Result<String>>,
}

impl ProcessBot {
    /// The bot `command` (a shell command line), answering each decision within `limit`.
    pub fn new(command: &str, limit: Duration) -> ProcessBot {
        ProcessBot {
            command: command.to_string(),
            limit,
            running: None,
        }
    }

    fn start(&mut self) -> Result<&mut Running, BotFault> {
        if self.running.is_none() {
            let mut child = Command::new("sh")
                .arg("-c")
                .arg(&self.command)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| BotFault::Start(format!("sh -c {:?}: {e}", self.command)))?;
            let stdin = child.stdin.take().expect("stdin is piped");
            let stdout = child.stdout.take().expect("stdout is piped");
            let (send, lines) = channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    if send.send(line).is_err() {
                        break;
                    }
                }
            });
            self.running = Some(Running {
                child,
                stdin,
                lines,
            });
        }
        Ok(self.running.as_mut().expect("just started"))
    }

    /// Stops the process, if one runs; how it ended, if it had.
    fn stop(&mut self) -> String {
        match self.running.take() {
            None => String::new(),
            Some(mut running) => {
                let ended = running.child.try_wait().ok().flatten();
                let _ = running.child.kill();
                let status = running.child.wait().ok();
                match ended.or(status) {
                    Some(status) => status.to_string(),
                    None => "no exit status".to_string(),
                }
            }
        }
    }
}

impl Bot for ProcessBot {
    fn decide(&mut self, request: &Request) -> Result<Reply, NoReply> {
        Ok(self.ask(request)?)
    }

    fn reset(&mut self) {
        self.stop();
    }
}

impl ProcessBot {
    /// One request written to the program, and its answer read within the limit.
    fn ask(&mut self, request: &Request) -> Result<Reply, BotFault> {
        let limit = self.limit;
        let line = serde_json::to_string(request).expect("a request serialises");
        let running = self.start()?;
        let sent = writeln!(running.stdin, "{line}").and_then(|()| running.stdin.flush());
        if let Err(e) = sent {
            let how = self.stop();
            return Err(BotFault::Crashed(format!(
                "writing the request: {e} ({how})"
            )));
        }
        match running.lines.recv_timeout(limit) {
            Ok(Ok(answer)) => Reply::parse(&answer),
            Ok(Err(e)) => {
                let how = self.stop();
                Err(BotFault::Crashed(format!(
                    "reading its output: {e} ({how})"
                )))
            }
            Err(RecvTimeoutError::Disconnected) => {
                // its output closed: wait a moment for its exit status
                std::thread::sleep(Duration::from_millis(20));
                Err(BotFault::Crashed(self.stop()))
            }
            Err(RecvTimeoutError::Timeout) => {
                self.stop();
                Err(BotFault::TimedOut(limit))
            }
        }
    }
}

impl Drop for ProcessBot {
    fn drop(&mut self) {
        self.stop();
    }
}
